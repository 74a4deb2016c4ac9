"""20 concurrent requests on one thread of a real ``langmem-ext serve --scripted``.

Every request is answered, and every turn is in the thread's history exactly once,
answered (read from the workspace's ``checkpoints.db`` the way the Session API
reads threads). The server process runs this checkout's code (``PYTHONPATH``).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import httpx
import pytest
from _serve_helpers import _healthy, _port
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver

from langmem_ext.memory.sessions.threads import ThreadStore
from langmem_ext.workspace.sqlite.checkpoints import checkpoint_connection

ROOT = Path(__file__).resolve().parents[3]
N = 20

pytestmark = pytest.mark.slow


async def _burst(url: str) -> list[httpx.Response]:
    config = {"configurable": {"thread_id": "t1", "user_id": "alice"}}
    async with httpx.AsyncClient(base_url=url, timeout=300) as client:
        return await asyncio.gather(
            *(
                client.post(
                    "/agent/invoke",
                    json={"input": {"messages": [f"burst message {i}"]}, "config": config},
                )
                for i in range(N)
            )
        )


def test_concurrent_requests_on_one_thread_keep_every_turn_once(tmp_path: Path) -> None:
    ws, log = tmp_path / "ws", tmp_path / "serve.log"
    port = _port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "ANONYMIZED_TELEMETRY": "False",
        "LANGMEM_EMBEDDINGS__PROVIDER": "fake",
        "LANGMEM_LIFECYCLE__DAILY_JOBS": "false",
    }
    cli = [
        sys.executable,
        "-c",
        "import sys; from langmem_ext.cli.app import main; sys.exit(main())",
    ]
    with log.open("w") as out:
        proc = subprocess.Popen(
            [*cli, "--workspace", str(ws), "serve", "--port", str(port), "--scripted"],
            stdout=out, stderr=subprocess.STDOUT, env=env, cwd=tmp_path,
        )  # fmt: skip
        try:
            url = f"http://127.0.0.1:{port}"
            _healthy(url, proc, log)
            replies = asyncio.run(_burst(url))
            assert [r.status_code for r in replies] == [200] * N, [r.text for r in replies]
            conn = checkpoint_connection(ws / "checkpoints.db")
            try:
                messages = ThreadStore(SqliteSaver(conn)).read("user_alice/t1").messages
            finally:
                conn.close()
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
            code = proc.wait(timeout=120)
    assert code == 0, log.read_text()
    said = Counter(str(m.content) for m in messages if isinstance(m, HumanMessage))
    assert said == Counter(f"burst message {i}" for i in range(N))  # each exactly once
    for i, m in enumerate(messages):  # each turn answered before the next one began
        if isinstance(m, HumanMessage) and i:
            before = messages[i - 1]
            assert isinstance(before, AIMessage) and not before.tool_calls, messages
    assert isinstance(messages[-1], AIMessage)
    # each reply is the final state of its own turn, which ends with that turn
    for r in replies:
        out = r.json()["output"]["messages"]
        assert out[-1]["type"] == "ai"
        assert any(m["type"] == "human" and m["content"].startswith("burst") for m in out)
