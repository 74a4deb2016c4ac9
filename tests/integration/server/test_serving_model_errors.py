"""``/agent`` answers a JSON 503 naming the fix when the model's server lacks the model."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from fastapi.testclient import TestClient

from langmem_ext import Memory
from langmem_ext.server.app import create_app


class _NoSuchModel(BaseHTTPRequestHandler):
    """Answers every request as Ollama does for a model it has not pulled."""

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        self.rfile.read(length)
        body = json.dumps({"error": "model 'qwen2.5:7b' not found, try pulling it first"})
        self.send_response(404)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    do_GET = _answer
    do_POST = _answer

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def ollama_without_the_model() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NoSuchModel)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_model_the_server_lacks_gives_503_with_the_pull_command(
    fake_memory: Memory, ollama_without_the_model: str
) -> None:
    fake_memory.settings.chat_model = "ollama:qwen2.5:7b"
    fake_memory.settings.embeddings.ollama_base_url = ollama_without_the_model
    app = create_app(memory=fake_memory)
    payload = {
        "input": {"messages": ["你好，今天天气怎么样？"]},
        "config": {"configurable": {"thread_id": "t1", "user_id": "alice"}},
    }
    with TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as client:
        r = client.post("/agent/invoke", json=payload)
        assert r.status_code == 503, r.text
        detail = r.json()["detail"]
        assert "ollama pull qwen2.5:7b" in detail
        assert "not found" in detail
        assert (
            client.post(
                "/memory/invoke",
                json={"input": "拉面", "config": {"configurable": {"user_id": "alice"}}},
            ).status_code
            == 200
        )
