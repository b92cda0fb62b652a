"""The RPC agent: a TCP listener whose requests a pool of worker threads serves, one outgoing
connection per peer whose replies complete the callers' futures, and the table of values this
worker owns for RRefs.

Handlers run one at a time (the engine's grad mode is process-wide), but a handler that blocks on
another RPC lets the others run, so nested and re-entrant calls (distributed backward going back
and forth between workers) cannot deadlock.
"""

from __future__ import annotations

import contextlib
import itertools
import pickle
import queue
import socket
import threading
import traceback
from collections.abc import Callable, Iterator
from typing import Any

from ... import futures
from ...futures import Future
from ..autograd import store as dist_ctx
from . import wire
from .deadlines import Deadlines
from .options import TensorPipeRpcBackendOptions, WorkerInfo
from .rendezvous import rendezvous

_engine = threading.Lock()
_holder = threading.local()


@contextlib.contextmanager
def _handling() -> Iterator[None]:
    _engine.acquire()
    _holder.held = True
    try:
        yield
    finally:
        _holder.held = False
        _engine.release()


@contextlib.contextmanager
def _blocking() -> Iterator[None]:
    """Around a blocking wait: a handler lets the other handlers run meanwhile."""
    if not getattr(_holder, "held", False):
        yield
        return
    _holder.held = False
    _engine.release()
    try:
        yield
    finally:
        _engine.acquire()
        _holder.held = True


class RemoteError:
    """A remote function's exception, as it travels back to the caller."""

    def __init__(self, error: BaseException, worker: WorkerInfo) -> None:
        self.exc_type = type(error)
        self.message = f"On {worker!r}:\n{error!r}\n{traceback.format_exc()}"

    def __reduce__(self) -> Any:
        return _remote_error, (_picklable_type(self.exc_type), self.message)

    def to_exception(self) -> BaseException:
        """The exception to raise in the caller: its type, the remote traceback as message."""
        try:
            return self.exc_type(self.message)
        except Exception:
            return RuntimeError(self.message)


def _picklable_type(cls: type) -> type:
    try:
        pickle.dumps(cls)
        return cls
    except Exception:
        return RuntimeError


def _remote_error(exc_type: type, message: str) -> RemoteError:
    out = RemoteError.__new__(RemoteError)
    out.exc_type, out.message = exc_type, message
    return out


class _Connection:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.lock = threading.Lock()

    def send(self, data: bytes) -> None:
        wire.send_frame(self.sock, self.lock, data)


class RpcAgent:
    """This worker's end of RPC: serves requests and sends its own."""

    def __init__(
        self, name: str, rank: int, world_size: int, options: TensorPipeRpcBackendOptions
    ) -> None:
        self.options = options
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind(("", 0))
        self.listener.listen(64)
        try:
            table = rendezvous(
                options.init_method,
                name,
                rank,
                world_size,
                self.listener.getsockname()[1],
                options.rpc_timeout if options.rpc_timeout > 0 else 1800.0,
            )
        except BaseException:
            self.listener.close()
            raise
        self.info = WorkerInfo(name, rank)
        self.workers = [WorkerInfo(n, i) for i, (n, _, _) in enumerate(table)]
        self.addresses = [(host, port) for _, host, port in table]
        self._ids = itertools.count()
        self._pending: dict[int, tuple[Future, int | None, int]] = {}
        self._pending_lock = threading.Lock()
        self._out: dict[int, _Connection] = {}
        self._out_lock = threading.Lock()
        self._accepted: list[socket.socket] = []
        self._in_flight = 0
        self._idle = threading.Condition()
        self._owned: dict[Any, Future] = {}
        self._owned_lock = threading.Lock()
        self._requests: queue.Queue = queue.Queue()
        self._deadlines = Deadlines(self._expire)
        self._stopped = False

    def start(self) -> None:
        """Start serving (once the agent is reachable as the current one: the peers may call
        at once, and their functions look it up)."""
        threads = [threading.Thread(target=self._accept_loop, daemon=True)]
        for _ in range(self.options.num_worker_threads):
            threads.append(threading.Thread(target=self._serve_loop, daemon=True))
        for thread in threads:
            thread.start()
        futures._blocking = _blocking

    # ----------------------------------------------------------------- names
    def worker(self, to: Any) -> WorkerInfo:
        """The WorkerInfo of ``to``: a name, an id or a WorkerInfo."""
        if isinstance(to, WorkerInfo):
            return self.workers[to.id]
        if isinstance(to, int):
            if not 0 <= to < len(self.workers):
                raise ValueError(f"Unknown destination worker id {to}")
            return self.workers[to]
        for info in self.workers:
            if info.name == to:
                return info
        raise ValueError(f"Unknown destination worker {to}")

    # ----------------------------------------------------------------- calling
    def call(
        self, to: int, fn: Callable, args: tuple, kwargs: dict, timeout: float | None = None
    ) -> Future:
        """Send ``fn(*args, **kwargs)`` to worker ``to``; the future of its result, failed if no
        reply came within ``timeout`` seconds (None: no limit)."""
        if self._stopped:
            raise RuntimeError("RPC has not been initialized or has been shut down")
        ctx = dist_ctx.current()
        body, grad_tensors = wire.dumps((fn, args, kwargs))
        send_id = -1
        if ctx is not None and grad_tensors:
            send_id = ctx.record_send(grad_tensors, to)
        msg_id = next(self._ids)
        fut: Future = Future()
        with self._pending_lock:
            self._pending[msg_id] = (fut, ctx.id if ctx is not None else None, to)
        if timeout is not None:
            self._deadlines.add(msg_id, timeout)
        header = (msg_id, self.info.id, ctx.id if ctx is not None else None, send_id)
        try:
            self._connection(to).send(pickle.dumps((header, body), pickle.HIGHEST_PROTOCOL))
        except OSError as error:
            with self._pending_lock:
                self._pending.pop(msg_id, None)
            fut.set_exception(RuntimeError(f"RPC to {self.workers[to]!r} failed: {error}"))
        return fut

    def _connection(self, to: int) -> _Connection:
        with self._out_lock:
            conn = self._out.get(to)
            if conn is None:
                sock = socket.create_connection(self.addresses[to])
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                conn = self._out[to] = _Connection(sock)
                reader = threading.Thread(target=self._reply_loop, args=(sock, to), daemon=True)
                reader.start()
        return conn

    def _reply_loop(self, sock: socket.socket, peer: int) -> None:
        while True:
            frame = wire.recv_frame(sock)
            if frame is None:
                self._fail_pending(peer)
                return
            msg_id, send_id, payload = pickle.loads(frame)
            with self._pending_lock:
                entry = self._pending.pop(msg_id, None)
            if entry is None:
                continue  # timed out already
            fut, ctx_id, _ = entry
            try:
                (ok, value), leaves = wire.loads(payload)
            except Exception as error:
                fut.set_exception(error)
                continue
            if leaves and ctx_id is not None:
                dist_ctx.get_or_create(ctx_id).record_recv(peer, send_id, leaves)
            outcome = (fut.set_result, value) if ok else (fut.set_exception, value.to_exception())
            if fut._callbacks:  # they may block on RPC replies that only this thread reads
                threading.Thread(target=outcome[0], args=(outcome[1],), daemon=True).start()
            else:
                outcome[0](outcome[1])

    def _expire(self, msg_id: int, seconds: float) -> None:
        with self._pending_lock:
            entry = self._pending.pop(msg_id, None)
        if entry is not None:
            entry[0].set_exception(
                RuntimeError(
                    f"RPC ran for more than set timeout ({int(seconds * 1000)} ms) and will now "
                    "be marked with an error"
                )
            )

    def _fail_pending(self, peer: int) -> None:
        with self._pending_lock:
            lost = [m for m, (_, _, to) in self._pending.items() if to == peer]
            failed = [self._pending.pop(m)[0] for m in lost]
        for fut in failed:
            fut.set_exception(RuntimeError(f"the connection to {self.workers[peer]!r} was lost"))

    # ----------------------------------------------------------------- serving
    def _accept_loop(self) -> None:
        while True:
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._accepted.append(sock)
            conn = _Connection(sock)
            threading.Thread(target=self._request_loop, args=(conn,), daemon=True).start()

    def _request_loop(self, conn: _Connection) -> None:
        while True:
            frame = wire.recv_frame(conn.sock)
            if frame is None:
                return
            with self._idle:
                self._in_flight += 1
            self._requests.put((conn, frame))

    def _serve_loop(self) -> None:
        while True:
            item = self._requests.get()
            if item is None:
                return
            self._serve(*item)

    def _serve(self, conn: _Connection, frame: bytes) -> None:
        (msg_id, caller, ctx_id, send_id), body = pickle.loads(frame)
        ctx = dist_ctx.get_or_create(ctx_id) if ctx_id is not None else None
        fn = None
        with _handling():
            prev = dist_ctx.set_current(ctx)
            try:
                (fn, args, kwargs), leaves = wire.loads(body)
                if ctx is not None and leaves:
                    ctx.record_recv(caller, send_id, leaves)
                result = fn(*args, **(kwargs or {}))
            except Exception as error:
                self._reply(conn, msg_id, caller, ctx, False, RemoteError(error, self.info))
                return
            finally:
                dist_ctx.set_current(prev)
        if getattr(fn, "_wrapped_async_rpc_function", None) is not None and isinstance(
            result, Future
        ):
            result.add_done_callback(lambda f: self._reply_future(conn, msg_id, caller, ctx, f))
            return
        self._reply(conn, msg_id, caller, ctx, True, result)

    def _reply_future(
        self, conn: _Connection, msg_id: int, caller: int, ctx: Any, fut: Future
    ) -> None:
        try:
            value = fut.value()
        except Exception as error:
            self._reply(conn, msg_id, caller, ctx, False, RemoteError(error, self.info))
            return
        self._reply(conn, msg_id, caller, ctx, True, value)

    def _reply(
        self, conn: _Connection, msg_id: int, caller: int, ctx: Any, ok: bool, value: Any
    ) -> None:
        try:
            payload, grad_tensors = wire.dumps((ok, value))
        except Exception as error:
            try:
                raise RuntimeError(f"the result of the RPC could not be sent: {error}") from error
            except RuntimeError as wrapped:
                payload, grad_tensors = wire.dumps((False, RemoteError(wrapped, self.info)))
        send_id = -1
        if ctx is not None and grad_tensors:
            send_id = ctx.record_send(grad_tensors, caller)
        with contextlib.suppress(OSError):  # the caller may be gone
            conn.send(pickle.dumps((msg_id, send_id, payload), pickle.HIGHEST_PROTOCOL))
        with self._idle:
            self._in_flight -= 1
            self._idle.notify_all()

    # ----------------------------------------------------------------- RRef values
    def owned(self, rref_id: Any) -> Future:
        """The future of the value this worker owns under ``rref_id`` (made on first use)."""
        with self._owned_lock:
            fut = self._owned.get(rref_id)
            if fut is None:
                fut = self._owned[rref_id] = Future()
            return fut

    def new_rref_id(self) -> tuple[int, int]:
        """An RRef id unique across workers: (this worker's id, a counter)."""
        return (self.info.id, next(self._ids))

    # ----------------------------------------------------------------- stopping
    def outstanding(self) -> list[Future]:
        """The futures of this worker's calls still waiting for a reply."""
        with self._pending_lock:
            return [fut for fut, _, _ in self._pending.values()]

    def stop(self, timeout: float) -> None:
        """Wait (up to ``timeout`` s) for the replies still owed, then close every socket."""
        with self._idle:
            self._idle.wait_for(lambda: self._in_flight == 0, timeout)
        self._stopped = True
        self._deadlines.stop()
        for sock in [self.listener, *self._accepted, *(c.sock for c in self._out.values())]:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        for _ in range(self.options.num_worker_threads):
            self._requests.put(None)
        futures._blocking = None
