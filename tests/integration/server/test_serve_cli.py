"""``langmem-ext serve`` as a process: the README's command and its curl, over real HTTP.

The installed console script runs with a temporary ``--workspace`` on a free
loopback port; the test polls ``/healthz`` (bounded), posts the README's curl body
to ``/agent/invoke``, then stops the server with SIGTERM and checks it exits 0.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from _serve_helpers import _console_script, langmem_serve

ROOT = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.slow


@contextlib.contextmanager
def _refusing_port() -> Iterator[int]:
    """A loopback port that refuses connections for the block: bound, never listened
    on, and kept bound (a port released at once could be handed to the server under
    test, which would then answer its own model requests)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        yield int(s.getsockname()[1])


def readme_curl_body() -> dict[str, Any]:
    """The JSON body of the README's ``curl … /agent/invoke`` example."""
    readme = (ROOT / "README.md").read_text()
    [body] = re.findall(r"curl -X POST localhost:8000/agent/invoke .*?-d '([^']+)'", readme, re.S)
    parsed: dict[str, Any] = json.loads(body)
    return parsed


def test_readme_serve_command_answers_the_readme_curl_with_the_scripted_model(
    tmp_path: Path,
) -> None:
    with langmem_serve(tmp_path, "--scripted", env={}) as (url, log):
        r = httpx.post(f"{url}/agent/invoke", json=readme_curl_body(), timeout=120)
        assert r.status_code == 200, r.text
        out = r.json()["output"]
        assert len(out["pending_ids"]) == 1
        reply = out["messages"][-1]["content"]
        assert "我喜欢吃拉面" in reply and "好的" in reply and "？" in reply, reply  # it asks
        # the user confirms in the same thread: stored in alice's own scope
        confirm = readme_curl_body()
        confirm["input"]["messages"] = ["好的"]
        r = httpx.post(f"{url}/agent/invoke", json=confirm, timeout=120)
        assert r.status_code == 200, r.text
        assert r.json()["output"].get("proposed", []) == [], r.text
        r = httpx.post(
            f"{url}/memory/invoke",
            json={"input": "拉面", "config": {"configurable": {"user_id": "alice"}}},
            timeout=60,
        )
        assert "我喜欢吃拉面" in [d["page_content"] for d in r.json()["output"]], r.text
        started = log.read_text()
    assert f"listening on {url}" in started, started
    assert "chat model: scripted" in started, started
    assert (tmp_path / "ws" / "checkpoints.db").exists()


def test_serve_without_a_reachable_model_answers_503_naming_the_fix(tmp_path: Path) -> None:
    with _refusing_port() as port:
        closed = f"http://127.0.0.1:{port}"
        env = {
            "LANGMEM_CHAT_MODEL": "ollama:qwen2.5:7b",
            "LANGMEM_EMBEDDINGS__PROVIDER": "fake",
            "LANGMEM_EMBEDDINGS__OLLAMA_BASE_URL": closed,
            "OLLAMA_HOST": closed,
        }
        with langmem_serve(tmp_path, env=env) as (url, log):
            r = httpx.post(f"{url}/agent/invoke", json=readme_curl_body(), timeout=120)
            assert r.status_code == 503, r.text
            detail = r.json()["detail"]
            assert "ollama:qwen2.5:7b" in detail and "not reachable" in detail, detail
            assert "ollama pull qwen2.5:7b" in detail, detail
            assert "--scripted" in detail and "LANGMEM_CHAT_MODEL" in detail, detail
            # the memory routes do not need the model
            r = httpx.post(
                f"{url}/memory/invoke",
                json={"input": "拉面", "config": {"configurable": {"user_id": "alice"}}},
                timeout=60,
            )
            assert r.status_code == 200 and r.json()["output"] == []
            started = log.read_text()
    assert "chat model: ollama:qwen2.5:7b" in started, started
    assert "not reachable" in started, started  # warned at start-up, too


def test_serve_on_a_busy_port_says_so_in_one_line_and_creates_nothing(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = subprocess.run(
            [_console_script(), "--workspace", str(tmp_path / "ws"), "serve", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
            cwd=tmp_path,
        )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "--port" in lines[0] and str(port) in lines[0], done.stderr
    assert "listening" not in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "ws").exists()


def test_serve_without_the_extra_names_the_install_and_creates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib.util

    from langmem_ext.cli.app import main

    real = importlib.util.find_spec

    def without_uvicorn(name: str, package: str | None = None) -> Any:
        return None if name == "uvicorn" else real(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", without_uvicorn)
    assert main(["--workspace", str(tmp_path / "ws"), "serve", "--port", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pip install 'langmem-ext[serve]'" in err[0] and "uvicorn" in err[0]
    assert not (tmp_path / "ws").exists()
