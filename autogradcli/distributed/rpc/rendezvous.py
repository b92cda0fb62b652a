"""How the workers find each other: rank 0 listens on the master address, every other worker
connects there and sends its name and the port it serves on; rank 0 answers everyone with the
table of all workers (JSON, one line each way)."""

from __future__ import annotations

import json
import os
import socket
import time
from urllib.parse import urlparse

Table = list[tuple[str, str, int]]  # (name, host, port) by rank


def master_address(init_method: str) -> tuple[str, int]:
    """(host, port) of the rendezvous: ``env://`` reads MASTER_ADDR/MASTER_PORT, ``tcp://h:p``."""
    if init_method.startswith("env://"):
        values = []
        for key in ("MASTER_ADDR", "MASTER_PORT"):
            if key not in os.environ:
                raise ValueError(
                    "Error initializing torch.distributed using env:// rendezvous: environment "
                    f"variable {key} expected, but not set"
                )
            values.append(os.environ[key])
        return values[0], int(values[1])
    if init_method.startswith("tcp://"):
        parsed = urlparse(init_method)
        if parsed.hostname is None or parsed.port is None:
            raise ValueError(
                f"init_method {init_method!r} needs a host and a port: tcp://HOST:PORT"
            )
        return parsed.hostname, parsed.port
    raise ValueError(f"init_method {init_method!r} is not supported: use env:// or tcp://HOST:PORT")


def rendezvous(
    init_method: str, name: str, rank: int, world_size: int, port: int, timeout: float
) -> Table:
    """The (name, host, port) of every worker, once all ``world_size`` of them have arrived."""
    host, master_port = master_address(init_method)
    if rank == 0:
        return _gather(host, master_port, name, world_size, port, timeout)
    return _join(host, master_port, name, rank, port, timeout)


def _gather(
    host: str, master_port: int, name: str, world_size: int, port: int, timeout: float
) -> Table:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("", master_port))
    server.listen(world_size)
    server.settimeout(timeout)
    table: dict[int, tuple[str, str, int]] = {0: (name, host, port)}
    peers = []
    try:
        while len(table) < world_size:
            conn, addr = server.accept()
            conn.settimeout(timeout)
            their_name, their_rank, their_port = json.loads(_read_line(conn))
            peers.append(conn)
            problem = _check(table, their_name, their_rank, world_size)
            if problem:
                for c in peers:
                    c.sendall((json.dumps({"error": problem}) + "\n").encode())
                raise RuntimeError(problem)
            table[their_rank] = (their_name, addr[0], their_port)
        ordered = [table[r] for r in range(world_size)]
        for conn in peers:
            conn.sendall((json.dumps({"table": ordered}) + "\n").encode())
    except TimeoutError:
        raise RuntimeError(
            f"init_rpc: only {len(table)} of {world_size} workers arrived within {timeout} s"
        ) from None
    finally:
        for conn in peers:
            conn.close()
        server.close()
    return [tuple(entry) for entry in ordered]


def _check(table: dict[int, tuple[str, str, int]], name: str, rank: int, world_size: int) -> str:
    if not 0 <= rank < world_size:
        return f"init_rpc: rank {rank} is out of range for world_size {world_size}"
    if rank in table:
        return f"init_rpc: two workers have rank {rank}"
    if any(entry[0] == name for entry in table.values()):
        return f"init_rpc: two workers are named {name!r}; worker names must be unique"
    return ""


def _join(host: str, master_port: int, name: str, rank: int, port: int, timeout: float) -> Table:
    deadline = time.monotonic() + timeout
    while True:
        try:
            conn = socket.create_connection((host, master_port), timeout=timeout)
            break
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"init_rpc: could not reach the master at {host}:{master_port} within {timeout} s"
                ) from None
            time.sleep(0.05)
    with conn:
        conn.sendall((json.dumps([name, rank, port]) + "\n").encode())
        answer = json.loads(_read_line(conn))
    if "error" in answer:
        raise RuntimeError(answer["error"])
    return [tuple(entry) for entry in answer["table"]]


def _read_line(conn: socket.socket) -> str:
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(65536)
        if not chunk:
            raise RuntimeError("init_rpc: a worker closed the rendezvous connection early")
        data += chunk
    return data.decode()
