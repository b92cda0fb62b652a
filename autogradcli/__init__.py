"""autogradcli: a PyTorch-compatible tensor/autograd engine (numpy on CPU, cupy on CUDA) with a
config-driven training CLI, ``agrad``."""

# _startup first: in the agrad process, Ctrl-C while importing is one line, not a traceback
from . import _startup, amp, autograd, nn, ops, optim
from ._utils.lazy import lazy_attributes, star_names
from ._version import __version__
from .amp import autocast
from .autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .autograd.anomaly_mode import (
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_anomaly_enabled,
)
from .autograd.inference_mode import inference_mode, is_inference_mode_enabled
from .backend import Device as device
from .backend.device import get_default_device, set_default_device
from .backend.threads import (
    get_num_interop_threads,
    get_num_threads,
    set_num_interop_threads,
    set_num_threads,
)
from .ops import *
from .tensor.dtype import DType as dtype
from .tensor.dtype import (
    bfloat16,
    cdouble,
    cfloat,
    complex64,
    complex128,
    double,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int8,
    int16,
    int32,
    int64,
    long,
    set_default_dtype,
    short,
    uint8,
)
from .tensor.dtype import (
    bool_ as bool,
)
from .tensor.dtype import float32 as float
from .tensor.dtype import int32 as int
from .tensor.factory import (
    arange,
    as_tensor,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    logspace,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    tensor,
    zeros,
    zeros_like,
)
from .tensor.legacy_types import (
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
    typename,
)
from .tensor.random import get_rng_state, initial_seed, manual_seed, set_rng_state
from .tensor.tensor import Size, Tensor

# loaded on first use: a training step needs none of these (see _utils/lazy.py)
_LAZY = {
    "accelerator": ".accelerator",
    "backends": ".backends",
    "cuda": ".cuda",
    "data": ".data",
    "distributed": ".distributed",
    "distributions": ".distributions",
    "fft": ".fft",
    "futures": ".futures",
    "fx": ".fx",
    "linalg": ".linalg",
    "multiprocessing": ".multiprocessing",
    "serialization": ".serialization",
    "sparse": ".sparse",
    "special": ".special",
    "testing": ".testing",
    "utils": ".utils",
    "Generator": ".data.generator:Generator",
    "load": ".serialization:load",
    "save": ".serialization:save",
}
_LAZY.update(ops.LAZY)  # rarely used functions of ops (ops/lazy_methods.py)
__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)

# as torch.Tensor prints <class 'torch.Tensor'>: the public names, not the defining modules
Tensor.__module__ = Size.__module__ = __name__


def is_tensor(obj: object) -> "builtins.bool":
    return isinstance(obj, Tensor)


def load_run(path: str, checkpoint: str = "best") -> object:
    """The trained model (``nn.Module``, eval mode) of an ``agrad train`` run folder, with the
    weights of ``checkpoints/<checkpoint>`` (``best`` | ``last``). The trainer is imported only
    when this is called."""
    from .trainer.load_run import load_run as _load_run

    return _load_run(path, checkpoint)


# torch's namespace items that answer as PyTorch does without the feature (README: "Porting a
# PyTorch script"): constants, memory formats, dtype limits, print options, jit, compile, hub
from ._constants import *  # noqa: E402
from .deterministic import *  # noqa: E402
from .random import seed  # noqa: E402
from .tensor.printing import get_printoptions, set_printoptions  # noqa: E402

_LAZY.update(
    jit=".jit",
    hub=".hub",
    compiler=".compiler",
    compile=".compiler:compile",
    _dynamo="._dynamo",
    finfo=".tensor.dtype_info:finfo",
    iinfo=".tensor.dtype_info:iinfo",
    get_float32_matmul_precision=".backends.cuda:get_float32_matmul_precision",
    set_float32_matmul_precision=".backends.cuda:set_float32_matmul_precision",
)
# `from autogradcli import *`: the public names, the lazily loaded functions and classes too
__all__ = star_names(globals(), _LAZY)
