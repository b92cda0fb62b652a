"""Type and range checks for the keyword arguments of built-in layers, losses, optimizers and
schedulers, by argument name (PyTorch names an argument the same wherever it appears).

PyTorch's constructors check little (``nn.Linear(4, 0)`` builds an empty layer, ``Adam(lr=inf)``
trains on NaNs); a config is checked before anything runs, so a value that cannot be meant is
refused at its line. Arguments the table does not name get the check their default's type
implies (a bool default takes only true/false, a float default a finite number).
"""

from __future__ import annotations

import math
from typing import Any

from .checks import BOOL, NONNEG_INT, POS_INT, Check, is_int, is_num

__all__ = ["NO_DEFAULT", "argument_check"]

NO_DEFAULT = object()  # an argument without a default (required)


def _finite(v: Any) -> bool:
    return is_num(v) and math.isfinite(v)


def _ints(pred: Any) -> Any:
    """An int, or a list of ints, each satisfying ``pred``."""
    return lambda v: (
        (is_int(v) and pred(v))
        or (isinstance(v, list) and v != [] and all(is_int(x) and pred(x) for x in v))
    )


POSITIVE_SIZES: Check = ("a positive integer or a list of them", _ints(lambda x: x >= 1))
PADDING: Check = (
    "a non-negative integer, a list of them, 'same' or 'valid'",
    lambda v: v in ("same", "valid") or _ints(lambda x: x >= 0)(v),
)
NONNEG_SIZES: Check = ("a non-negative integer or a list of them", _ints(lambda x: x >= 0))
RATE: Check = ("a finite number >= 0", lambda v: _finite(v) and v >= 0)
POSITIVE: Check = ("a finite number > 0", lambda v: _finite(v) and v > 0)
PROBABILITY: Check = ("a number in [0, 1]", lambda v: _finite(v) and 0 <= v <= 1)
FACTOR: Check = ("a number in (0, 1]", lambda v: _finite(v) and 0 < v <= 1)
BETAS: Check = (
    "a list of two numbers in [0, 1)",
    lambda v: isinstance(v, list) and len(v) == 2 and all(_finite(b) and 0 <= b < 1 for b in v),
)
FINITE: Check = ("a finite number", _finite)
NORM: Check = ("a positive number or .inf", lambda v: is_num(v) and v > 0 and not math.isnan(v))

_RULES: dict[str, Check] = {
    **dict.fromkeys(
        (
            "in_features",
            "out_features",
            "in1_features",
            "in2_features",
            "in_channels",
            "out_channels",
            "num_features",
            "num_channels",
            "num_groups",
            "hidden_size",
            "input_size",
            "num_layers",
            "num_embeddings",
            "embedding_dim",
            "embed_dim",
            "num_heads",
            "nhead",
            "d_model",
            "dim_feedforward",
            "num_encoder_layers",
            "num_decoder_layers",
            "groups",
            "step_size",
            "T_max",
            "T_0",
            "T_mult",
            "total_iters",
            "total_steps",
            "epochs",
            "steps_per_epoch",
            "history_size",
            "max_iter",
        ),
        POS_INT,
    ),
    **dict.fromkeys(("kernel_size", "stride", "dilation", "output_size"), POSITIVE_SIZES),
    "padding": PADDING,
    "output_padding": NONNEG_SIZES,
    "p": PROBABILITY,
    "dropout": PROBABILITY,
    "label_smoothing": PROBABILITY,
    "pct_start": FACTOR,
    **dict.fromkeys(
        (
            "lr",
            "max_lr",
            "base_lr",
            "min_lr",
            "eta_min",
            "initial_accumulator_value",
            "weight_decay",
            "momentum",
            "dampening",
            "lr_decay",
            "momentum_decay",
            "cooldown",
            "threshold",
        ),
        RATE,
    ),
    **dict.fromkeys(("eps", "rho", "alpha", "div_factor", "final_div_factor"), POSITIVE),
    "betas": BETAS,
    "output": ("'sequence' or 'last'", lambda v: v in ("sequence", "last")),
    "gamma": POSITIVE,
    "factor": ("a number in (0, 1)", lambda v: _finite(v) and 0 < v < 1),
    "patience": NONNEG_INT,
    "max_norm": NORM,
    "norm_type": NORM,
    "start_factor": FACTOR,
    "end_factor": ("a number in [0, 1]", lambda v: _finite(v) and 0 <= v <= 1),
}


def argument_check(name: str, default: Any) -> Check | None:
    """The check for a value given to the argument ``name`` (whose default is ``default``, or
    ``NO_DEFAULT``), or None when nothing is known about it."""
    rule = _RULES.get(name)
    if rule is not None:
        return _or_null(rule) if default is None else rule
    if isinstance(default, bool):
        return BOOL
    if isinstance(default, float):
        return FINITE
    return None


def _or_null(check: Check) -> Check:
    """``check`` that also takes null (for arguments whose default is None)."""
    what, pred = check
    return (f"null or {what}", lambda v: v is None or pred(v))
