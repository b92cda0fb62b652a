"""The issue-21 ops that compute outside ``oracle.check`` (counts, predicates, index results,
random fills) on ``device='cuda'`` backed by the strict cupy stand-in: numpy called on a device
array fails there, and every result must stay on the device with the CPU's values."""

import numpy as np

import autogradcli as ag

CASES = [
    lambda d: ag.isnan(ag.tensor([1.0, float("nan")], device=d)),
    lambda d: ag.isposinf(ag.tensor([1.0, float("inf")], device=d)),
    lambda d: ag.isreal(ag.tensor([1, 2], device=d)),
    lambda d: ag.bincount(ag.tensor([0, 1, 1, 3], device=d)),
    lambda d: ag.bincount(ag.tensor([0, 1], device=d), weights=ag.tensor([0.5, 2.0], device=d)),
    lambda d: ag.histc(ag.tensor([1.0, 2.0, 1.0, 4.0], device=d), bins=4, min=0, max=3),
    lambda d: ag.histogram(ag.tensor([1.0, 2.0, 1.0, 4.0], device=d), bins=3).hist,
    lambda d: ag.bucketize(ag.tensor([1, 5, 9], device=d), ag.tensor([1, 3, 5, 7, 9], device=d)),
    lambda d: ag.searchsorted(
        ag.tensor([[1, 3], [2, 4]], device=d), ag.tensor([[3], [5]], device=d)
    ),
    lambda d: ag.count_nonzero(ag.tensor([[0.0, 1.0], [2.0, 0.0]], device=d), dim=0),
    lambda d: ag.tensor([[0.0, 1.0], [2.0, 0.0]], device=d).nonzero(),
    lambda d: ag.argwhere(ag.tensor(3.0, device=d)),
    lambda d: ag.repeat_interleave(ag.tensor([2, 0, 1], device=d)),
    lambda d: ag.ones(2, 3, device=d).repeat_interleave(ag.tensor([1, 2], device=d), dim=0),
    lambda d: ag.meshgrid(ag.arange(3.0, device=d), ag.arange(2.0, device=d), indexing="xy")[0],
    lambda d: ag.where(ag.tensor([True, False], device=d), 1.5, 0),
    lambda d: ag.nan_to_num(ag.tensor([float("nan"), float("-inf"), 1.0], device=d)),
    lambda d: ag.logical_xor(ag.tensor([1, 0], device=d), ag.tensor([1.0, 1.0], device=d)),
    lambda d: ag.nn.functional.adaptive_max_pool2d(
        ag.arange(20.0, device=d).reshape(1, 4, 5), 2, return_indices=True
    )[1],
    lambda d: ag.nn.functional.avg_pool3d(
        ag.arange(27.0, device=d).reshape(1, 1, 3, 3, 3), 2, padding=1
    ),
    lambda d: ag.round(ag.tensor([1.25, 2.5], device=d), decimals=1),
    lambda d: ag.median(ag.tensor([[3.0, 1.0, 2.0]], device=d), 1).indices,
    lambda d: ag.index_add(
        ag.zeros(3, device=d), 0, ag.tensor([0, 0], device=d), ag.ones(2, device=d)
    ),
    lambda d: ag._foreach_addcdiv(
        [ag.ones(2, device=d)],
        [ag.ones(2, device=d)],
        [ag.ones(2, device=d)],
        ag.tensor([0.5], device=d),
    )[0],
    lambda d: ag.cdist(ag.ones(2, 3, device=d), ag.zeros(1, 3, device=d)),
    lambda d: ag.outer(ag.arange(2.0, device=d), ag.arange(3.0, device=d)).trace(),
]


def test_ops_run_on_the_strict_device(strict_cuda):
    for case in CASES:
        expected = case("cpu").numpy()
        out = case("cuda")
        assert out.device.type == "cuda"
        np.testing.assert_array_equal(ag.backend.to_numpy(out._data), expected)


def test_random_fills_run_on_the_strict_device(strict_cuda):
    x = ag.zeros(100, device="cuda")
    assert x.random_(3).device.type == "cuda"
    assert set(ag.backend.to_numpy(x._data).tolist()) <= {0.0, 1.0, 2.0}
    assert x.bernoulli_(0.5).device.type == "cuda"
    probs = ag.tensor([0.0, 1.0] * 5, device="cuda")
    assert (
        ag.backend.to_numpy(ag.zeros(10, device="cuda").bernoulli_(probs)._data).tolist()
        == [0.0, 1.0] * 5
    )
