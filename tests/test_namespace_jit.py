"""torch.jit, torch.compile and torch.compiler as PyTorch behaves where nothing is compiled,
checked against torch's own answers."""

from __future__ import annotations

import typing
import warnings

import pytest

import autogradcli
from autogradcli import jit


def _f(x):
    return x + 1


def test_decorators_return_what_they_decorate() -> None:
    torch = pytest.importorskip("torch")
    for name in ("ignore", "unused", "export"):
        assert getattr(jit, name)(_f) is _f
        assert getattr(torch.jit, name)(_f)(1) == getattr(jit, name)(_f)(1) == 2
    assert jit.ignore(drop=False)(_f) is _f
    assert jit.interface(int) is int and jit.script_if_tracing(_f) is _f
    assert jit.Final is torch.jit.Final is typing.Final
    assert jit.annotations.List is torch.jit.annotations.List
    assert jit.annotate(list[int], [1]) == torch.jit.annotate(list[int], [1]) == [1]


def test_is_scripting_and_is_tracing_are_false_like_torch_eager() -> None:
    torch = pytest.importorskip("torch")
    assert jit.is_scripting() is torch.jit.is_scripting() is False
    assert jit.is_tracing() is torch.jit.is_tracing() is False
    assert autogradcli.compiler.is_compiling() is torch.compiler.is_compiling() is False


def test_script_and_trace_return_the_module_with_one_note(monkeypatch) -> None:
    monkeypatch.setattr(jit, "_noted", False)
    model = autogradcli.nn.Linear(2, 2)
    with pytest.warns(UserWarning, match="no TorchScript") as caught:
        assert jit.script(model) is model
    assert len(caught) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the note is shown once per process
        assert jit.trace(_f, (autogradcli.zeros(1),)) is _f
        assert jit.script(_f) is _f
    assert not isinstance(model, jit.ScriptModule)


def test_fork_and_wait_return_the_call_result_and_warn_like_torch() -> None:
    torch = pytest.importorskip("torch")
    with pytest.warns(DeprecationWarning) as theirs:
        assert torch.jit.wait(torch.jit.fork(_f, 2)) == 3
    with pytest.warns(DeprecationWarning) as ours:
        assert jit.wait(jit.fork(_f, 2)) == 3
    assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]


def test_compile_returns_its_argument_and_works_as_a_decorator_with_options() -> None:
    model = autogradcli.nn.Linear(2, 2)
    assert autogradcli.compile(model) is model
    assert autogradcli.compile(model, mode="max-autotune", fullgraph=True) is model

    @autogradcli.compile(dynamic=False, backend="inductor")
    def g(x):
        return x * 2

    assert g(3) == 6 and g.__name__ == "g"
    with pytest.raises(AssertionError, match="A callable function is expected"):
        autogradcli.compile(3)


def test_dynamo_reset_and_config_keep_torchs_defaults() -> None:
    # torch 2.13's defaults (importing torch._dynamo costs seconds, so they are written here)
    assert autogradcli._dynamo.reset() is None
    config = autogradcli._dynamo.config
    assert config.cache_size_limit == 8 and config.suppress_errors is False
    config.cache_size_limit = 64
    assert autogradcli._dynamo.config.cache_size_limit == 64
    config.cache_size_limit = 8
