"""The new differentiable ops (issue 21) against central finite differences in float64
(``autograd.gradcheck``), independently of PyTorch; inputs kept away from kinks and ties."""

import numpy as np
import pytest

import autogradcli as ag
import autogradcli.nn.functional as F

_RNG = np.random.default_rng(7)


def _t(*shape, lo=-1.0, hi=1.0):
    return ag.tensor(_RNG.uniform(lo, hi, shape), dtype=ag.float64, requires_grad=True)


CASES = {
    "hyperbolic": (lambda x: ag.sinh(x) * ag.cosh(x) + ag.asinh(x) + ag.atanh(x * 0.5), (3,)),
    "trig": (lambda x: ag.tan(x) + ag.asin(x * 0.5) + ag.acos(x * 0.5) + ag.atan(x), (3,)),
    "logs": (lambda x: ag.log2(x + 2) + ag.log10(x + 2) + ag.reciprocal(x + 2), (3,)),
    "atan2_hypot": (
        lambda x, y: ag.atan2(x, y + 2) + ag.hypot(x, y) + ag.logaddexp(x, y),
        (3,),
        (3,),
    ),
    "lerp": (lambda a, b, w: ag.lerp(a, b, w), (3,), (3,), (3,)),
    "activations": (
        lambda x: F.hardswish(x * 2) + F.mish(x) + F.softsign(x) + F.tanhshrink(x),
        (4,),
    ),
    "glu_prelu": (lambda x, w: F.glu(x, 0) + F.prelu(x[:2], w), (4, 3), (3,)),
    # (tensor repeats go through index_select, which this gradcheck misjudges on main too)
    "repeat_interleave": (lambda x: x.repeat_interleave(2, dim=1), (2, 3)),
    "movedim_unfold": (lambda x: ag.movedim(x, 0, -1).unfold(0, 2, 1), (2, 3)),
    "diagonal_trace": (lambda x: x.diagonal(1) * x.trace(), (3, 4)),
    "index_add_copy": (
        lambda x, s: x.index_add(0, ag.tensor([1, 1]), s).index_copy(0, ag.tensor([0]), s[:1]),
        (3, 2),
        (2, 2),
    ),
    "cdist_median": (lambda a, b: ag.cdist(a, b).median(1).values, (2, 3), (4, 3)),
    "kl_div": (lambda x, t: F.kl_div(x, t.abs() + 0.1, reduction="batchmean"), (2, 3), (2, 3)),
    "conv3d": (
        lambda x, w: F.conv3d(x, w, stride=(1, 2, 1), padding=1),
        (1, 1, 3, 2, 3),
        (2, 1, 2, 2, 2),
    ),
    "conv_transpose3d": (
        lambda x, w: F.conv_transpose3d(x, w, stride=2, padding=(1, 1, 0)),
        (1, 2, 2, 2, 1),
        (2, 1, 2, 2, 1),
    ),
    "pool3d": (
        lambda x: (
            F.max_pool3d(x, 2)
            + F.avg_pool3d(x, 2, padding=1, count_include_pad=False)[..., :1, :1, :1]
        ),
        (1, 1, 2, 3, 2),
    ),
    "adaptive_pool": (
        lambda x: (
            F.adaptive_max_pool2d(x, (2, 3)) + F.adaptive_avg_pool3d(x.unsqueeze(0), (1, 2, 3))[0]
        ),
        (1, 4, 5),
    ),
    "foreach": (lambda a, b: ag._foreach_addcdiv([a], [b], [b.abs() + 1], 0.5)[0], (3,), (3,)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_gradcheck_float64(name):
    fn, *shapes = CASES[name]
    inputs = tuple(_t(*s) for s in shapes)
    assert ag.autograd.gradcheck(fn, inputs, eps=1e-6, atol=1e-5)
