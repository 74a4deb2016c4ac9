"""A real ``langmem-ext serve`` process running this checkout's code, for API tests."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-c", "import sys; from langmem_ext.cli.app import main; sys.exit(main())"]
"""``langmem-ext`` of this checkout (the console script may belong to another one)."""


def checkout_env(**extra: str) -> dict[str, str]:
    """The environment of a subprocess running this checkout's ``langmem_ext``."""
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "ANONYMIZED_TELEMETRY": "False",
        "LANGMEM_LIFECYCLE__DAILY_JOBS": "false",
        **extra,
    }


@contextmanager
def served(workspace: Path, log: Path, *args: str, **env: str) -> Iterator[str]:
    """Run ``langmem-ext --workspace W serve --port N --scripted *args`` until the block
    ends; yields its URL once ``/healthz`` answers. Stopped with SIGTERM: it must
    exit 0 without a traceback."""
    port = _port()
    with log.open("w") as out:
        proc = subprocess.Popen(
            [*CLI, "--workspace", str(workspace), "serve", "--port", str(port), "--scripted",
             *args],
            stdout=out, stderr=subprocess.STDOUT, env=checkout_env(**env), cwd=workspace.parent,
        )  # fmt: skip
        try:
            url = f"http://127.0.0.1:{port}"
            _healthy(url, proc, log)
            yield url
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
            code = proc.wait(timeout=120)
    output = log.read_text()
    assert code == 0, output
    assert "Traceback" not in output, output


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _healthy(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 180  # serve loads the embedding model before it answers
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text()
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"serve did not start:\n{log.read_text()}")


def _console_script() -> str:
    script = Path(sys.executable).parent / "langmem-ext"
    assert script.exists(), f"{script} missing: pip install -e . in this environment"
    return str(script)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def langmem_serve(tmp_path: Path, *args: str, env: dict[str, str]) -> Iterator[tuple[str, Path]]:
    """Start ``langmem-ext --workspace … serve --port N *args``; yield (url, its log file)."""
    port = _free_port()
    log_path = tmp_path / "serve.log"
    log = log_path.open("w")
    proc = subprocess.Popen(
        [
            _console_script(),
            "--workspace",
            str(tmp_path / "ws"),
            "serve",
            "--port",
            str(port),
            *args,
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False", **env},
        cwd=tmp_path,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):  # up to ~60 s for start-up
            if proc.poll() is not None:
                break
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        assert proc.poll() is None, f"serve exited with {proc.returncode}:\n{log_path.read_text()}"
        r = httpx.get(f"{url}/healthz", timeout=2)
        assert r.json()["status"] == "ok", log_path.read_text()
        yield url, log_path
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
        log.close()
        output = log_path.read_text()
        assert code == 0, f"serve did not exit cleanly ({code}):\n{output}"
        assert "Traceback" not in output, output
