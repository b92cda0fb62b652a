"""A model of each layer family exported to ONNX and run in ONNX Runtime at two batch sizes:
the outputs equal autogradcli's within float32 tolerance (tests/onnx_runtime.py)."""

from __future__ import annotations

import pytest
from onnx_runtime import check_export, randn

import autogradcli as ag
from autogradcli import nn
from autogradcli.nn import functional as F


class _Each(nn.Module):
    """Applies each function to the input and concatenates the results (one graph, many ops)."""

    def __init__(self, *fns):
        super().__init__()
        self.lin = nn.Linear(4, 6)
        self.fns = fns

    def forward(self, x):
        h = self.lin(x)
        return ag.cat([f(h) for f in self.fns], dim=-1)


ACTIVATIONS = [
    nn.ReLU(), nn.Tanh(), nn.Sigmoid(), nn.GELU(), nn.GELU("tanh"), nn.ELU(0.7),
    nn.LeakyReLU(0.2), nn.SiLU(), nn.Softplus(beta=2.0, threshold=1.0), nn.Hardtanh(-0.5, 0.5),
    nn.ReLU6(), nn.LogSigmoid(), nn.Softmax(-1), nn.LogSoftmax(dim=1), nn.Identity(),
]  # fmt: skip


def test_mlp_with_every_activation():
    model = _Each(*ACTIVATIONS)
    check_export(model, lambda n: (randn(n, 4),))


def test_elementwise_and_indexing():
    def fn(x):
        y = x[:, 1:3] * 2.0 - x[:, -1:] / 3.0 + x[:, None, 0].squeeze(1).unsqueeze(-1) ** 3
        z = ag.where(x > 0.1, x.exp(), x.abs().sqrt()) + x.clamp(-0.2, 0.3) + x.mean(-1, True)
        r = ag.stack([x.amax(-1), x.sum(1), x.flip(1)[:, 0], x.abs().log1p()[:, 0]], 1)
        return ag.cat([y, z[..., ::2], r, x.view(x.size(0), 2, 2).transpose(1, 2).flatten(1)], 1)

    model = _Fn(fn)
    check_export(model, lambda n: (randn(n, 4),))


class _Fn(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *x):
        return self.fn(*x)


def test_cnn_conv_bn_pool_transpose():
    model = nn.Sequential(
        nn.Conv2d(2, 4, 3, stride=2, padding=1),
        nn.BatchNorm2d(4),
        nn.ReLU(inplace=True),
        nn.Conv2d(4, 4, 3, padding=2, dilation=2, groups=2),
        nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True),
        nn.AvgPool2d(2, stride=1, padding=1, count_include_pad=False),
        nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1, output_padding=1),
        nn.AdaptiveAvgPool2d(1),
        nn.Dropout(0.5),
        nn.Flatten(),
        nn.Linear(3, 2),
    )
    model[1].running_mean.uniform_(-0.5, 0.5)
    model[1].running_var.uniform_(0.5, 1.5)
    model.train()  # export puts it in eval mode (BatchNorm's running stats, Dropout removed)
    check_export(model.eval(), lambda n: (randn(n, 2, 11, 11),))


def test_conv1d_batchnorm1d_pool1d():
    model = nn.Sequential(
        nn.Conv1d(2, 4, 3, stride=2, padding=1), nn.BatchNorm1d(4), nn.MaxPool1d(2),
        nn.AvgPool1d(2), nn.Flatten(), nn.Linear(8, 3),
    ).eval()  # fmt: skip
    check_export(model, lambda n: (randn(n, 2, 16),))


def test_embedding_layernorm_residual():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(10, 6)
            self.norm = nn.LayerNorm(6)
            self.fc = nn.Linear(6, 6)

        def forward(self, idx):
            h = self.emb(idx)
            h = h + self.fc(self.norm(h))  # a residual add
            return h.reshape(h.shape[0] * h.shape[1], -1).softmax(-1)  # a batch-derived size

    gen = ag.Generator().manual_seed(0)
    check_export(Net(), lambda n: (ag.randint(0, 10, (n, 5), generator=gen),))


@pytest.mark.parametrize(
    "layer, batch_first",
    [
        (nn.LSTM(4, 5, num_layers=2, bidirectional=True, batch_first=True), True),
        (nn.GRU(4, 5, num_layers=2, bidirectional=True), False),
        (nn.RNN(4, 5, nonlinearity="relu", batch_first=True), True),
        (nn.RNN(4, 5, bias=False), False),
    ],
    ids=["lstm", "gru", "rnn_relu", "rnn_tanh_nobias"],
)
def test_recurrent_layers_and_final_states(layer, batch_first):
    def inputs(n):
        return (randn(n, 6, 4) if batch_first else randn(6, n, 4),)

    check_export(layer, inputs, batch_axis=0 if batch_first else 1)


def test_lstm_with_initial_states_as_graph_inputs():
    """torch.onnx's rule: the tensors of nested tuples in ``args`` are graph inputs too."""
    lstm = nn.LSTM(4, 5, num_layers=2)
    check_export(
        lstm, lambda n: (randn(6, n, 4), (randn(2, n, 5, seed=1), randn(2, n, 5, seed=2))),
        batch_axis=1,
    )  # fmt: skip


def test_multihead_attention_and_causal_sdpa():
    mha = nn.MultiheadAttention(8, 2, batch_first=True)

    def fn(q, kv):
        out, weights = mha(q, kv, kv)
        causal = F.scaled_dot_product_attention(q, kv, kv, is_causal=True)
        return out, weights, causal

    check_export(_Fn(fn), lambda n: (randn(n, 5, 8), randn(n, 5, 8, seed=1)))


def test_causal_transformer_encoder_layer():
    from autogradcli.config.sequence_layers import TransformerEncoderLayer

    layer = TransformerEncoderLayer(
        8, 2, 16, dropout=0.1, batch_first=True, norm_first=True, causal=True
    ).eval()
    check_export(layer, lambda n: (randn(n, 5, 8),))


def test_transformer_encoder_layer_post_norm_gelu():
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation="gelu").eval()
    check_export(layer, lambda n: (randn(5, n, 8),), batch_axis=1)


def test_group_norm_resampling_and_padding_layers():
    model = nn.Sequential(
        nn.ReflectionPad2d(1), nn.Conv2d(2, 4, 3), nn.GroupNorm(2, 4), nn.ReplicationPad2d(1),
        nn.Upsample(scale_factor=2, mode="bilinear"), nn.PixelShuffle(2), nn.InstanceNorm2d(1),
        nn.Upsample(scale_factor=2), nn.ZeroPad2d((1, 0, 2, 0)),
    )  # fmt: skip
    check_export(model, lambda n: (randn(n, 2, 4, 4),))


def test_statistics_norms_einsum_and_integer_division():
    def fn(x):
        stats = [x.var(-1, keepdim=True), x.std(1, keepdim=True, correction=0)]
        stats += [x.norm(dim=-1, keepdim=True), x.norm(p=1, dim=1, keepdim=True)]
        stats += [x.logsumexp(-1, keepdim=True), ag.div(x, 0.3, rounding_mode="floor"), x % 0.5]
        gram = ag.einsum("bi,bj->bij", x, x).flatten(1)
        return ag.cat([*stats, gram], -1)

    check_export(_Fn(fn), lambda n: (randn(n, 4),))


def test_argmax_argmin_any_all():
    def fn(x):
        picks = [x.argmax(-1), x.argmin(1), (x > 0).any(-1).long(), (x > -1).all(1).long()]
        return ag.stack(picks, -1), x.argmin(0, keepdim=True), x.argmax(), (x > 0).all()

    check_export(_Fn(fn), lambda n: (randn(n, 4),))


def test_statistics_over_the_dynamic_batch_axis():
    def fn(x):
        return ag.cat([x.std(0, keepdim=True), x.var(correction=0).reshape(1, 1)], -1)

    check_export(_Fn(fn), lambda n: (randn(n, 4),))
