"""A fork server for the hostile suite (no tests here): imports agrad once, then runs each request
as ``python -m autogradcli.cli ARGV`` would, in a forked child process of its own.

Started by hostile_harness under the suite's memory limit, which every child inherits. Requests
are JSON lines on stdin ``{argv, cwd, env, out, err, timeout}`` (``env``: the child's whole
environment); each reply a JSON line ``{code, timed_out}``: the child's exit code (minus the
signal that ended it, as subprocess reports it), its stdout and stderr in the files ``out`` and
``err``. The child exits as the
interpreter would: non-daemon threads joined, atexit handlers run, streams flushed.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import sys
import threading
import time
import traceback

# what the commands import (a fresh `agrad train` has all of these loaded before it trains)
import autogradcli.cli
import autogradcli.cli.app
import autogradcli.config
import autogradcli.data
import autogradcli.serialization
import autogradcli.trainer

MAIN = os.path.join(os.path.dirname(autogradcli.cli.__file__), "__main__.py")


def _exit_code(err: SystemExit) -> int:
    code = err.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _child(request: dict, reply_fd: int) -> None:
    os.close(reply_fd)
    stdin = os.open(os.devnull, os.O_RDONLY)
    os.dup2(stdin, 0)
    for fd, path in ((1, request["out"]), (2, request["err"])):
        os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = [MAIN, *request["argv"]]
    code = 1
    try:
        try:
            code = _exit_code(SystemExit(autogradcli.cli.main()))
        except SystemExit as err:
            code = _exit_code(err)
        except BaseException:
            traceback.print_exc()
            code = 1
        threading._shutdown()  # as at interpreter exit: wait for non-daemon threads
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


def _wait(pid: int, timeout: float) -> tuple[int, bool]:
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            return -9, True
        time.sleep(0.005)
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status), False
    return os.WEXITSTATUS(status), False


def serve() -> None:
    reply_fd = os.dup(1)
    for line in sys.stdin:
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(request, reply_fd)
        code, timed_out = _wait(pid, request["timeout"])
        os.write(reply_fd, (json.dumps({"code": code, "timed_out": timed_out}) + "\n").encode())


if __name__ == "__main__":
    serve()
