"""A ``langmem-ext serve`` process for the benchmarks that talk to a server."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx

CLI = [sys.executable, "-m", "langmem_ext.cli"]


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serve(workspace: Path, log: Path, env: dict[str, str]) -> Iterator[str]:
    """A ``serve`` process until the block ends; yields its URL once healthy."""
    port = free_port()
    workspace.mkdir(parents=True, exist_ok=True)
    with log.open("w") as out:
        proc = subprocess.Popen(
            [*CLI, "--workspace", str(workspace), "serve", "--port", str(port), "--scripted"],
            stdout=out, stderr=subprocess.STDOUT, env=env,
        )  # fmt: skip
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 180
            while True:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"serve did not start:\n{log.read_text()}")
                try:
                    if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                time.sleep(0.1)
            yield url
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=120)


def admin_url(stack: ExitStack, given: str | None) -> str:
    """The PostgreSQL server's admin URL: ``given``, else a local server started for
    the run (stopped when ``stack`` closes)."""
    if given is not None:
        return given
    from langmem_ext.workspace.postgres.local_server import start_local_server

    server = start_local_server()
    stack.callback(server.stop)
    return server.url
