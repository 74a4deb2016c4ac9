"""Against a real Chroma server started with `chroma run` on 127.0.0.1."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from langmem_ext import Memory, Settings

pytestmark = pytest.mark.chroma_server


def _chroma_bin() -> str | None:
    local = Path(sys.executable).parent / "chroma"
    return str(local) if local.exists() else shutil.which("chroma")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ChromaServer:
    def __init__(self, data: Path) -> None:
        self.data = data
        self.port = _free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        binary = _chroma_bin()
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
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("chroma server did not start")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=30)
            self.proc = None


@pytest.fixture
def chroma_server(tmp_path: Path) -> Iterator[ChromaServer]:
    if _chroma_bin() is None:
        pytest.skip("the `chroma` CLI is not installed")
    server = ChromaServer(tmp_path / "chroma-data")
    server.start()
    yield server
    server.stop()


def test_memory_on_a_chroma_server(tmp_path: Path, chroma_server: ChromaServer) -> None:
    s = Settings(workspace=tmp_path / "ws")
    s.index.chroma_url = chroma_server.url
    s.index.exact_search_max_entries = 0  # vector queries go to the server, not to memory
    with Memory(settings=s) as mem:
        p = mem.save("主人喜欢吃拉面")
        e = mem.confirm(p.id)
        mem.add("I am allergic to peanuts")
        assert mem.search("拉面", k=1, mode="vector")[0].id == e.id
        assert mem.workspace.vectors.count("main") == 2
        # Nothing vector-related was written locally: the server holds the vectors.
        assert not (s.workspace / ".index" / "chroma").exists()

        chroma_server.stop()
        # Server down: writes stay durable in Markdown; search degrades to keywords.
        eid = mem.add("Wir treffen uns jeden Freitag im Kletterzentrum")
        assert "Kletterzentrum" in (s.workspace / "MEMORY.md").read_text()
        report = mem.sync()
        assert report.vector_error and "chroma run" in report.vector_error
        assert mem.stats()["vectors_waiting"] == 1
        hits = mem.search("Kletterzentrum", k=1)
        assert hits and hits[0].id == eid  # keyword fallback, no crash

        chroma_server.start()
        mem.sync()
        assert mem.stats()["vectors_waiting"] == 0
        assert mem.search("climbing gym on Fridays", k=1, mode="vector")[0].id == eid
