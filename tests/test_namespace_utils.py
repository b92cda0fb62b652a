"""nn.DataParallel on one device, the utils.data.distributed path, utils.tensorboard through
tensorboardX, and torch.hub without the network."""

from __future__ import annotations

import hashlib
import os

import numpy as np
import pytest

import autogradcli


def test_data_parallel_is_a_transparent_wrapper_like_torchs_without_gpus() -> None:
    torch = pytest.importorskip("torch")
    ours, theirs = autogradcli.nn.Linear(2, 3), torch.nn.Linear(2, 3)
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    dp, tdp = autogradcli.nn.DataParallel(ours), torch.nn.DataParallel(theirs)
    assert dp.module is ours and dp.device_ids == tdp.device_ids == []
    assert list(dp.state_dict()) == list(tdp.state_dict()) == ["module.weight", "module.bias"]
    assert repr(dp) == repr(tdp)
    x = np.arange(4, dtype=np.float32).reshape(2, 2)
    out = dp(autogradcli.tensor(x))
    np.testing.assert_allclose(
        out.detach().numpy(), tdp(torch.tensor(x)).detach().numpy(), rtol=1e-6
    )
    same = autogradcli.nn.parallel.data_parallel(ours, autogradcli.tensor(x))
    np.testing.assert_array_equal(same.detach().numpy(), out.detach().numpy())


def test_distributed_sampler_under_torchs_path() -> None:
    from autogradcli.utils.data.distributed import DistributedSampler

    assert DistributedSampler is autogradcli.data.DistributedSampler
    sampler = DistributedSampler(list(range(10)), num_replicas=2, rank=1, shuffle=False)
    assert list(sampler) == [1, 3, 5, 7, 9]


def test_summary_writer_logs_tensors_through_tensorboardx(tmp_path) -> None:
    pytest.importorskip("tensorboardX")
    from autogradcli.utils.tensorboard import SummaryWriter

    with SummaryWriter(str(tmp_path)) as writer:
        writer.add_scalar("loss", autogradcli.tensor(0.5), 0)
        writer.add_scalars("pair", {"a": autogradcli.tensor(1.0)}, 0)
        writer.add_histogram("w", autogradcli.randn(10), 0)
        with pytest.raises(NotImplementedError, match="TorchScript"):
            writer.add_graph(autogradcli.nn.Linear(1, 1), autogradcli.zeros(1, 1))
    assert any(name.startswith("events.out.tfevents") for name in os.listdir(tmp_path))


def test_summary_writer_does_not_import_torch(tmp_path) -> None:
    """tensorboardX imports torch when it is installed; through autogradcli it does not, and
    torch still imports afterwards (a fresh process: this one has torch already)."""
    import subprocess
    import sys

    pytest.importorskip("tensorboardX")
    pytest.importorskip("torch")
    code = (
        "import sys\n"
        "from autogradcli.utils.tensorboard import SummaryWriter\n"
        "from autogradcli.trainer.tensorboard import require_tensorboardx\n"
        "import autogradcli as ag\n"
        f"w = SummaryWriter({str(tmp_path)!r}); w.add_scalar('a', ag.tensor(1.0), 0); w.close()\n"
        "require_tensorboardx()\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
        "import torch\n"
        "assert torch.ones(1).item() == 1.0\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_summary_writer_without_tensorboardx_names_the_package(monkeypatch) -> None:
    import sys

    from autogradcli.utils.tensorboard import writer

    monkeypatch.setattr(writer, "_CLASS", [])
    monkeypatch.setitem(sys.modules, "tensorboardX", None)
    with pytest.raises(ImportError, match="pip install tensorboardX"):
        writer.writer_class()


def _saved(path) -> dict:
    state = {"w": autogradcli.arange(3.0)}
    autogradcli.save(state, str(path))
    return state


def test_hub_loads_file_urls_and_cached_checkpoints(tmp_path, monkeypatch) -> None:
    from autogradcli import hub

    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(hub, "_hub_dir", [])
    assert hub.get_dir() == str(tmp_path / "home" / "hub")
    assert hub._get_torch_home() == str(tmp_path / "home")
    local = tmp_path / "weights.pt"
    _saved(local)
    loaded = hub.load_state_dict_from_url(f"file://{local}")
    assert loaded["w"].tolist() == [0.0, 1.0, 2.0]
    assert autogradcli.utils.model_zoo.load_url is hub.load_state_dict_from_url
    url = "https://example.com/models/net-0123abcd.pth"
    with pytest.raises(RuntimeError, match="does not use the network") as err:
        hub.load_state_dict_from_url(url)
    cached = tmp_path / "home" / "hub" / "checkpoints" / "net-0123abcd.pth"
    assert str(cached) in str(err.value)
    cached.parent.mkdir(parents=True)
    cached.write_bytes(local.read_bytes())
    assert hub.load_state_dict_from_url(url)["w"].tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(RuntimeError, match="invalid hash value"):
        hub.load_state_dict_from_url(url, check_hash=True)
    digest = hashlib.sha256(local.read_bytes()).hexdigest()[:8]
    good = cached.with_name(f"net-{digest}.pth")
    good.write_bytes(local.read_bytes())
    assert hub.load_state_dict_from_url(f"https://x/{good.name}", check_hash=True)["w"].shape == (
        3,
    )
    with pytest.raises(RuntimeError, match="GitHub"):
        hub.load("pytorch/vision", "resnet18")
    copy = tmp_path / "copy.pt"
    hub.download_url_to_file(f"file://{local}", str(copy), hash_prefix=digest)
    assert copy.read_bytes() == local.read_bytes()
    with pytest.raises(RuntimeError, match="does not use the network"):
        hub.download_url_to_file(url, str(tmp_path / "x.pt"))


def test_pytree_flattens_and_rebuilds_like_torchs() -> None:
    pytest.importorskip("torch")
    import collections

    from torch.utils import _pytree as theirs

    from autogradcli.utils import _pytree as ours

    point = collections.namedtuple("point", "x y")
    tree = {"b": [1, (2, 3)], "a": None, "c": point(4, 5), "d": collections.OrderedDict(z=6)}
    leaves, spec = ours.tree_flatten(tree)
    assert leaves == theirs.tree_flatten(tree)[0] == ours.tree_leaves(tree)
    scaled = [v * 10 if v else v for v in leaves]
    assert ours.tree_unflatten(scaled, spec) == theirs.tree_unflatten(
        scaled, theirs.tree_flatten(tree)[1]
    )
    bump = lambda v: v and v + 1
    assert ours.tree_map(bump, tree) == theirs.tree_map(bump, tree)
    with pytest.raises(ValueError):
        ours.tree_unflatten(leaves[:-1], spec)


def test_checkpoint_gives_the_values_and_gradients_of_the_plain_call() -> None:
    torch = pytest.importorskip("torch")
    from autogradcli.utils.checkpoint import checkpoint

    layer = autogradcli.nn.Linear(3, 2)
    tlayer = torch.nn.Linear(3, 2)
    tlayer.load_state_dict({k: torch.tensor(v.numpy()) for k, v in layer.state_dict().items()})
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    ax, tx = autogradcli.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    checkpoint(layer, ax, use_reentrant=False).tanh().sum().backward()
    tlayer(tx).tanh().sum().backward()  # torch's checkpoint gives the plain call's gradients
    np.testing.assert_allclose(ax.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        checkpoint(layer, ax)


def test_version_names_like_torchs_cpu_build() -> None:
    torch = pytest.importorskip("torch")
    if autogradcli.cuda.is_available():
        pytest.skip("a GPU is present")
    assert autogradcli.version.__version__ == autogradcli.__version__
    assert autogradcli.version.hip is torch.version.hip is None
    try:
        import cupy  # noqa: F401
    except ImportError:
        assert autogradcli.version.cuda is torch.version.cuda is None
