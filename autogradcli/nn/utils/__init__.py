"""Utilities on parameters, models and sequences: gradient clipping, model summaries, and
``rnn`` (PackedSequence, pad/pack/unpack for recurrent layers)."""

from ..._utils.lazy import lazy_attributes
from .clip_grad import *

# the model table is for the CLI and run logs, not a training step (see _utils/lazy.py)
_LAZY = {
    "LayerRow": ".summary:LayerRow",
    "ModelSummary": ".summary:ModelSummary",
    "summarize": ".summary:summarize",
}
__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
