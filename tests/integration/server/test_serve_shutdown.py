"""SIGTERM / SIGINT to a real ``langmem-ext serve --scripted`` process mid-conversation.

The server must stop taking requests, answer the one in flight, drain the background
writer (hot-log lines, boosts), summarise the active conversation, and exit 0; the
conversation's turns are then in the hot log of the workspace.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from _serve_helpers import _healthy, _port

from langmem_ext import Memory, Settings
from langmem_ext.memory.lifecycle.maintenance import last_maintained
from langmem_ext.memory.sessions.log import SessionLog

pytestmark = pytest.mark.slow

CONFIG = {"configurable": {"thread_id": "t1", "user_id": "alice"}}
JSON = {"content-type": "application/json"}
SECOND = "我住在上海，上海的夏天很热。"


def _body(text: str) -> str:
    return json.dumps({"input": {"messages": [text]}, "config": CONFIG})


def _say(url: str, text: str) -> httpx.Response:
    return httpx.post(f"{url}/agent/invoke", content=_body(text), headers=JSON, timeout=120)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_mid_conversation_drains_the_writer_and_exits_0(
    tmp_path: Path, signum: signal.Signals
) -> None:
    ws, log = tmp_path / "ws", tmp_path / "serve.log"
    port = _port()
    script = str(Path(sys.executable).parent / "langmem-ext")
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False", "LANGMEM_EMBEDDINGS__PROVIDER": "fake"}
    with log.open("w") as out:
        proc = subprocess.Popen(
            [script, "--workspace", str(ws), "serve", "--port", str(port), "--scripted"],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=tmp_path,
        )
        try:
            url = f"http://127.0.0.1:{port}"
            _healthy(url, proc, log)
            first = _say(url, "我喜欢吃拉面，请记住")
            assert first.status_code == 200, first.text
            # turn 2: its request is sent, then the signal arrives while it is answered
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            conn.request("POST", "/agent/invoke", body=_body(SECOND), headers=JSON)
            time.sleep(0.01)
            proc.send_signal(signum)
            try:
                reply = conn.getresponse()
                second: dict[str, Any] | None = (
                    json.loads(reply.read()) if reply.status == 200 else None
                )
            except (ConnectionError, http.client.HTTPException):
                second = None  # refused: the server had stopped taking requests
            finally:
                conn.close()
            code = proc.wait(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
    output = log.read_text()
    assert code == 0, output
    assert "Traceback" not in output, output
    assert "lifecycle jobs:" in output
    settings = Settings(workspace=ws)
    settings.embeddings.provider = "fake"
    with Memory(settings=settings) as memory:
        events = SessionLog(memory).recent("user_alice", thread_id="user_alice/t1")
        said = [(e.role, e.text) for e in events]
        assert ("user", "我喜欢吃拉面，请记住") in said
        replies = [t for r, t in said if r == "assistant"]
        assert first.json()["output"]["messages"][-1]["content"] in replies
        if second is not None:  # answered: logged in full
            assert ("user", SECOND) in said
            assert second["output"]["messages"][-1]["content"] in replies
        # the active conversation was summarised on shutdown; maintain ran on start
        episodes = memory.list(scope="user_alice", category="episode")
        assert any(e.text.startswith("Conversation user_alice/t1 on ") for e in episodes)
        assert last_maintained(memory) is not None
