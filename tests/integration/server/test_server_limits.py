"""The server bounds what it reads: body, form and message sizes, and empty messages.

Each refusal says the limit, happens before the body is parsed or anything is
written, and is JSON (a page for a browser on the admin's paths).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from langmem_ext import Memory
from langmem_ext.chat_models.scripted import ScriptedChatModel, offline_policy
from langmem_ext.core.config import Settings
from langmem_ext.server.app import create_app

CONFIG = {"configurable": {"user_id": "alice", "thread_id": "t1"}}


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    s = Settings(workspace=tmp_path / "ws")
    s.embeddings.provider = "fake"
    s.server.max_body_bytes = 64 * 1024
    s.server.max_form_bytes = 8 * 1024
    s.server.max_message_chars = 2000
    mem = Memory(settings=s)
    yield mem
    mem.close()


@pytest.fixture
def client(memory: Memory) -> Iterator[TestClient]:
    app = create_app(memory, ScriptedChatModel(policy=offline_policy))
    with TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as c:
        yield c


def _files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file() and "transcripts" in p.parts}


def _say(client: TestClient, text: str) -> object:
    body = {"input": {"messages": [{"type": "human", "content": text}]}, "config": CONFIG}
    return client.post("/agent/invoke", json=body)


def test_a_body_over_the_limit_is_413_before_it_is_read(client: TestClient) -> None:
    r = client.post(
        "/memory/invoke",
        content=b'{"input": "' + b"x" * (70 * 1024) + b'"}',
        headers={"Content-Type": "application/json"},
    )
    assert r.status_code == 413
    assert r.headers["content-type"] == "application/json"
    assert "65,536 bytes" in r.json()["detail"]


def test_a_chunked_body_without_length_is_counted_as_it_arrives(client: TestClient) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"input": "'
        for _ in range(80):
            yield b"y" * 1024
        yield b'"}'

    r = client.post(
        "/memory/invoke", content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert r.status_code == 413 and "65,536" in r.json()["detail"]


def test_a_body_within_the_limit_still_reaches_the_route(client: TestClient) -> None:
    r = client.post("/memory/invoke", json={"input": "ramen", "config": CONFIG})
    assert r.status_code == 200, r.text


def test_an_admin_form_over_its_limit_is_a_413_page(client: TestClient) -> None:
    r = client.post(
        "/admin/login",
        content=b"token=" + b"z" * (9 * 1024),
        headers={
            "Content-Type": "application/x-www-form-urlencoded",
            "Accept": "text/html",
        },
    )
    assert r.status_code == 413
    assert r.headers["content-type"].startswith("text/html")
    assert "8,192 bytes" in r.text


def test_a_message_over_the_limit_is_422_and_nothing_is_written(
    client: TestClient, memory: Memory
) -> None:
    before = _files(memory.root)
    r = _say(client, "remember this: " + "长" * 2100)
    assert r.status_code == 422
    assert "2,000" in r.text and "max_message_chars" in r.text
    assert _files(memory.root) == before


@pytest.mark.parametrize("text", ["", "   \n\t "])
def test_an_empty_message_is_422_not_an_answer(
    client: TestClient, memory: Memory, text: str
) -> None:
    before = _files(memory.root)
    r = _say(client, text)
    assert r.status_code == 422 and "empty" in r.text
    assert _files(memory.root) == before


def test_a_message_within_the_limit_is_answered(client: TestClient) -> None:
    r = _say(client, "hello there")
    assert r.status_code == 200, r.text
    assert r.json()["output"]["messages"][-1]["content"]


def test_a_message_with_a_lone_surrogate_or_odd_fields_never_reaches_the_thread(
    client: TestClient,
) -> None:
    body = b'{"input": {"messages": [{"type": "human", "content": "hi \\ud800"}]}, "config": '
    body += json.dumps(CONFIG).encode()
    body += b"}"
    r = client.post("/agent/invoke", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 422 and "surrogate" in r.text
    odd = {
        "type": "human",
        "content": "hello",
        "additional_kwargs": {"x\ud800": [1, {"y": None}]},
        "extra": [1],
    }
    r = client.post(
        "/agent/invoke",
        content=json.dumps({"input": {"messages": [odd]}, "config": CONFIG}).encode(),
        headers={"Content-Type": "application/json"},
    )
    assert r.status_code == 200, r.text
    image = {"type": "human", "content": [{"type": "image_url", "image_url": "data:,"}]}
    r = client.post("/agent/invoke", json={"input": {"messages": [image]}, "config": CONFIG})
    assert r.status_code == 422 and "text" in r.text
