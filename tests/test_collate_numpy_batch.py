"""default_collate of numpy samples stacks the batch once and converts it once (issue 19: the
wait for each batch outside the training step); every case is torch's default_collate's batch:
dtypes, layouts, mixed dtypes, and the error for unequal shapes."""

from __future__ import annotations

import numpy as np
import pytest

from autogradcli.data import default_collate


def _batches():
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64, np.int32, np.int64, np.uint8, np.int16, np.bool_):
        yield [(rng.standard_normal((3, 2)) * 50).astype(dtype) for _ in range(4)]
    base = rng.standard_normal((4, 6)).astype(np.float32)
    yield [base[:, ::2], base[:, 1::2]]  # strided views
    yield [np.arange(3, dtype=np.int16), np.arange(3, dtype=np.int64)]  # mixed: promoted


@pytest.mark.parametrize("batch", list(_batches()), ids=lambda b: f"{b[0].dtype}-{b[-1].dtype}")
def test_numpy_batch_is_torchs(batch):
    torch = pytest.importorskip("torch")
    ours = default_collate(batch)
    theirs = torch.utils.data.default_collate(batch)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert np.array_equal(ours.numpy(), theirs.numpy())


def test_unequal_shapes_are_torchs_error():
    torch = pytest.importorskip("torch")
    batch = [
        np.zeros((2, 3), np.float32),
        np.zeros((2, 3), np.float32),
        np.zeros((3, 2), np.float32),
    ]
    with pytest.raises(RuntimeError) as ours:
        default_collate(batch)
    with pytest.raises(RuntimeError) as theirs:
        torch.utils.data.default_collate(batch)
    assert str(ours.value) == str(theirs.value)
