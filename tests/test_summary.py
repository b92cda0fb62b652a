"""nn.utils.summarize: rows, shapes with B, shared parameters once, MACs, saved bytes."""

from __future__ import annotations

import autogradcli as ag
from autogradcli import nn
from autogradcli.nn.utils import summarize


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)
        self.b.weight = self.a.weight
        self.inner = nn.Sequential(nn.Linear(4, 3), nn.Sequential(nn.Linear(3, 2)))

    def forward(self, x):
        return self.inner(self.b(self.a(x)))


def test_rows_shapes_params_and_macs():
    m = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(256, 10))
    s = summarize(m, ag.randn(2, 1, 8, 8))
    assert [r.name for r in s.rows] == ["", "0", "1", "2", "3"]
    assert s.rows[1].output_shape == ["B", 4, 8, 8]
    assert s.rows[4].output_shape == ["B", 10]
    assert s.total_params == 40 + 2570 and s.trainable_params == s.total_params
    assert s.rows[1].macs == 4 * 8 * 8 * 9 and s.rows[4].macs == 2560
    assert s.total_macs == 4 * 8 * 8 * 9 + 2560
    assert s.param_bytes == 4 * s.total_params
    text = s.to_text()
    assert "Layer (type)" in text and "├─0 (Conv2d)" in text and "[B, 4, 8, 8]" in text


def test_shared_parameters_counted_once_and_depth():
    m = Tied()
    s = summarize(m, ag.randn(3, 4), depth=1)
    assert s.total_params == 20 + 4 + 15 + 8  # b.weight is a.weight
    assert s.shared_params == 16
    rows = {r.name: r for r in s.rows}
    assert rows["b"].shared and not rows["a"].shared
    assert rows["inner"].params == 23 and rows["inner"].hidden_children
    assert "inner.0" not in rows
    assert "Shared params (counted once): 16" in s.to_text()


def test_trainable_flags_and_buffers_restored():
    m = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))
    m[0].weight.requires_grad_(False)
    before = m[1].running_mean.clone()
    s = summarize(m, ag.randn(5, 3))
    assert s.rows[1].trainable == "partial" and s.rows[2].trainable == "yes"
    assert s.non_trainable_params == 9
    assert (m[1].running_mean.numpy() == before.numpy()).all()
    assert s.buffer_bytes > 0


def test_activation_bytes_measured_from_the_graph():
    m = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 2))
    s = summarize(m, ag.randn(10, 4))
    # Linear keeps its input (10x4), ReLU its output (10x6) which the last Linear keeps too
    assert s.activation_bytes == 4 * (10 * 4 + 10 * 6)
    d = s.to_dict()
    assert (
        d["activation_bytes"] == s.activation_bytes and "measured" in d["activation_bytes_method"]
    )
