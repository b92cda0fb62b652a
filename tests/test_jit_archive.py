"""torch.jit.save / load without TorchScript: a scripted module round-trips through our own
whole-module file, and a real TorchScript archive from PyTorch is refused with what to do."""

from __future__ import annotations

import numpy as np
import pytest

import autogradcli as ag


class Net(ag.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = ag.nn.Linear(3, 2)

    def forward(self, x):
        return self.fc(x).relu()


def test_a_scripted_module_round_trips(tmp_path):
    with pytest.warns(UserWarning):
        scripted = ag.jit.script(Net())
    ag.jit.save(scripted, tmp_path / "net.pt")
    loaded = ag.jit.load(tmp_path / "net.pt")
    x = ag.randn(4, 3)
    np.testing.assert_array_equal(loaded(x).detach().numpy(), scripted(x).detach().numpy())
    assert type(loaded) is Net


def test_a_torchscript_archive_is_refused_with_what_to_do(tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "scripted.pt"
    torch.jit.save(torch.jit.script(torch.nn.Linear(3, 2)), str(path))
    with pytest.raises(RuntimeError, match=r"TorchScript archive.*model\.load_state_dict"):
        ag.jit.load(path)
    with open(path, "rb") as fh, pytest.raises(RuntimeError, match="TorchScript archive"):
        ag.jit.load(fh)
