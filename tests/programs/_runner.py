"""Run corpus programs on one engine: import it once, then fork one child process per program.

    python tests/programs/_runner.py {autogradcli|torch} RESULTS.json PROGRAM.py ...

Each child runs its program as ``__main__`` in a fresh temporary directory, with its output
captured; RESULTS.json maps each program's file name to its exit code, wall and CPU seconds, and output. Forking
after the import (and after one optimizer step, which imports more on first use) spares every
program the engine's import time (about 2 s for torch here, 1 s more for the first step).
"""

from __future__ import annotations

import json
import os
import runpy
import signal
import sys
import tempfile
import time
import traceback

TIMEOUT_S = 120


def _child(path: str, out_fd: int, workdir: str) -> int:
    os.dup2(out_fd, 1)
    os.dup2(out_fd, 2)
    signal.alarm(TIMEOUT_S)
    os.chdir(workdir)
    sys.argv = [path]
    sys.path.insert(0, os.path.dirname(path))
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as e:
        code = e.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    except BaseException:
        traceback.print_exc()
        return 1
    return 0


def _run_one(path: str) -> dict:
    with tempfile.TemporaryDirectory() as workdir, tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                code = _child(path, out.fileno(), workdir)
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        _, status, usage = os.wait4(pid, 0)
        seconds = time.perf_counter() - start
        cpu = usage.ru_utime + usage.ru_stime
        out.seek(0)
        output = out.read().decode("utf-8", "replace")
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        why = "timed out" if sig == signal.SIGALRM else f"killed by signal {sig}"
        return {"rc": -sig, "seconds": seconds, "cpu": cpu, "output": output + f"\n[runner: {why}]"}
    return {"rc": os.WEXITSTATUS(status), "seconds": seconds, "cpu": cpu, "output": output}


def _warm_up_lazy_imports() -> None:
    """One optimizer step on a throwaway parameter, so the imports it triggers on first use
    (torch.optim's step imports torch._dynamo and sympy: about 1 s of CPU) happen once here and
    not again in every forked program. It draws no random numbers and leaves no global state."""
    import autogradcli as engine

    param = engine.nn.Parameter(engine.zeros(2))
    opt = engine.optim.SGD([param], lr=0.1)
    param.sum().backward()
    opt.step()


def main(argv: list[str]) -> int:
    engine, results_path, programs = argv[0], argv[1], argv[2:]
    if engine == "torch":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import _torch_shim

        _torch_shim.install()
    import autogradcli  # noqa: F401  (torch under the shim): imported once, before the forks

    _warm_up_lazy_imports()
    results = {os.path.basename(p): _run_one(os.path.abspath(p)) for p in programs}
    with open(results_path, "w") as fh:
        json.dump(results, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
