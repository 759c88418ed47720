"""Helpers for the service's tests: apps on the embedded store or on a Redis, free ports,
a Redis server of our own that a test may kill."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fastapi import FastAPI
from fastapi.testclient import TestClient

from service.app import create_app
from service.settings import Settings

REDIS_URL = "redis://127.0.0.1:6379/0"
TRAIN = {"model": "llama-3-8b", "seq_len": 4096, "zero_stage": 3, "gpu": "a100-40gb"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def redis_answers(host: str = "127.0.0.1", port: int = 6379) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.2) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def make_app(**settings: object) -> FastAPI:
    return create_app(Settings(**settings))  # type: ignore[arg-type]


def prefix() -> str:
    return f"fitcheck-test-{uuid.uuid4().hex[:12]}:"


@contextmanager
def client(**settings: object) -> Iterator[TestClient]:
    with TestClient(make_app(**settings)) as c:
        yield c


@contextmanager
def hung_server() -> Iterator[int]:
    """A port on 127.0.0.1 that accepts connections (the kernel's backlog) and never answers:
    a Redis that hangs."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    try:
        yield sock.getsockname()[1]
    finally:
        sock.close()


class OwnRedis:
    """A redis-server on a free port; ``kill()`` ends it mid-test (SIGKILL: a crash, not a
    clean shutdown). With ``directory`` it keeps an append-only file there, so a new server on
    the same directory finds the data again; without, it keeps nothing."""

    def __init__(self, port: int | None = None, directory: Path | None = None) -> None:
        self.port = port or free_port()
        binary = shutil.which("redis-server")
        assert binary, "redis-server is not installed"
        persistence = (["--appendonly", "yes", "--appendfsync", "everysec", "--dir",
                        str(directory)] if directory is not None else ["--appendonly", "no"])
        self.process = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             *persistence], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while not redis_answers(port=self.port):
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.kill()
                raise RuntimeError("redis-server did not start")
            time.sleep(0.02)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
