"""Writing PyTorch's zip layout: ``save_torch`` files that ``torch.load`` reads with its default
``weights_only=True`` (state dicts give identical outputs in torch), and whole modules saved with
``autogradcli.save(model, path)``, loaded back only with ``weights_only=False`` or an allow-list
(the pytorch/examples and MorvanZhou save/reload pattern after the import rename)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from lazy_torch import torch

import autogradcli
import autogradcli.nn as nn
import autogradcli.nn.functional as F
from autogradcli.serialization import save_torch


def mlp(m):
    return m.nn.Sequential(m.nn.Linear(3, 5), m.nn.Tanh(), m.nn.Linear(5, 2))


def test_save_torch_state_dict_loads_in_torch_with_identical_outputs(tmp_path):
    autogradcli.manual_seed(0)
    net = mlp(autogradcli)
    save_torch(net.state_dict(), tmp_path / "w.pt")
    sd = torch.load(tmp_path / "w.pt")  # torch's default: weights_only=True
    tnet = mlp(torch)
    tnet.load_state_dict(sd)
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    want = net(autogradcli.tensor(x)).detach().numpy()
    got = tnet(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)  # the engines round apart
    for name, value in net.state_dict().items():  # the weights themselves are bit-identical
        assert sd[name].dtype == torch.float32
        np.testing.assert_array_equal(sd[name].numpy(), value.numpy())


def test_save_torch_containers_views_and_dtypes(tmp_path):
    base = autogradcli.arange(12.0).reshape(3, 4)
    obj = {
        "base": base,
        "cols": base[:, 1::2],
        "same": base,
        "ints": autogradcli.tensor([1, -2], dtype=autogradcli.int64),
        "half": autogradcli.ones(2, dtype=autogradcli.float16),
        "mask": autogradcli.tensor([True, False]),
        "param": nn.Parameter(autogradcli.ones(2)),
        "plain": [1, 2.5, None, "s", (autogradcli.float16, autogradcli.device("cpu"))],
    }
    save_torch(obj, tmp_path / "c.pt")
    t = torch.load(tmp_path / "c.pt")
    np.testing.assert_array_equal(t["cols"].numpy(), base[:, 1::2].numpy())
    assert (
        t["same"] is t["base"]
        and t["cols"].untyped_storage().data_ptr() == t["base"].untyped_storage().data_ptr()
    )
    assert (t["ints"].dtype, t["half"].dtype, t["mask"].dtype) == (
        torch.int64,
        torch.float16,
        torch.bool,
    )
    assert isinstance(t["param"], torch.nn.Parameter)
    assert t["plain"] == [1, 2.5, None, "s", (torch.float16, torch.device("cpu"))]
    torch.load(tmp_path / "c.pt", mmap=True)  # storages are 64-byte aligned, as torch writes them
    back = autogradcli.load(tmp_path / "c.pt")  # and our own reader agrees
    np.testing.assert_array_equal(back["cols"].numpy(), obj["cols"].numpy())


def test_save_torch_refuses_objects_torch_would_not_load_weights_only(tmp_path):
    with pytest.raises(TypeError, match=r"obj\['net'\] is a Linear"):
        save_torch({"net": nn.Linear(2, 2)}, tmp_path / "x.pt")
    assert not (tmp_path / "x.pt").exists()


class Net(nn.Module):  # MorvanZhou's save/reload network
    def __init__(self) -> None:
        super().__init__()
        self.hidden = nn.Linear(1, 10)
        self.predict = nn.Linear(10, 1)

    def forward(self, x):
        return self.predict(F.relu(self.hidden(x)))


def test_whole_module_save_and_reload(tmp_path):
    path = tmp_path / "net.pkl"
    net1 = Net()
    autogradcli.save(net1, path)  # torch.save(net1, 'net.pkl')
    with pytest.raises(
        pickle.UnpicklingError, match=r"GLOBAL test_torch_format_write.Net was not an allowed"
    ) as info:
        autogradcli.load(path)  # PyTorch 2.6+: refused, naming the class and weights_only=False
    assert "weights_only" in str(info.value) and "net.pkl" in str(info.value)
    x = autogradcli.randn(4, 1)
    unsafe = autogradcli.serialization.get_unsafe_globals_in_checkpoint(path)
    assert unsafe == ["autogradcli.nn.linear.Linear", "test_torch_format_write.Net"]
    net2 = autogradcli.load(path, weights_only=False)
    assert type(net2) is Net and net2 is not net1
    np.testing.assert_array_equal(net2(x).detach().numpy(), net1(x).detach().numpy())
    assert all(isinstance(p, nn.Parameter) for p in net2.parameters())
    # the allow-list, as pytorch/examples word_language_model does it
    with autogradcli.serialization.safe_globals([Net, nn.modules.linear.Linear]):
        net3 = autogradcli.load(path)
    np.testing.assert_array_equal(net3(x).detach().numpy(), net1(x).detach().numpy())
    missing_linear = pytest.raises(pickle.UnpicklingError, match=r"GLOBAL autogradcli\.nn\.linear")
    with autogradcli.serialization.safe_globals([Net]), missing_linear:
        autogradcli.load(path)


class RNNModel(nn.Module):  # pytorch/examples word_language_model's, shrunk
    def __init__(self) -> None:
        super().__init__()
        self.drop = nn.Dropout(0.5)
        self.encoder = nn.Embedding(10, 4)
        self.rnn = nn.LSTM(4, 6, 1, dropout=0.0)
        self.decoder = nn.Linear(6, 10)
        self.rnn_type, self.nhid, self.nlayers = "LSTM", 6, 1

    def forward(self, x):
        out, _ = self.rnn(self.drop(self.encoder(x)))
        return self.decoder(self.drop(out))


def test_word_language_model_saves_the_module_and_reloads_it_with_its_safe_globals():
    import io

    model = RNNModel().eval()
    f = io.BytesIO()
    autogradcli.save(model, f)  # with open(args.save, 'wb') as f: torch.save(model, f)
    f.seek(0)
    safe_globals = [
        RNNModel,
        autogradcli.nn.modules.dropout.Dropout,
        autogradcli.nn.modules.linear.Linear,
        autogradcli.nn.modules.rnn.GRU,
        autogradcli.nn.modules.rnn.LSTM,
        autogradcli.nn.modules.rnn.RNN,
        autogradcli.nn.modules.sparse.Embedding,
    ]
    with autogradcli.serialization.safe_globals(safe_globals):
        loaded = autogradcli.load(f)
    assert not loaded.training
    x = autogradcli.tensor([[1, 2], [3, 4], [5, 6]])
    np.testing.assert_array_equal(loaded(x).detach().numpy(), model(x).detach().numpy())


def test_torch_whole_module_files_name_what_cannot_be_rebuilt(tmp_path):
    path = tmp_path / "tnet.pt"
    torch.save(torch.nn.Linear(2, 2), path)
    with pytest.raises(pickle.UnpicklingError, match=r"GLOBAL torch\.nn\.modules\.linear\.Linear"):
        autogradcli.load(path)
    with pytest.raises(autogradcli.serialization.SerializationError, match="state_dict"):
        autogradcli.load(path, weights_only=False)


def test_cuda_tensors_keep_their_device_and_map_location_moves_them(tmp_path, strict_cuda):
    t = autogradcli.arange(6.0, device="cuda").reshape(2, 3)
    obj = {"w": t, "v": t[:, 1]}
    save_torch(obj, tmp_path / "gpu.pt")
    back = autogradcli.load(tmp_path / "gpu.pt")
    assert back["w"].device == autogradcli.device("cuda:0")
    assert back["v"].tolist() == [1.0, 4.0]
    cpu = autogradcli.load(tmp_path / "gpu.pt", map_location="cpu")
    assert cpu["w"].device == autogradcli.device("cpu") and cpu["w"].tolist() == t.tolist()
    kept = autogradcli.load(tmp_path / "gpu.pt", map_location=lambda storage, loc: storage)
    assert kept["w"].device == autogradcli.device("cpu")  # PyTorch's idiom for "all on the CPU"
    sent = autogradcli.load(tmp_path / "gpu.pt", map_location=lambda s, loc: s.cpu().cuda(0))
    assert sent["v"].device == autogradcli.device("cuda:0")
    saved = torch.load(tmp_path / "gpu.pt", map_location="cpu")  # the file says cuda:0
    np.testing.assert_array_equal(saved["v"].numpy(), [1.0, 4.0])
