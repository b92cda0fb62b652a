"""torch.backends and torch.cuda on a machine without the feature, against torch's CPU answers;
the memory statistics over a stand-in of cupy's memory pool."""

from __future__ import annotations

import types
import warnings

import pytest

import autogradcli
from autogradcli.backend import registry


def test_backends_answer_like_torch_without_the_feature() -> None:
    torch = pytest.importorskip("torch")
    assert autogradcli.backends.mps.is_available() is torch.backends.mps.is_available() is False
    assert autogradcli.backends.mps.is_built() is torch.backends.mps.is_built() is False
    assert autogradcli.backends.cudnn.allow_tf32 is torch.backends.cudnn.allow_tf32
    assert autogradcli.backends.opt_einsum.strategy is None


def test_matmul_allow_tf32_is_kept_read_back_and_tied_to_the_precision() -> None:
    torch = pytest.importorskip("torch")
    matmul = autogradcli.backends.cuda.matmul
    assert matmul.allow_tf32 is torch.backends.cuda.matmul.allow_tf32 is False
    assert autogradcli.get_float32_matmul_precision() == "highest"
    try:
        matmul.allow_tf32 = True
        assert matmul.allow_tf32 is True
        assert autogradcli.get_float32_matmul_precision() == "high"
        autogradcli.set_float32_matmul_precision("highest")
        assert matmul.allow_tf32 is False
        autogradcli.set_float32_matmul_precision("medium")
        assert matmul.allow_tf32 is True
        with pytest.warns(UserWarning, match="no effect"):
            autogradcli.set_float32_matmul_precision("bogus")
        assert autogradcli.get_float32_matmul_precision() == "medium"
        matmul.allow_fp16_reduced_precision_reduction = False
        assert matmul.allow_fp16_reduced_precision_reduction is False
        with pytest.raises(AttributeError, match="Unknown attribute nosuch"):
            matmul.nosuch  # noqa: B018
        with pytest.raises(AttributeError, match="Unknown attribute nosuch"):
            matmul.nosuch = 1
    finally:
        autogradcli.set_float32_matmul_precision("highest")
        matmul.allow_fp16_reduced_precision_reduction = True


def test_sdp_kernel_warns_like_torch_and_restores_the_flags() -> None:
    cuda = autogradcli.backends.cuda
    with pytest.warns(FutureWarning, match="sdp_kernel"), cuda.sdp_kernel(enable_flash=False):
        assert cuda.flash_sdp_enabled() is False
    assert cuda.flash_sdp_enabled() is True


def test_memory_statistics_are_zero_without_a_gpu_like_torch() -> None:
    torch = pytest.importorskip("torch")
    if autogradcli.cuda.is_available():
        pytest.skip("a GPU is present")
    for name in (
        "memory_allocated",
        "max_memory_allocated",
        "memory_reserved",
        "max_memory_reserved",
    ):
        assert getattr(autogradcli.cuda, name)() == getattr(torch.cuda, name)() == 0
    assert autogradcli.cuda.memory_stats() == dict(torch.cuda.memory_stats()) == {}
    autogradcli.cuda.reset_peak_memory_stats()  # torch's CPU build raises here; ours does nothing
    autogradcli.cuda.empty_cache()
    autogradcli.cuda.synchronize()
    assert autogradcli.cuda.is_bf16_supported() is torch.cuda.is_bf16_supported() is False
    autogradcli.cuda.set_device(-1)  # a negative index does nothing, as in PyTorch
    with pytest.raises(RuntimeError, match="set_device: no CUDA device"):
        autogradcli.cuda.set_device(0)
    with pytest.raises(RuntimeError, match="get_device_properties: no CUDA device"):
        autogradcli.cuda.get_device_name()


class _Pool:
    def __init__(self) -> None:
        self.used, self.total, self.freed = 0, 0, 0

    def used_bytes(self) -> int:
        return self.used

    def total_bytes(self) -> int:
        return self.total

    def free_all_blocks(self) -> None:
        self.freed += 1
        self.total = self.used


def test_memory_statistics_read_cupys_pool(monkeypatch) -> None:
    pool = _Pool()
    monkeypatch.setattr(
        registry, "_cuda", types.SimpleNamespace(get_default_memory_pool=lambda: pool)
    )
    cuda = autogradcli.cuda
    cuda.reset_peak_memory_stats()
    pool.used, pool.total = 1024, 4096
    assert cuda.memory_allocated() == 1024 and cuda.memory_reserved() == 4096
    pool.used = 512
    assert cuda.max_memory_allocated() == 1024 and cuda.memory_allocated() == 512
    cuda.reset_peak_memory_stats()
    assert cuda.max_memory_allocated() == 512
    cuda.empty_cache()
    assert pool.freed == 1 and cuda.memory_reserved() == 512 and cuda.max_memory_reserved() == 4096
    assert cuda.memory_stats()["allocated_bytes.all.current"] == 512


def test_cuda_amp_names_are_the_amp_ones_with_torchs_deprecation() -> None:
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        torch.cuda.amp.GradScaler()
        torch.cuda.amp.autocast()
    with pytest.warns(FutureWarning) as ours:
        scaler = autogradcli.cuda.amp.GradScaler()
        cast = autogradcli.cuda.amp.autocast()
    assert isinstance(scaler, autogradcli.amp.GradScaler) and isinstance(
        cast, autogradcli.amp.autocast
    )
    expected = [str(w.message) for w in theirs if w.category is FutureWarning]
    assert [str(w.message) for w in ours if w.category is FutureWarning] == expected


def test_a_cuda_grad_scaler_without_cuda_warns_and_disables_itself_as_torchs_does() -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available() or autogradcli.cuda.is_available():
        pytest.skip("the machine has CUDA")

    def made(lib: object) -> list[tuple[str, bool]]:
        seen = []
        for args, kwargs in ((("cuda",), {}), (("cuda",), {"enabled": False}), (("cpu",), {})):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                enabled = lib.amp.GradScaler(*args, **kwargs).is_enabled()
            seen.append(([(w.category, str(w.message)) for w in caught], enabled))
        return seen

    ours, theirs = made(autogradcli), made(torch)
    assert ours == theirs and ours[0][0] and not ours[0][1] and ours[2] == ([], True)


def test_events_time_the_work_between_them() -> None:
    start = autogradcli.cuda.Event(enable_timing=True)
    end = autogradcli.cuda.Event(enable_timing=True)
    start.record()
    autogradcli.ones(8, 8) @ autogradcli.ones(8, 8)
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) >= 0.0
    with pytest.raises(RuntimeError, match="enable_timing"):
        autogradcli.cuda.Event().elapsed_time(end)
    with autogradcli.cuda.stream(autogradcli.cuda.Stream()):
        assert autogradcli.cuda.current_stream() is autogradcli.cuda.default_stream()


def test_accelerator_device_index_answers_like_torch_without_one() -> None:
    torch = pytest.importorskip("torch")
    if autogradcli.cuda.is_available():
        pytest.skip("a GPU is present")
    for lib in (torch, autogradcli):
        with pytest.raises(RuntimeError, match="Cannot access accelerator device"):
            lib.accelerator.set_device_index(0)
        with pytest.raises(ValueError):
            lib.accelerator.set_device_index(None)
    with autogradcli.accelerator.device_index(None):
        pass


def test_device_queries_read_cupys_runtime(monkeypatch) -> None:
    from autogradcli.backend import cuda as backend_cuda

    props = {
        "name": b"Stand-in GPU",
        "major": 9,
        "minor": 0,
        "totalGlobalMem": 80 * 1024**3,
        "multiProcessorCount": 132,
    }
    used = []
    runtime = types.SimpleNamespace(
        getDeviceProperties=lambda i: props,
        getDevice=lambda: 0,
        memGetInfo=lambda: (1024, 2048),
    )
    cuda_ns = types.SimpleNamespace(
        runtime=runtime, Device=lambda i: types.SimpleNamespace(use=lambda: used.append(i))
    )
    monkeypatch.setattr(registry, "_cuda", types.SimpleNamespace(cuda=cuda_ns))
    monkeypatch.setattr(backend_cuda, "is_available", lambda: True)
    cuda = autogradcli.cuda
    p = cuda.get_device_properties(0)
    assert (p.name, p.major, p.minor, p.total_memory) == ("Stand-in GPU", 9, 0, 80 * 1024**3)
    assert repr(p).startswith(
        "_CudaDeviceProperties(name='Stand-in GPU', major=9, minor=0, total_memory=81920MB"
    )
    assert cuda.get_device_name() == "Stand-in GPU" and cuda.get_device_capability() == (9, 0)
    assert cuda.is_bf16_supported() is True and cuda.mem_get_info() == (1024, 2048)
    cuda.set_device("cuda:1")
    assert used == [1] and cuda.current_device() == 0
