"""The older Tensor API that PyTorch still accepts (issue 9), each compared with PyTorch on the
same data: legacy constructors and type objects, ``x.type()``, ``typename``, ``Variable``,
``x.new*``, ``resize_``, the deprecated ``add(Number, Tensor)`` overloads and their warnings."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autogradcli as ag
from autogradcli.autograd import Variable


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _same(ours, ref):
    assert tuple(ours.shape) == tuple(ref.shape)
    assert str(ours.dtype).split(".")[-1] == str(ref.dtype).split(".")[-1]
    np.testing.assert_array_equal(np.asarray(ours.tolist()), np.asarray(ref.tolist()))


def _warnings(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
    return out, [(w.category, str(w.message).split(" (Triggered internally")[0]) for w in caught]


@pytest.mark.parametrize(
    "args",
    [(), ([1, 2, 3],), ([[1.5, 2.0]],), ((2, 3),), ([True, False],), (np.array([1, 2]),)],
)
def test_tensor_constructor_data_like_torch(torch, args):
    _same(ag.Tensor(*args), torch.Tensor(*args))


def test_tensor_constructor_sizes_like_torch(torch):
    for args in [(3, 4), (0,), (2, 1, 3)]:
        ours, ref = ag.Tensor(*args), torch.Tensor(*args)
        assert tuple(ours.shape) == tuple(ref.shape) and ours.dtype == ag.float32
    assert ag.Tensor(ag.Size([2, 3])).shape == (2, 3)
    assert ag.FloatTensor(2, 3).shape == (2, 3) and ag.LongTensor(4).dtype == ag.int64


def test_tensor_constructor_errors_like_torch(torch):
    with pytest.raises(TypeError) as ref:
        torch.Tensor(3.5)
    with pytest.raises(TypeError, match=r"new\(\): data must be a sequence \(got float\)"):
        ag.Tensor(3.5)
    assert str(ref.value) == "new(): data must be a sequence (got float)"
    with pytest.raises(TypeError) as ref:
        torch.FloatTensor(torch.tensor([1, 2]))
    with pytest.raises(TypeError) as ours:
        ag.FloatTensor(ag.tensor([1, 2]))
    assert str(ours.value) == str(ref.value)


def test_tensor_of_a_tensor_aliases_it(torch):
    t = ag.tensor([1.0, 2.0])
    alias = ag.Tensor(t)
    alias[0] = 5.0
    assert t.tolist() == [5.0, 2.0]
    r = torch.tensor([1.0, 2.0])
    torch.Tensor(r)[0] = 5.0
    assert r.tolist() == [5.0, 2.0]


TYPES = ["FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "ByteTensor", "BoolTensor",
         "HalfTensor", "ShortTensor", "CharTensor"]  # fmt: skip


@pytest.mark.parametrize("name", TYPES)
def test_legacy_type_objects_like_torch(torch, name):
    data = [1, 0, 1]
    ours, ref = getattr(ag, name)(data), getattr(torch, name)(data)
    _same(ours, ref)
    assert ours.type() == ref.type() == f"torch.{name}"
    assert ag.typename(ours) == torch.typename(ref)
    for other in TYPES:
        assert isinstance(ours, getattr(ag, other)) == isinstance(ref, getattr(torch, other))
    converted = ag.ones(2).type(getattr(ag, name))
    _same(converted, torch.ones(2).type(getattr(torch, name)))
    _same(ag.ones(2).type(f"torch.{name}"), torch.ones(2).type(f"torch.{name}"))


def test_type_conversions(torch):
    x = ag.tensor([1.7, -2.2])
    assert x.type(ag.FloatTensor) is x  # nothing to change: the same tensor, as torch
    _same(x.type(ag.int32), torch.tensor([1.7, -2.2]).type(torch.int32))
    with pytest.raises(ValueError, match="invalid type"):
        x.type("torch.NoSuchTensor")
    assert isinstance(ag.nn.Parameter(ag.ones(2)), ag.FloatTensor)
    assert repr(ag.FloatTensor) == "<class 'torch.FloatTensor'>"


def test_typename_and_is_tensor(torch):
    assert ag.typename(ag.nn.Linear(1, 1)) == "autogradcli.nn.linear.Linear"
    assert ag.typename(3) == torch.typename(3) == "int"
    assert ag.is_tensor(ag.ones(1)) and not ag.is_tensor([1.0])
    assert ag.typename(ag.ones(1, dtype=ag.float64)) == torch.typename(
        torch.ones(1, dtype=torch.float64)
    )


def test_variable_like_torch(torch):
    t = ag.ones(2)
    v = Variable(t, requires_grad=True)
    assert v.requires_grad and not t.requires_grad and v.is_leaf
    assert isinstance(t, Variable) and not isinstance(3, Variable)
    b = Variable(v * 2)
    assert not b.requires_grad and b.grad_fn is None
    with pytest.raises(TypeError) as ref:
        torch.autograd.Variable([1, 2])
    with pytest.raises(TypeError) as ours:
        Variable([1, 2])
    assert str(ours.value) == str(ref.value)
    assert Variable().shape == (0,)


def test_volatile_warns_like_torch(torch):
    _, ours = _warnings(lambda: Variable(ag.ones(2), volatile=True))
    _, ref = _warnings(lambda: torch.autograd.Variable(torch.ones(2), volatile=True))
    assert ours == ref and ours
    got, ours = _warnings(lambda: ag.ones(2).volatile)
    want, ref = _warnings(lambda: torch.ones(2).volatile)
    assert got is want is False and ours == ref


def test_new_methods_like_torch(torch):
    for lib in (ag, torch):
        x = lib.tensor([[1, 2]], dtype=lib.int32)
        results = [
            x.new(2, 3).shape, x.new([5, 6]).tolist(), x.new().shape, x.new_zeros(2, 2).tolist(),
            x.new_ones((3,)).tolist(), x.new_full((2,), 7).tolist(), x.new_empty(4).shape,
            x.new_tensor([1.9, 2.1]).tolist(), x.new_zeros(2, dtype=lib.float64).tolist(),
            x.new_ones(2, requires_grad=False).requires_grad,
        ]  # fmt: skip
        dtypes = [
            str(t.dtype).split(".")[-1] for t in (x.new(1), x.new_zeros(1), x.new_full((1,), 2))
        ]
        if lib is ag:
            ours = ([tuple(r) if isinstance(r, tuple) else r for r in results], dtypes)
        else:
            ref = ([tuple(r) if isinstance(r, tuple) else r for r in results], dtypes)
    assert ours == ref


def test_new_tensor_from_a_tensor_warns_like_torch(torch):
    _, ours = _warnings(lambda: ag.ones(1).new_tensor(ag.ones(2)))
    _, ref = _warnings(lambda: torch.ones(1).new_tensor(torch.ones(2)))
    assert ours == ref and ours


def test_resize_like_torch(torch):
    for shape in [(2, 3), (6,), (2, 2), (3, 3), (0,)]:
        a, b = ag.arange(6.0), torch.arange(6.0)
        a.resize_(*shape), b.resize_(*shape)
        assert tuple(a.shape) == tuple(b.shape)
        keep = min(6, int(np.prod(shape)))
        assert a.reshape(-1)[:keep].tolist() == b.reshape(-1)[:keep].tolist()
    a = ag.zeros(2, 2)
    assert a.resize_as_(ag.ones(4)).shape == (4,)
    assert a.resize_((1, 4)).shape == (1, 4)
    with pytest.raises(RuntimeError) as ref:
        torch.ones(2, requires_grad=True).resize_(3)
    with pytest.raises(RuntimeError) as ours:
        ag.ones(2, requires_grad=True).resize_(3)
    assert str(ours.value) == str(ref.value)
    x = ag.ones(3)
    v = x._version
    x.resize_(5)
    assert x._version > v


OVERLOADS = [
    ("add", lambda m, x, y: x.add(2, y)),
    ("sub", lambda m, x, y: x.sub(0.5, y)),
    ("add_", lambda m, x, y: x.clone().add_(-0.1, y)),
    ("sub_", lambda m, x, y: x.clone().sub_(3, y)),
    ("addcmul_", lambda m, x, y: x.clone().addcmul_(0.5, y, y)),
    ("addcdiv_", lambda m, x, y: x.clone().addcdiv_(2, y, y + 3)),
    ("addcmul", lambda m, x, y: x.addcmul(0.5, y, y)),
    ("addcdiv", lambda m, x, y: x.addcdiv(2, y, y + 3)),
]


# torch warns once per process: one interpreter imports torch, then each overload runs in a
# forked child of it (a process that has not warned yet), its stderr read back
_FRESH_TORCH_WARNINGS = """
import json, os, sys, warnings
import torch
warnings.simplefilter("always")
texts = {}
for name, source in json.loads(sys.argv[1]).items():
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        os.dup2(write, 2)
        x = torch.tensor([1.0, -2.0, 0.5]); y = x * 3
        eval(source)(torch, x, y)
        sys.stderr.flush()
        os._exit(0)
    os.close(write)
    with os.fdopen(read, encoding="utf-8") as f:
        texts[name] = f.read()
    os.waitpid(pid, 0)
print(json.dumps(texts))
"""


@pytest.fixture(scope="module")
def torch_overload_warnings() -> dict[str, str]:
    """Each overload's stderr from a torch process that has not warned yet."""
    import json
    import subprocess
    import sys

    pytest.importorskip("torch")
    argv = [sys.executable, "-c", _FRESH_TORCH_WARNINGS, json.dumps(OVERLOAD_SOURCES)]
    proc = subprocess.run(argv, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("name,fn", OVERLOADS, ids=[n for n, _ in OVERLOADS])
def test_deprecated_overloads_like_torch(torch, torch_overload_warnings, name, fn):
    data = np.array([1.0, -2.0, 0.5], dtype=np.float32)
    ours, ours_w = _warnings(lambda: fn(ag, ag.tensor(data), ag.tensor(data * 3)))
    ref = fn(torch, torch.tensor(data), torch.tensor(data * 3))
    np.testing.assert_allclose(ours.tolist(), ref.tolist(), rtol=1e-6)
    assert ours.dtype == ag.float32
    assert len(ours_w) == 1 and ours_w[0][0] is UserWarning
    assert ours_w[0][1].startswith(f"This overload of {name} is deprecated:\n\t{name}(Number ")
    # torch warns once per process; its text for this overload, from a fresh process:
    err = torch_overload_warnings[name]
    assert ours_w[0][1] in err.replace(" (Triggered internally", "\n(Triggered internally")


OVERLOAD_SOURCES = {
    "add": "lambda m, x, y: x.add(2, y)",
    "sub": "lambda m, x, y: x.sub(0.5, y)",
    "add_": "lambda m, x, y: x.clone().add_(-0.1, y)",
    "sub_": "lambda m, x, y: x.clone().sub_(3, y)",
    "addcmul_": "lambda m, x, y: x.clone().addcmul_(0.5, y, y)",
    "addcdiv_": "lambda m, x, y: x.clone().addcdiv_(2, y, y + 3)",
    "addcmul": "lambda m, x, y: x.addcmul(0.5, y, y)",
    "addcdiv": "lambda m, x, y: x.addcdiv(2, y, y + 3)",
}


def test_deprecated_overload_keeps_gradients(torch):
    for lib in (ag, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.tensor([3.0, -1.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x.add(2.0, y).pow(2).sum().backward()
        if lib is ag:
            ours = (x.grad.tolist(), y.grad.tolist())
        else:
            assert ours == (x.grad.tolist(), y.grad.tolist())


def test_range_index_like_torch(torch):
    data = np.arange(12.0).reshape(4, 3)
    for key in [range(2, 4), range(0, 4, 2), (slice(None), range(2)), range(0)]:
        _same(ag.tensor(data)[key], torch.tensor(data)[key])
    x = ag.tensor(data, requires_grad=True)
    x[range(1, 3)].sum().backward()
    assert x.grad.sum(1).tolist() == [0.0, 3.0, 3.0, 0.0]


def test_new_api_on_the_strict_cupy_stand_in(strict_cuda):
    x = ag.arange(6.0, device="cuda")
    assert ag.Tensor(2, 3, device="cuda").device.type == "cuda"
    assert ag.FloatTensor([1, 2], device="cuda").device.type == "cuda"
    assert x.new(2).device.type == "cuda" and x.new_zeros(2, 2).device.type == "cuda"
    assert x.new_full((2,), 3.0).cpu().tolist() == [3.0, 3.0]
    assert x.new_tensor([1.0]).device.type == "cuda"
    y = x.clone().resize_(2, 2)
    assert y.shape == (2, 2) and y.cpu().tolist() == [[0.0, 1.0], [2.0, 3.0]]
    assert x.clone().resize_(8).cpu().tolist()[:6] == x.cpu().tolist()
    assert x.type() == "torch.cuda.FloatTensor" and not isinstance(x, ag.FloatTensor)
    assert ag.equal(x, x.clone()) and ag.allclose(x, x + 1e-9)
    assert ag.isclose(x, x + 1).cpu().tolist() == [False] * 6
    with pytest.warns(UserWarning, match="This overload of add_"):
        z = x.clone().add_(2, x)
    assert z.cpu().tolist() == [3 * v for v in range(6)]
    assert x[range(1, 3)].cpu().tolist() == [1.0, 2.0]
    ag.testing.assert_close(x, x.clone())


def test_cuda_legacy_types_on_the_strict_stand_in(strict_cuda):
    x = ag.cuda.FloatTensor([1, 2])
    assert x.device.type == "cuda" and x.dtype == ag.float32
    assert isinstance(x, ag.cuda.FloatTensor) and not isinstance(x, ag.FloatTensor)
    assert repr(ag.cuda.LongTensor) == "<class 'torch.cuda.LongTensor'>"
    y = ag.ones(2).type(ag.cuda.DoubleTensor)
    assert (
        y.device.type == "cuda" and y.dtype == ag.float64 and y.type() == "torch.cuda.DoubleTensor"
    )
    z = ag.ones(2).type("torch.cuda.LongTensor")
    assert z.is_cuda and z.type() == "torch.cuda.LongTensor"
    assert ag.cuda.FloatTensor(2, 3).shape == (2, 3)
