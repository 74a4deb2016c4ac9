"""A real Chroma server (``chroma run`` on 127.0.0.1) for the tests of the vector
index on a server (fixtures registered by ``tests/conftest.py``).

:class:`ChromaServer` starts and stops one on a data folder outside the checkout;
``chroma_server_url`` is one server for the whole session (each test keeps its
vectors apart by a collection prefix of its own). A test that needs it is skipped,
with the reason, when the ``chroma`` CLI is missing or the server does not start.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


def chroma_bin() -> str | None:
    """The ``chroma`` CLI of this environment (``None`` when not installed)."""
    local = Path(sys.executable).parent / "chroma"
    return str(local) if local.exists() else shutil.which("chroma")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ChromaServer:
    """A ``chroma run`` process on a free port of 127.0.0.1, keeping its data in ``data``."""

    def __init__(self, data: Path) -> None:
        self.data = data
        self.port = _free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        binary = chroma_bin()
        assert binary
        self.proc = subprocess.Popen(
            [
                binary,
                "run",
                "--path",
                str(self.data),
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"chroma run exited with code {self.proc.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError("chroma server did not start within 60 s")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=30)
            self.proc = None


@pytest.fixture(scope="session")
def chroma_server_url() -> Iterator[str]:
    """The URL of a Chroma server for the session (skips with the reason when none starts)."""
    if chroma_bin() is None:
        pytest.skip("the `chroma` CLI is not installed")
    data = Path(tempfile.mkdtemp(prefix="langmem-chroma-"))
    server = ChromaServer(data)
    try:
        server.start()
    except RuntimeError as e:
        shutil.rmtree(data, ignore_errors=True)
        pytest.skip(f"no Chroma server could be started: {e}")
    try:
        yield server.url
    finally:
        server.stop()
        shutil.rmtree(data, ignore_errors=True)
