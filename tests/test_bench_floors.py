"""The hand-written numpy floors in bench/ compute what the benchmarked steps compute (a floor
that skips work would flatter itself), checked against PyTorch on identical data. Nothing here
is timed."""

from __future__ import annotations

import importlib
import itertools
import os
import sys

import numpy as np
import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench")


@pytest.fixture(autouse=True)
def bench_on_path(monkeypatch):
    monkeypatch.syspath_prepend(BENCH)


def test_numpy_cnn_step_matches_torch_over_three_steps():
    torch = pytest.importorskip("torch")
    import bench_nn
    import bench_numpy_cnn as cnn

    step, x, y, params = cnn.numpy_cnn_step_factory(np.random.default_rng(0))
    model = bench_nn.build(torch, "cnn")
    with torch.no_grad():
        for tp, p in zip(model.parameters(), params):
            tp.copy_(torch.from_numpy(p))
    opt = torch.optim.SGD(model.parameters(), lr=cnn.LR, momentum=cnn.MOMENTUM)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    for _ in range(3):  # the losses agree only if every gradient and update did
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(xt), yt)
        loss.backward()
        opt.step()
        assert step() == pytest.approx(loss.item(), rel=1e-5)
    for tp, p in zip(model.parameters(), params):
        np.testing.assert_allclose(p, tp.detach().numpy(), rtol=1e-4, atol=1e-6)
        assert p.dtype == np.float32


def test_blocked_products_equal_plain_ones():
    import bench_numpy_cnn as cnn

    rng = np.random.default_rng(0)
    w, g = rng.standard_normal((8, 9)).astype("f"), rng.standard_normal((8, 3 * cnn.BLOCK + 5))
    cols = rng.standard_normal((9, 3 * cnn.BLOCK + 5)).astype("f")
    g = g.astype("f")
    np.testing.assert_allclose(cnn.w_cols(w, cols), w @ cols, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(cnn.g_cols(g, cols), g @ cols.T, rtol=1e-4, atol=1e-3)


def test_numpy_chain_gradients_match_torch():
    torch = pytest.importorskip("torch")
    import bench_engine
    import bench_numpy_engine

    rng = np.random.default_rng(1)
    x, w = (rng.standard_normal(16).astype(np.float32) for _ in range(2))
    gx, gw = bench_numpy_engine.chain_grads(x, w)
    tx, tw = (torch.tensor(v, requires_grad=True) for v in (x, w))
    bench_engine.chain(torch, tx, tw).sum().backward()
    np.testing.assert_allclose(gx, tx.grad.numpy(), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(gw, tw.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert gx.dtype == gw.dtype == np.float32


def test_numpy_fit_loss_matches_torch():
    torch = pytest.importorskip("torch")
    import bench_engine
    import bench_numpy_engine

    _, loss = bench_numpy_engine.run_numpy_fit(50)
    assert loss == pytest.approx(bench_engine.run_fit(torch, 50)[1], rel=1e-4)


def _closure(fn) -> dict:
    return dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__)))


@pytest.mark.parametrize("sizes", [(784, 512, 256, 10), (40, 24, 16, 7)])
def test_numpy_mlp_step_matches_torch(sizes):
    torch = pytest.importorskip("torch")
    import bench_numpy_mlp as mlp

    step, x, y = mlp.numpy_step_factory(np.random.default_rng(0), sizes=sizes, batch=9)
    weights, biases = _closure(step)["weights"], _closure(step)["biases"]
    layers = [torch.nn.Linear(i, o) for i, o in itertools.pairwise(sizes)]
    with torch.no_grad():
        for layer, w, b in zip(layers, weights, biases):
            layer.weight.copy_(torch.from_numpy(w))
            layer.bias.copy_(torch.from_numpy(b))
    model = torch.nn.Sequential(layers[0], torch.nn.ReLU(), layers[1], torch.nn.ReLU(), layers[2])
    opt = torch.optim.SGD(model.parameters(), lr=mlp.LR, momentum=mlp.MOMENTUM)
    for _ in range(3):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(
            model(torch.from_numpy(x)), torch.from_numpy(y)
        ).backward()
        opt.step()
        step()
    for layer, w, b in zip(layers, weights, biases):
        np.testing.assert_allclose(w, layer.weight.detach().numpy(), rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(b, layer.bias.detach().numpy(), rtol=1e-4, atol=1e-6)
        assert w.dtype == b.dtype == np.float32


def test_numpy_floors_import_without_torch(monkeypatch):
    """The floors' own tests run where PyTorch is absent: importing them must not need it."""
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now raises ImportError
    for name in ("bench_numpy_mlp", "bench_numpy_cnn", "bench_numpy_engine", "bench_floors"):
        monkeypatch.delitem(sys.modules, name, raising=False)
        importlib.import_module(name)


def test_wide_numpy_mlp_floor_has_the_asked_sizes():
    import bench_numpy_mlp

    step, x, y = bench_numpy_mlp.numpy_step_factory(
        np.random.default_rng(0), sizes=(32, 16, 8, 5), batch=6
    )
    step()
    assert x.shape == (6, 32) and y.shape == (6,) and y.max() < 5


def test_gemm_floors_run_the_step_products():
    import bench_floors

    calls = []
    real = np.ndarray.__matmul__

    class Counting(np.ndarray):
        def __matmul__(self, other):
            calls.append((self.shape, other.shape))
            return real(np.asarray(self), np.asarray(other))

    gemms = bench_floors.mlp_gemms((12, 8, 6, 3), 4)
    for cell in gemms.__closure__:
        if isinstance(cell.cell_contents, list):
            cell.cell_contents[:] = [a.view(Counting) for a in cell.cell_contents]
    gemms()
    # per layer: forward (B, in) @ (in, out), weight grad (out, B) @ (B, in); input grads but
    # the first layer's: (B, out) @ (out, in)
    assert sorted(calls) == sorted(
        [((4, 12), (12, 8)), ((8, 4), (4, 12))]
        + [((4, 8), (8, 6)), ((6, 4), (4, 8)), ((4, 6), (6, 8))]
        + [((4, 6), (6, 3)), ((3, 4), (4, 6)), ((4, 3), (3, 6))]
    )


@pytest.mark.parametrize("kind", ["tiny", "mlp"])
def test_mlp_workloads_start_torch_and_ours_alike(kind):
    """bench_floors' MLP workloads (the "tiny" one backs bench/README's Python-per-step figure):
    torch's and autogradcli's steps start from the same weights and data, so their losses agree,
    and every candidate runs."""
    pytest.importorskip("torch")
    import bench_floors

    cands, _, _ = bench_floors._step(kind, quick=True)
    assert sorted(cands) == ["gemm", "numpy", "ours", "torch"]
    assert cands["ours"]().item() == pytest.approx(cands["torch"]().item(), rel=1e-5)
    cands["numpy"](), cands["gemm"]()


def test_small_op_cases_compute_the_same_on_both_engines():
    """bench_small_ops times the same computation on both engines (not timed here)."""
    torch = pytest.importorskip("torch")
    import bench_small_ops

    import autogradcli

    ours, theirs = bench_small_ops.cases(autogradcli), bench_small_ops.cases(torch)
    assert ours.keys() == theirs.keys()
    for name in ours:
        a, t = ours[name](), theirs[name]()
        if a is None:  # a backward, or the whole char-RNN step: it ran
            continue
        a, t = (a[0], t[0]) if isinstance(a, tuple) else (a, t)  # max: the values
        np.testing.assert_allclose(a.detach().numpy(), t.detach().numpy(), rtol=1e-6, err_msg=name)


def test_strided_conv_layers_compute_the_same_on_both_engines():
    """bench_strided_conv times the same layers on both engines (the biggest two left out)."""
    torch = pytest.importorskip("torch")
    import bench_strided_conv

    import autogradcli

    ours, theirs = bench_strided_conv.layers(autogradcli), bench_strided_conv.layers(torch)
    for name in list(ours)[:4]:
        (ca, xa, ga), (ct, xt, gt) = ours[name], theirs[name]
        ya, yt = ca(xa), ct(xt)
        np.testing.assert_allclose(ya.detach().numpy(), yt.detach().numpy(), rtol=1e-4, atol=1e-4)
        ya.backward(ga)
        yt.backward(gt)
        np.testing.assert_allclose(xa.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-4)
