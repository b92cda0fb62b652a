"""Utilities on parameters: gradient clipping."""

from .clip_grad import *
