"""Training runs: the ``Trainer`` loop, callbacks, run folders, progress reporters, resume.

Python users build a ``Trainer`` from objects; the CLI calls ``train_from_config`` / ``resume``.
"""

from .._utils.lazy import lazy_attributes
from .callbacks import (
    EVENTS,
    Callback,
    Checkpoint,
    EarlyStopping,
    FunctionCallback,
    GradNormLogger,
    LRLogger,
    ModuleHooks,
)
from .guards import NonFiniteGuard, NonFiniteLossError, find_nonfinite_layer
from .plot import loss_svg
from .progress import (
    NullReporter,
    PlainReporter,
    Reporter,
    RichReporter,
    make_reporter,
)
from .run_dir import RunDir
from .run_logger import RunLogger, model_text
from .state import CHECKPOINT_FORMAT
from .trainer import RunResult, Trainer

# The config glue imports the config package, which reads this package's registries (metrics,
# callbacks): loaded on first use, so importing either package first works.
_LAZY = {
    "BUILTIN_CALLBACKS": ".builtin:BUILTIN_CALLBACKS",
    "callbacks_from_hooks": ".api:callbacks_from_hooks",
    "resume": ".api:resume",
    "train_from_config": ".api:train_from_config",
    "trainer_from_experiment": ".api:trainer_from_experiment",
}
__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)

__all__ = [
    "BUILTIN_CALLBACKS",
    "CHECKPOINT_FORMAT",
    "EVENTS",
    "Callback",
    "Checkpoint",
    "EarlyStopping",
    "FunctionCallback",
    "GradNormLogger",
    "LRLogger",
    "ModuleHooks",
    "NonFiniteGuard",
    "NonFiniteLossError",
    "NullReporter",
    "PlainReporter",
    "Reporter",
    "RichReporter",
    "RunDir",
    "RunLogger",
    "RunResult",
    "Trainer",
    "callbacks_from_hooks",
    "find_nonfinite_layer",
    "loss_svg",
    "make_reporter",
    "model_text",
    "resume",
    "train_from_config",
    "trainer_from_experiment",
]
