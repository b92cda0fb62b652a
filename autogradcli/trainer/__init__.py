"""Training runs: the ``Trainer`` loop, callbacks, run folders, progress reporters, resume.

Python users build a ``Trainer`` from objects; the CLI calls ``train_from_config`` / ``resume``.
"""

from .api import resume, train_from_config, trainer_from_experiment
from .callbacks import (
    BUILTIN_CALLBACKS,
    Callback,
    Checkpoint,
    EarlyStopping,
    FunctionCallback,
    GradNormLogger,
    LRLogger,
    NonFiniteGuard,
    NonFiniteLossError,
    callbacks_from_hooks,
    find_nonfinite_layer,
)
from .plot import loss_svg
from .progress import (
    NullReporter,
    PlainReporter,
    Reporter,
    RichReporter,
    make_reporter,
)
from .run_dir import RunDir
from .trainer import CHECKPOINT_FORMAT, RunResult, Trainer, model_text

__all__ = [
    "BUILTIN_CALLBACKS",
    "CHECKPOINT_FORMAT",
    "Callback",
    "Checkpoint",
    "EarlyStopping",
    "FunctionCallback",
    "GradNormLogger",
    "LRLogger",
    "NonFiniteGuard",
    "NonFiniteLossError",
    "NullReporter",
    "PlainReporter",
    "Reporter",
    "RichReporter",
    "RunDir",
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
