"""Training runs: the ``Trainer`` loop, callbacks, run folders, progress reporters, resume.

Python users build a ``Trainer`` from objects; the CLI calls ``train_from_config`` / ``resume``.
"""

from .api import (
    BUILTIN_CALLBACKS,
    callbacks_from_hooks,
    resume,
    train_from_config,
    trainer_from_experiment,
)
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
