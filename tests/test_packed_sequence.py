"""``nn.utils.rnn`` (PackedSequence, pad/pack/unpack) against ``torch.nn.utils.rnn`` on the same
data: values, gradients, batch sizes and sort permutations, dtypes, errors and their messages, and
the strict cupy stand-in."""

import numpy as np
import pytest
from lazy_torch import torch

import autogradcli as ag
import autogradcli.nn as nn
from autogradcli.nn.utils import rnn as R


def _utils(lib):
    return R if lib is ag else torch.nn.utils.rnn


def _np(t):
    return ag.backend.to_numpy(t.detach()._data) if isinstance(t, ag.Tensor) else t.detach().numpy()


def _weighted_grad(lib, out, x, seed):
    w = np.random.default_rng(seed).standard_normal(tuple(out.shape))
    (out * lib.tensor(w)).sum().backward()
    return x.grad.numpy()


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize(
    "lengths, enforce_sorted", [([4, 2, 2], True), ([2, 4, 1], False), ([1, 1, 4], False)]
)
def test_pack_then_pad_matches_torch(batch_first, lengths, enforce_sorted):
    x = np.random.default_rng(0).standard_normal((3, 4, 2) if batch_first else (4, 3, 2))
    got = []
    for lib in (ag, torch):
        u = _utils(lib)
        xt = lib.tensor(x, requires_grad=True)
        packed = u.pack_padded_sequence(xt, lengths, batch_first, enforce_sorted)
        padded, lens = u.pad_packed_sequence(packed, not batch_first, -2.0, total_length=5)
        got.append(
            [
                _np(packed.data),
                packed.batch_sizes.tolist(),
                None if packed.sorted_indices is None else packed.sorted_indices.tolist(),
                None if packed.unsorted_indices is None else packed.unsorted_indices.tolist(),
                _np(padded),
                lens.tolist(),
                _weighted_grad(lib, padded, xt, 1),
            ]
        )
        assert str(packed.batch_sizes.dtype).endswith("int64")
        assert str(lens.dtype).endswith("int64")
    ours, theirs = got
    for a, b in zip(ours, theirs):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
        else:
            assert a == b


def test_lengths_as_tensor_and_float32_kept():
    x = ag.randn(3, 2, 4)
    packed = R.pack_padded_sequence(x, ag.tensor([3, 1]))
    assert packed.data.dtype == ag.float32 and packed.batch_sizes.tolist() == [2, 1, 1]
    padded, lens = R.pad_packed_sequence(packed)
    assert padded.dtype == ag.float32 and lens.tolist() == [3, 1]
    np.testing.assert_array_equal(padded[:, 0].numpy(), x[:, 0].numpy())
    assert not padded[1:, 1].numpy().any()


def _torch_error(fn, *args, **kwargs):
    with pytest.raises(Exception) as theirs:
        fn(torch, *args, **kwargs)
    with pytest.raises(theirs.type) as ours:
        fn(ag, *args, **kwargs)
    assert str(ours.value) == str(theirs.value)


def _pack(lib, lengths, enforce_sorted=True, shape=(3, 2, 4), batch_first=False):
    x = lib.zeros(*shape)
    return _utils(lib).pack_padded_sequence(x, lengths, batch_first, enforce_sorted)


@pytest.mark.parametrize(
    "lengths, enforce_sorted",
    [([3, 0], True), ([0, 3], False), ([3, -1], False), ([2, 3], True), ([3], True)],
)
def test_pack_errors_as_torch(lengths, enforce_sorted):
    _torch_error(_pack, lengths, enforce_sorted)


def test_pack_limits():
    assert _pack(ag, [3, 3]).batch_sizes.tolist() == [2, 2, 2]  # equal lengths are sorted
    assert _pack(ag, [1, 1]).batch_sizes.tolist() == [2]  # the shortest length
    _torch_error(lambda lib: _pack(lib, lib.tensor([[3, 2]])))  # 2-D lengths
    _torch_error(lambda lib: _pack(lib, [1], shape=(3,)))  # no batch dim
    with pytest.raises(RuntimeError, match="length of 4 is longer than the padded input's 3"):
        _pack(ag, [4, 3])  # torch reads past the input here


def test_total_length_limits():
    packed = _pack(ag, [3, 1])
    assert R.pad_packed_sequence(packed, total_length=3)[0].shape == (3, 2, 4)
    _torch_error(lambda lib: _utils(lib).pad_packed_sequence(_pack(lib, [3, 1]), total_length=2))


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence_matches_torch(batch_first, side):
    rng = np.random.default_rng(2)
    seqs = [rng.standard_normal((n, 2, 3)) for n in (2, 4, 1)]
    res = []
    for lib in (ag, torch):
        xs = [lib.tensor(s, requires_grad=True) for s in seqs]
        out = _utils(lib).pad_sequence(xs, batch_first, 7.5, side)
        w = lib.tensor(np.random.default_rng(3).standard_normal(tuple(out.shape)))
        (out * w).sum().backward()
        res.append([_np(out)] + [x.grad.numpy() for x in xs])
    for a, b in zip(*res):
        np.testing.assert_array_equal(a, b)


def test_pad_sequence_dtypes_and_inputs_as_torch():
    for first, second in [("float32", "float64"), ("int64", "float32")]:
        seqs = [np.ones((2, 3), first), np.ones((3, 3), second)]
        ours = R.pad_sequence([ag.tensor(s) for s in seqs], padding_value=0.5)
        theirs = torch.nn.utils.rnn.pad_sequence([torch.tensor(s) for s in seqs], padding_value=0.5)
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    ids = [[4, 2, 7], [5]]  # token ids stay int64
    ours = R.pad_sequence([ag.tensor(i) for i in ids], batch_first=True, padding_value=1)
    theirs = torch.nn.utils.rnn.pad_sequence(
        [torch.tensor(i) for i in ids], batch_first=True, padding_value=1
    )
    assert ours.dtype == ag.int64 and ours.tolist() == theirs.tolist()
    x = np.arange(6.0).reshape(2, 3)  # a tensor is a sequence of its rows
    np.testing.assert_array_equal(
        R.pad_sequence(ag.tensor(x)).numpy(),
        torch.nn.utils.rnn.pad_sequence(torch.tensor(x)).numpy(),
    )


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: [],
        lambda lib: 5,
        lambda lib: [lib.ones(2, 3), lib.ones(3, 4)],
    ],
)
def test_pad_sequence_errors_as_torch(make):
    _torch_error(lambda lib: _utils(lib).pad_sequence(make(lib)))


def test_padding_side_error_as_torch():
    _torch_error(lambda lib: _utils(lib).pad_sequence([lib.ones(2)], padding_side="middle"))


@pytest.mark.parametrize("enforce_sorted, lengths", [(True, (4, 2, 1)), (False, (2, 4, 1))])
def test_pack_sequence_unpack_sequence_unpad_sequence(enforce_sorted, lengths):
    rng = np.random.default_rng(4)
    seqs = [rng.standard_normal((n, 2)) for n in lengths]
    res = []
    for lib in (ag, torch):
        u = _utils(lib)
        xs = [lib.tensor(s, requires_grad=True) for s in seqs]
        packed = u.pack_sequence(xs, enforce_sorted)
        back = u.unpack_sequence(packed)
        sum(((b * (i + 1.0)) ** 2).sum() for i, b in enumerate(back)).backward()
        padded = u.pad_sequence([lib.tensor(s) for s in seqs])
        unpadded = u.unpad_sequence(padded, lib.tensor(list(lengths)))
        res.append([_np(packed.data)] + [_np(b) for b in back + unpadded])
        res[-1] += [x.grad.numpy() for x in xs]
    for a, b in zip(*res):
        np.testing.assert_array_equal(a, b)


def test_unpad_sequence_leaves_its_input_alone():
    padded = ag.randn(4, 2, 3)
    before = padded.numpy().copy()
    parts = R.unpad_sequence(padded, [4, 1])
    assert padded.shape == (4, 2, 3)  # torch transposes its argument in place
    np.testing.assert_array_equal(parts[0].numpy(), before[:, 0])
    np.testing.assert_array_equal(parts[1].numpy(), before[:1, 1])


def test_packed_sequence_class_as_torch():
    ours, theirs = _pack(ag, [2, 3], False), _pack(torch, [2, 3], False)
    assert isinstance(ours, tuple) and ours._fields == theirs._fields
    assert repr(ours).replace("autogradcli", "torch") == repr(theirs)
    again = R.PackedSequence(ours.data, ours.batch_sizes, ours.sorted_indices)
    assert again.unsorted_indices.tolist() == theirs.unsorted_indices.tolist()
    pair = R.PackedSequence((ours.data, ours.batch_sizes))
    assert pair.batch_sizes is ours.batch_sizes and pair.sorted_indices is None
    with pytest.raises(AssertionError, match="list or tuple of length 2"):
        R.PackedSequence(ours.data)
    assert ours.to(ag.float32) is ours and ours.float() is ours
    assert ours.double().data.dtype == ours.to(ag.float64).data.dtype == ag.float64
    assert ours.double().sorted_indices is ours.sorted_indices
    assert ours.long().data.dtype == ag.int64 and ours.byte().data.dtype == ag.uint8
    assert ours.is_cuda is False and ours.is_pinned() is False and ours.pin_memory() is ours
    assert ours.cpu() is ours
    perm = ag.tensor([2, 0, 3, 1])
    assert R.invert_permutation(perm).tolist() == [1, 3, 0, 2]
    assert R.invert_permutation(None) is None
    assert nn.utils.rnn.pack_sequence is R.pack_sequence


def test_strict_cuda_pack_pad_and_batch_sizes_on_cpu(strict_cuda):
    x = np.random.default_rng(5).standard_normal((3, 2, 4)).astype("float32")
    xd = ag.tensor(x, device="cuda", requires_grad=True)
    packed = R.pack_padded_sequence(xd, [1, 3], enforce_sorted=False)
    assert packed.is_cuda and packed.sorted_indices.is_cuda
    assert packed.batch_sizes.device.type == "cpu"
    padded, _ = R.pad_packed_sequence(packed, batch_first=True)
    (padded * padded).sum().backward()
    cpu = R.pad_packed_sequence(R.pack_padded_sequence(ag.tensor(x), [1, 3], False, False))[0]
    np.testing.assert_array_equal(_np(padded), cpu.numpy().transpose(1, 0, 2))
    np.testing.assert_array_equal(ag.backend.to_numpy(xd.grad._data)[:1, 0], 2 * x[:1, 0])
    assert not ag.backend.to_numpy(xd.grad._data)[1:, 0].any()
    assert packed.cpu().data.device.type == "cpu" and not packed.cpu().sorted_indices.is_cuda
    back = packed.cpu().cuda(0)
    assert back.is_cuda and back.sorted_indices.is_cuda and back.cuda() is back
    pieces = R.pad_sequence([xd[:, 0], xd[:2, 1]], batch_first=True)
    assert pieces.is_cuda and pieces.shape == (2, 3, 4)
    with pytest.raises(ValueError, match="batch_sizes should always be on CPU"):
        R.PackedSequence(packed.data, ag.tensor([2, 1, 1], device="cuda"))


def test_readme_example_runs(capsys):
    """The README's example under "Recurrent layers and variable-length sequences" runs and
    prints the shapes it states."""
    import os

    readme = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    section = text.split("### Recurrent layers and variable-length sequences", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code, "README.md", "exec"), {})
    printed = capsys.readouterr().out
    assert printed == "autogradcli.Size([3, 3, 12]) [3, 1, 2] autogradcli.Size([2, 3, 6])\n"
