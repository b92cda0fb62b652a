"""torch.random's seeding helpers, torch.seed, cuda.seed*, and the deterministic-algorithms flags."""

from __future__ import annotations

import pytest

import autogradcli


@pytest.fixture(autouse=True)
def _restore_rng():
    """Leave the global generators as the test found them."""
    saved = autogradcli.get_rng_state()
    torch = pytest.importorskip("torch")
    saved_torch = torch.get_rng_state()
    yield
    autogradcli.set_rng_state(saved)
    torch.set_rng_state(saved_torch)


def test_seed_returns_a_64_bit_seed_that_reseeds() -> None:
    value = autogradcli.seed()
    assert 0 <= value < 2**63 and autogradcli.initial_seed() == value
    first = autogradcli.rand(3).tolist()
    autogradcli.manual_seed(value)
    assert autogradcli.rand(3).tolist() == first
    assert autogradcli.random.initial_seed() == autogradcli.cuda.initial_seed() == value
    assert autogradcli.cuda.seed() != value


def test_fork_rng_restores_the_state_like_torch() -> None:
    torch = pytest.importorskip("torch")
    for lib in (torch, autogradcli):
        lib.manual_seed(0)
        first = lib.rand(2).tolist()
        lib.rand(5)
        later = lib.rand(2).tolist()
        lib.manual_seed(0)
        with lib.random.fork_rng():
            lib.rand(5)
        assert lib.rand(2).tolist() == first  # the draws inside left no trace
        lib.manual_seed(0)
        lib.rand(2)
        with lib.random.fork_rng(enabled=False):
            lib.rand(5)
        assert lib.rand(2).tolist() == later  # disabled: the draws inside count


def test_deterministic_algorithms_flags_read_back_like_torch() -> None:
    torch = pytest.importorskip("torch")
    # torch's setter imports seconds of compiler machinery: its default is read, its error quoted
    assert autogradcli.are_deterministic_algorithms_enabled() is False
    assert torch.are_deterministic_algorithms_enabled() is False
    with pytest.raises(TypeError, match="must be bool, not int") as ours:
        autogradcli.use_deterministic_algorithms(1)
    # torch: "_set_deterministic_algorithms(): argument 'mode' (position 1) must be bool, not int"
    assert "argument 'mode' (position 1)" in str(ours.value)
    try:
        autogradcli.use_deterministic_algorithms(True, warn_only=True)
        assert autogradcli.are_deterministic_algorithms_enabled() is True
        assert autogradcli.is_deterministic_algorithms_warn_only_enabled() is True
    finally:
        autogradcli.use_deterministic_algorithms(False)
    assert autogradcli.is_deterministic_algorithms_warn_only_enabled() is False
