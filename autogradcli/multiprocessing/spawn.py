"""``spawn`` (``start_processes``): start ``nprocs`` processes running ``fn(i, *args)`` and join them, re-raising a
child's exception in the parent with its traceback (PyTorch's ``torch.multiprocessing.spawn``)."""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import tempfile
import traceback
from collections.abc import Callable
from typing import Any


class ProcessException(Exception):
    """A spawned process failed; ``error_index`` is its index and ``pid`` its process id."""

    def __init__(self, msg: str, error_index: int, pid: int) -> None:
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.pid = pid

    def __reduce__(self) -> Any:
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A spawned process raised an exception (its traceback is in the message)."""


class ProcessExitedException(ProcessException):
    """A spawned process exited with a non-zero code or was killed by a signal."""

    def __init__(
        self,
        msg: str,
        error_index: int,
        error_pid: int,
        exit_code: int,
        signal_name: str | None = None,
    ) -> None:
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self) -> Any:
        return (
            type(self),
            (self.msg, self.error_index, self.pid, self.exit_code, self.signal_name),
        )


def _wrap(fn: Callable, i: int, args: tuple, error_file: str) -> None:
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent is stopping everyone
    except Exception:
        with open(error_file, "w") as f:
            f.write(traceback.format_exc())
        sys.exit(1)


class ProcessContext:
    """The started processes; ``join`` waits for them and raises the first failure."""

    def __init__(self, processes: list[Any], error_files: list[str]) -> None:
        self.processes = processes
        self.error_files = error_files
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self) -> list[int]:
        return [int(p.pid) for p in self.processes]

    def join(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` s; True when all finished well, raises when one failed."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(list(self.sentinels), timeout=timeout)
        failed = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            process = self.processes[index]
            process.join()
            if process.exitcode != 0:
                failed = index
                break
        if failed is None:
            if not self.sentinels:
                self._remove_error_files()
            return not self.sentinels
        for process in self.processes:
            if process.is_alive():
                process.terminate()
            process.join()
        self._raise(failed)
        return False  # unreachable

    def _raise(self, index: int) -> None:
        process = self.processes[index]
        trace = ""
        if os.path.exists(self.error_files[index]):
            with open(self.error_files[index]) as f:
                trace = f.read()
        self._remove_error_files()
        if trace:
            msg = f"\n\n-- Process {index} terminated with the following error:\n{trace}"
            raise ProcessRaisedException(msg, index, process.pid)
        code = process.exitcode
        if code < 0:
            name = signal.Signals(-code).name
            raise ProcessExitedException(
                f"process {index} terminated with signal {name}", index, process.pid, code, name
            )
        raise ProcessExitedException(
            f"process {index} terminated with exit code {code}", index, process.pid, code
        )

    def _remove_error_files(self) -> None:
        for path in self.error_files:
            if os.path.exists(path):
                os.remove(path)


def start_processes(
    fn: Callable,
    args: tuple = (),
    nprocs: int = 1,
    join: bool = True,
    daemon: bool = False,
    start_method: str = "spawn",
) -> ProcessContext | None:
    """Start ``nprocs`` processes of ``fn(i, *args)`` with ``start_method``; join unless asked not to."""
    ctx = multiprocessing.get_context(start_method)
    processes, error_files = [], []
    for i in range(nprocs):
        fd, error_file = tempfile.mkstemp(prefix="autogradcli_spawn_")
        os.close(fd)
        os.remove(error_file)  # the child creates it only if it fails
        process = ctx.Process(target=_wrap, args=(fn, i, args, error_file), daemon=daemon)
        process.start()
        processes.append(process)
        error_files.append(error_file)
    context = ProcessContext(processes, error_files)
    if not join:
        return context
    while not context.join():
        pass
    return None


# torch.multiprocessing.spawn is start_processes with the spawn start method, its default here
spawn = start_processes
