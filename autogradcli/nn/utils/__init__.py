"""Utilities on parameters and models: gradient clipping, model summaries."""

from .clip_grad import *
from .summary import LayerRow, ModelSummary, summarize
