"""DataLoader as torch.utils.data.DataLoader: worker processes (order, seeding, worker info,
errors with the worker's traceback, timeouts, deaths, persistent workers), IterableDataset
sharding, argument checks, and batch structure against torch on identical data."""

from __future__ import annotations

import os
import random
import time
from collections import namedtuple
from typing import Any

import numpy as np
import pytest

import autogradcli as ag
from autogradcli.data import multiprocess
from autogradcli.utils import data


def flat(batches: Any) -> list[Any]:
    return [_py(b) for b in batches]


def _py(x: Any) -> Any:
    """A batch as plain Python with dtype names, for ours and torch's alike."""
    if hasattr(x, "detach") and hasattr(x, "dtype"):
        return ("T", str(x.dtype).split(".")[-1], x.tolist())
    if isinstance(x, dict):
        return {k: _py(v) for k, v in x.items()}
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return (type(x).__name__, *[_py(v) for v in x])
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [_py(v) for v in x])
    return x


class Squares(data.Dataset):
    def __init__(self, n: int = 10) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> Any:
        return {"x": np.array([i, i * i], dtype=np.float32), "y": i, "name": f"s{i}"}


class Stream(data.IterableDataset):
    """0..n-1, sharded across workers by ``get_worker_info()`` when ``shard``."""

    def __init__(self, n: int = 11, shard: bool = True) -> None:
        self.n, self.shard = n, shard

    def __iter__(self) -> Any:
        info = data.get_worker_info()
        if info is None or not self.shard:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))

    def __len__(self) -> int:
        return self.n


# ----------------------------------------------------------------- order and seeding
@pytest.mark.parametrize(
    "kw",
    [
        dict(batch_size=3, shuffle=True),
        dict(batch_size=4, shuffle=True, drop_last=True, prefetch_factor=1),
        dict(batch_size=None, shuffle=True),
        dict(batch_sampler=data.BatchSampler(data.SequentialSampler(range(10)), 4, False)),
        dict(batch_size=2, sampler=data.WeightedRandomSampler([1, 2, 3, 0, 1, 1, 1, 5, 1, 1], 7)),
    ],
)
def test_worker_batches_equal_single_process(kw: dict[str, Any]) -> None:
    """Same batches in the same order for 0 and 2 workers, epoch after epoch, both with a
    generator and with the global RNG."""
    ds = Squares()
    for use_gen in (True, False):
        runs = []
        for workers in (0, 2):
            ag.manual_seed(3)
            args = dict(kw, num_workers=workers, generator=data.Generator(5) if use_gen else None)
            if workers == 0:
                args.pop("prefetch_factor", None)
            loader = data.DataLoader(ds, **args)
            runs.append([flat(loader), flat(loader)])
        assert runs[0] == runs[1]
        assert runs[0][0] != runs[0][1] or "batch_sampler" in kw  # epochs differ when shuffled


def test_worker_info_and_seeds_follow_torch_rules() -> None:
    class Probe(data.Dataset):
        def __len__(self) -> int:
            return 6

        def __getitem__(self, i: int) -> Any:
            info = data.get_worker_info()
            return [
                info.id,
                info.num_workers,
                info.seed,
                info.dataset is self,
                random.random(),
                ag.rand(1).item(),
                os.getpid(),
                inited,
            ]

    def init(worker_id: int) -> None:
        global inited
        inited = worker_id + 100

    assert data.get_worker_info() is None
    gen = data.Generator(11)
    loader = data.DataLoader(
        Probe(), batch_size=None, num_workers=3, worker_init_fn=init, generator=gen
    )
    rows = [[v.item() if hasattr(v, "item") else v for v in r] for r in loader]
    assert [r[0] for r in rows] == [0, 1, 2, 0, 1, 2]  # round-robin, in order
    for wid, nw, seed, same, rnd, engine_rnd, pid, init_mark in rows[:3]:
        assert nw == 3 and same is True and init_mark == wid + 100
        assert seed == rows[0][2] + wid  # base_seed + worker_id
        assert rnd == random.Random(seed).random()
        ag.manual_seed(seed)
        assert engine_rnd == ag.rand(1).item()
        assert pid != os.getpid()
    assert len({r[6] for r in rows}) == 3
    again = [r[2] for r in loader]
    assert again[0] != rows[0][2]  # a new base seed each epoch
    # the same generator seed gives the same worker seeds; another gives others
    for seed, same in ((11, True), (12, False)):
        loader = data.DataLoader(
            Probe(),
            batch_size=None,
            num_workers=3,
            worker_init_fn=init,
            generator=data.Generator(seed),
        )
        assert ([r[2] for r in loader] == [r[2] for r in rows]) == same


def test_workers_seed_engine_and_numpy_differently() -> None:
    class Draws(data.Dataset):
        def __len__(self) -> int:
            return 2

        def __getitem__(self, i: int) -> Any:
            return [np.random.rand(), ag.rand(1).item()]

    rows = list(data.DataLoader(Draws(), batch_size=None, num_workers=2))
    assert rows[0][0] != rows[1][0] and rows[0][1] != rows[1][1]


def test_iterable_dataset_sharding_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    tdata = torch.utils.data

    class TStream(tdata.IterableDataset):
        def __init__(self, n: int, shard: bool) -> None:
            self.n, self.shard = n, shard

        def __iter__(self) -> Any:
            info = tdata.get_worker_info()
            if info is None or not self.shard:
                return iter(range(self.n))
            return iter(range(info.id, self.n, info.num_workers))

    for shard, kw in [
        (True, dict(batch_size=2, num_workers=2)),
        (True, dict(batch_size=3, num_workers=2, drop_last=True)),
        (False, dict(batch_size=4, num_workers=2)),
        (True, dict(batch_size=None, num_workers=2)),
        (True, dict(batch_size=2)),
    ]:
        ours = flat(data.DataLoader(Stream(11, shard), **kw))
        theirs = flat(tdata.DataLoader(TStream(11, shard), **kw))
        assert ours == theirs, kw
    assert len(data.DataLoader(Stream(11), batch_size=3)) == 4
    assert len(data.DataLoader(Stream(11), batch_size=3, drop_last=True)) == 3


def test_persistent_workers_keep_their_processes() -> None:
    ds = data.TensorDataset(ag.arange(12))
    loader = data.DataLoader(ds, batch_size=5, num_workers=2, persistent_workers=True)
    first = flat(loader)
    pids = loader._iterator.worker_pids()
    second = flat(loader)
    assert first == second and loader._iterator.worker_pids() == pids
    stream = data.DataLoader(Stream(7), batch_size=2, num_workers=2, persistent_workers=True)
    assert flat(stream) == flat(stream)  # each worker restarts its stream every epoch


def test_abandoned_epoch_results_are_dropped() -> None:
    ds = data.TensorDataset(ag.arange(12))
    loader = data.DataLoader(ds, batch_size=2, num_workers=2, persistent_workers=True)
    it = iter(loader)
    assert next(it)[0].tolist() == [0, 1]
    assert flat(loader) == flat(data.DataLoader(ds, batch_size=2))


# ----------------------------------------------------------------- errors from workers
class Faulty(data.Dataset):
    def __init__(self, exc: type, bad: int = 5) -> None:
        self.exc, self.bad = exc, bad

    def __len__(self) -> int:
        return 8

    def __getitem__(self, i: int) -> Any:
        if i == self.bad:
            raise self.exc(f"bad sample {i}")
        return i


@pytest.mark.parametrize("workers", [0, 2])
def test_worker_exception_reaches_main_with_its_traceback(workers: int) -> None:
    loader = data.DataLoader(Faulty(ValueError), batch_size=2, num_workers=workers)
    got = []
    with pytest.raises(ValueError) as err:
        for batch in loader:
            got.append(batch.tolist())
    assert got == [[0, 1], [2, 3]]
    msg = str(err.value)
    if workers:
        assert msg.startswith("Caught ValueError in DataLoader worker process 0.\n")
        assert "Original Traceback (most recent call last):" in msg
        assert "test_data_loader.py" in msg and "in __getitem__" in msg
        assert msg.rstrip().endswith("ValueError: bad sample 5")
    else:
        assert msg == "bad sample 5"


def test_worker_key_error_and_odd_exceptions() -> None:
    with pytest.raises(KeyError) as err:
        list(data.DataLoader(Faulty(KeyError, bad=2), batch_size=2, num_workers=2))
    assert "Caught KeyError in DataLoader worker process 1." in str(err.value)

    class NeedsTwo(Exception):
        def __init__(self, a: Any, b: Any = None) -> None:
            if b is None and not isinstance(a, str):
                raise TypeError
            super().__init__(a)

    class Local(data.Dataset):
        def __len__(self) -> int:
            return 2

        def __getitem__(self, i: int) -> Any:
            raise NeedsTwo(1, 2)

    # a local exception class cannot be pickled: it comes back as a RuntimeError
    with pytest.raises(RuntimeError, match="Caught NeedsTwo in DataLoader worker process 0"):
        list(data.DataLoader(Local(), num_workers=1))


def test_worker_init_fn_error_is_reported() -> None:
    def init(worker_id: int) -> None:
        raise OSError(f"cannot open shard {worker_id}")

    with pytest.raises(
        OSError,
        match=r"(?s)Caught OSError in DataLoader worker process 0\..*"
        r"cannot open shard 0",
    ):
        list(data.DataLoader(data.TensorDataset(ag.arange(4)), num_workers=2, worker_init_fn=init))


def test_timeout_just_outside_and_inside(monkeypatch: Any) -> None:
    class Slow(data.Dataset):
        def __len__(self) -> int:
            return 2

        def __getitem__(self, i: int) -> Any:
            time.sleep(0.5)
            return i

    with pytest.raises(RuntimeError, match=r"^DataLoader timed out after 0.05 seconds$"):
        list(data.DataLoader(Slow(), num_workers=1, timeout=0.05))
    assert flat(data.DataLoader(Slow(), num_workers=1, timeout=30)) == [
        ("T", "int64", [0]),
        ("T", "int64", [1]),
    ]


def test_dead_worker_is_detected(monkeypatch: Any) -> None:
    monkeypatch.setattr(multiprocess, "_STATUS_CHECK_S", 0.1)

    class Dies(data.Dataset):
        def __len__(self) -> int:
            return 4

        def __getitem__(self, i: int) -> Any:
            os._exit(3)

    with pytest.raises(
        RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+.*\) exited unexpectedly"
    ):
        list(data.DataLoader(Dies(), num_workers=1))


# ----------------------------------------------------------------- arguments
BAD_ARGS = [
    dict(num_workers=-1),
    dict(timeout=-1),
    dict(prefetch_factor=2),
    dict(persistent_workers=True),
    dict(shuffle=True, sampler=[0, 1]),
    dict(batch_sampler=[[0]], batch_size=2),
    dict(batch_sampler=[[0]], drop_last=True),
    dict(batch_size=None, drop_last=True),
    dict(multiprocessing_context="fork"),
    dict(num_workers=1, multiprocessing_context="nope"),
]


@pytest.mark.parametrize("kw", BAD_ARGS, ids=[str(k) for k in BAD_ARGS])
def test_argument_errors_match_torch(kw: dict[str, Any]) -> None:
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError) as ours:
        data.DataLoader(data.TensorDataset(ag.arange(4)), **kw)
    with pytest.raises(ValueError) as theirs:
        torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.arange(4)), **kw)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("name", ["shuffle", "sampler", "batch_sampler"])
def test_iterable_dataset_refuses_order_options_like_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    value = {"shuffle": True, "sampler": [0], "batch_sampler": [[0]]}[name]
    kw = {name: value}

    class TStream(torch.utils.data.IterableDataset):
        def __iter__(self) -> Any:
            return iter(range(3))

    with pytest.raises(ValueError) as ours:
        data.DataLoader(Stream(), **kw)
    with pytest.raises(ValueError) as theirs:
        torch.utils.data.DataLoader(TStream(), **kw)
    assert str(ours.value) == str(theirs.value)


def test_accepted_options_and_defaults_like_torch() -> None:
    torch = pytest.importorskip("torch")
    ds = data.TensorDataset(ag.arange(6))
    tds = torch.utils.data.TensorDataset(torch.arange(6))
    for kw in [
        dict(),
        dict(num_workers=2),
        dict(num_workers=2, prefetch_factor=1),
        dict(batch_size=None),
        dict(pin_memory=True),
    ]:
        ours, theirs = data.DataLoader(ds, **kw), torch.utils.data.DataLoader(tds, **kw)
        for attr in (
            "batch_size",
            "num_workers",
            "prefetch_factor",
            "pin_memory",
            "drop_last",
            "timeout",
            "persistent_workers",
        ):
            assert getattr(ours, attr) == getattr(theirs, attr), (kw, attr)
        assert ours.collate_fn.__name__ == theirs.collate_fn.__name__
        assert len(ours) == len(theirs)
    pinned = data.DataLoader(
        ds, batch_size=4, pin_memory=True, num_workers=1, multiprocessing_context="spawn"
    )
    assert flat(pinned) == flat(data.DataLoader(ds, batch_size=4))  # spawn works too


# ----------------------------------------------------------------- collate against torch
Point = namedtuple("Point", "x y")


def _collate_cases(m: Any) -> list[list[Any]]:
    return [
        [m.tensor([1.0, 2.0]), m.tensor([3.0, 4.0])],
        [m.tensor([1, 2], dtype=m.int32), m.tensor([3, 4], dtype=m.int32)],
        [np.array([1.0, 2.0]), np.array([3.0, 4.0])],
        [np.array([1, 2], dtype=np.int32), np.array([3, 4], dtype=np.int32)],
        [np.float32(1.5), np.float32(2.5)],
        [np.int64(3), np.int64(4)],
        [1.5, 2.5],
        [1, 2],
        [True, False],
        ["a", "b"],
        [{"a": 1, "b": np.array([1.0])}, {"a": 2, "b": np.array([2.0])}],
        [Point(1, 2.0), Point(3, 4.0)],
        [(1, "x", [1.0, 2.0]), (2, "y", [3.0, 4.0])],
        [[1, 2], [3, 4]],
    ]


def test_default_collate_and_convert_match_torch() -> None:
    torch = pytest.importorskip("torch")
    tdata = torch.utils.data
    for ours, theirs in zip(_collate_cases(ag), _collate_cases(torch)):
        assert _py(data.default_collate(ours)) == _py(tdata.default_collate(theirs)), theirs
        for a, b in zip(ours, theirs):
            assert _py(data.default_convert(a)) == _py(tdata.default_convert(b)), b
    for bad in ([np.array(["a"]), np.array(["b"])], [object(), object()]):
        with pytest.raises(TypeError) as ours:
            data.default_collate(bad)
        with pytest.raises(TypeError) as theirs:
            tdata.default_collate(bad)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        data.default_collate([[1, 2], [3]])


def test_loader_batches_match_torch_with_workers() -> None:
    torch = pytest.importorskip("torch")
    tdata = torch.utils.data

    class TSquares(tdata.Dataset):
        def __len__(self) -> int:
            return 10

        def __getitem__(self, i: int) -> Any:
            return {"x": np.array([i, i * i], dtype=np.float32), "y": i, "name": f"s{i}"}

    for kw in [
        dict(batch_size=4, num_workers=2),
        dict(batch_size=3, drop_last=True),
        dict(batch_size=None, num_workers=2),
    ]:
        assert flat(data.DataLoader(Squares(), **kw)) == flat(tdata.DataLoader(TSquares(), **kw))


@pytest.mark.parametrize("workers", [0, 2])
def test_unshuffled_loading_leaves_the_global_rng_alone(workers: int) -> None:
    """A trainer checkpoints the global RNG: loading without shuffling must not draw from it."""
    ag.manual_seed(4)
    before = ag.get_rng_state()
    list(data.DataLoader(data.TensorDataset(ag.arange(6)), batch_size=2, num_workers=workers))
    assert ag.get_rng_state() == before


# ----------------------------------------------------------------- the batch fast path
def _override_classes(m: Any) -> dict[str, Any]:
    """User classes over ``m.utils.data`` (autogradcli's or torch's), identical for both."""
    d = m.utils.data

    class Doubled(d.Subset):
        """A Subset whose samples are doubled: only ``__getitem__`` is overridden."""

        def __getitem__(self, i: Any) -> Any:
            x, y = super().__getitem__(i)
            return x * 2, y

    class DoubledWithGetitems(Doubled):
        """The same, with the ``__getitems__`` that torch requires of such a subclass."""

        def __getitems__(self, indices: list[int]) -> list[Any]:
            return [self[i] for i in indices]

    class Negated(d.TensorDataset):
        """A TensorDataset whose ``__getitem__`` negates x."""

        def __getitem__(self, i: Any) -> Any:
            x, y = super().__getitem__(i)
            return -x, y

    class Batched(d.Dataset):
        """A dataset with PyTorch 2.x's batched fetch: ``__getitems__`` gets the batch's indices
        and records them."""

        def __init__(self) -> None:
            self.calls: list[list[int]] = []

        def __len__(self) -> int:
            return 7

        def __getitem__(self, i: int) -> Any:
            raise AssertionError("the loader must call __getitems__, not __getitem__")

        def __getitems__(self, indices: list[int]) -> list[Any]:
            self.calls.append(list(indices))
            return [(float(i) * 10, i) for i in indices]

    return {
        "Doubled": Doubled,
        "DoubledWithGetitems": DoubledWithGetitems,
        "Negated": Negated,
        "Batched": Batched,
    }


def _xy(m: Any) -> Any:
    x = m.arange(1.0, 9.0).reshape(4, 2)
    return m.utils.data.TensorDataset(x, m.arange(4))


def test_subset_subclass_override_wins_in_the_loader() -> None:
    """A Subset subclass that doubles x gives doubled batches, as indexing it does (the fast
    path used to unwrap it and return the raw rows). torch refuses such a class unless it also
    defines ``__getitems__``; with one, its batches are the truth."""
    torch = pytest.importorskip("torch")
    ours, theirs = _override_classes(ag), _override_classes(torch)
    ds = ours["Doubled"](_xy(ag), [1, 3, 0])
    assert ds[0][0].tolist() == [6.0, 8.0]
    want = flat(
        torch.utils.data.DataLoader(theirs["DoubledWithGetitems"](_xy(torch), [1, 3, 0]), 2)
    )
    with pytest.raises(NotImplementedError):
        theirs["Doubled"](_xy(torch), [1, 3, 0])
    for name in ("Doubled", "DoubledWithGetitems"):
        for workers in (0, 2):
            loader = data.DataLoader(ours[name](_xy(ag), [1, 3, 0]), 2, num_workers=workers)
            assert flat(loader) == want, (name, workers)


def test_tensor_dataset_subclass_override_wins_in_the_loader() -> None:
    """A TensorDataset subclass overriding ``__getitem__``, alone and under a plain Subset
    (random_split), gives the batches torch's DataLoader gives."""
    torch = pytest.importorskip("torch")
    ours, theirs = _override_classes(ag), _override_classes(torch)
    a, t = ours["Negated"](*_xy(ag).tensors), theirs["Negated"](*_xy(torch).tensors)
    assert flat(data.DataLoader(a, 3)) == flat(torch.utils.data.DataLoader(t, 3))
    sa, st = data.Subset(a, [2, 0, 3]), torch.utils.data.Subset(t, [2, 0, 3])
    assert flat(data.DataLoader(sa, 2)) == flat(torch.utils.data.DataLoader(st, 2))


def test_getitems_is_called_once_per_batch_as_torch_does() -> None:
    """``__getitems__`` gets each batch's indices (a list of ints), directly and through a
    Subset, and its samples are collated; the calls and batches equal torch's."""
    torch = pytest.importorskip("torch")
    for wrap_in_subset in (False, True):
        results = []
        for m in (ag, torch):
            ds = _override_classes(m)["Batched"]()
            top = m.utils.data.Subset(ds, [6, 5, 4, 0, 1]) if wrap_in_subset else ds
            batches = flat(m.utils.data.DataLoader(top, batch_size=3))
            results.append((batches, ds.calls))
        assert results[0] == results[1]
        assert all(type(i) is int for call in results[0][1] for i in call)


def test_getitems_none_opts_out_as_in_torch() -> None:
    """A dataset may set ``__getitems__ = None``: the loader then indexes sample by sample."""
    torch = pytest.importorskip("torch")
    out = []
    for m in (ag, torch):

        class Plain(m.utils.data.Dataset):
            __getitems__ = None

            def __len__(self) -> int:
                return 3

            def __getitem__(self, i: int) -> Any:
                return i * 3

        out.append(flat(m.utils.data.DataLoader(Plain(), batch_size=2)))
    assert out[0] == out[1]


def test_exact_builtin_types_keep_the_fast_path(monkeypatch: Any) -> None:
    """A TensorDataset, and a Subset of one, are batched by indexing whole tensors: no
    per-sample ``__getitem__`` call (the fast path's speed)."""

    def refuse(self: Any, i: Any) -> Any:
        raise AssertionError("per-sample __getitem__ on the fast path")

    monkeypatch.setattr(data.TensorDataset, "__getitem__", refuse)
    ds = _xy(ag)
    for top in (ds, data.Subset(ds, [3, 1, 2]), data.Subset(data.Subset(ds, [3, 1, 2]), [2, 0])):
        batches = list(data.DataLoader(top, batch_size=2))
        assert batches and all(len(b) == 2 for b in batches)
    x, y = next(iter(data.DataLoader(data.Subset(ds, [3, 1]), batch_size=2)))
    assert x.tolist() == [[7.0, 8.0], [3.0, 4.0]] and y.tolist() == [3, 1]


def test_reassigned_subset_indices_reach_the_fast_path() -> None:
    """``subset.indices = [...]`` after construction: the loader follows the new indices."""
    torch = pytest.importorskip("torch")
    batches = []
    for m in (ag, torch):
        sub = m.utils.data.Subset(_xy(m), [0, 1])
        sub.indices = [3, 2]
        batches.append(flat(m.utils.data.DataLoader(sub, batch_size=2)))
    assert batches[0] == batches[1]
