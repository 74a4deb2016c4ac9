"""Every error of the server is JSON with the typed error's message, never a bare 500;
the OpenAPI schema renders, and nothing advertised loads from another site."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

from langmem_ext import Memory
from langmem_ext.chat_models.scripted import ScriptedChatModel, offline_policy
from langmem_ext.server.app import create_app, serve_in_thread

ALICE = {"configurable": {"user_id": "alice"}}


@pytest.fixture
def client(fake_memory: Memory) -> Iterator[TestClient]:
    app = create_app(fake_memory, ScriptedChatModel(policy=offline_policy))
    with TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as c:
        yield c


def test_a_typed_error_answers_json_with_its_message(client: TestClient) -> None:
    r = client.post("/memory/invoke", json={"input": "", "config": ALICE})
    assert r.status_code == 422 and r.headers["content-type"] == "application/json"
    assert "query is empty" in r.text
    r = client.post("/memory/batch", json={"inputs": ["ramen", " "], "config": ALICE})
    assert r.status_code == 422 and "query is empty" in r.text
    r = client.post("/memory/stream", json={"input": " ", "config": ALICE})
    assert r.status_code == 422 and "query is empty" in r.text


def test_invalid_utf8_is_a_400_that_says_so(client: TestClient) -> None:
    r = client.post(
        "/memory/invoke",
        content=b'{"input": "\xff\xfe", "config": {}}',
        headers={"Content-Type": "application/json"},
    )
    assert r.status_code == 400 and "UTF-8" in r.json()["detail"]


def test_the_openapi_schema_renders_and_no_cdn_page_is_advertised(client: TestClient) -> None:
    r = client.get("/openapi.json")
    assert r.status_code == 200 and "/healthz" in r.json()["paths"]
    for page in ("/docs", "/redoc", "/agent/playground/", "/memory/playground/"):
        assert client.get(page).status_code == 404, page


class _BrokenModel(GenericFakeChatModel):
    """A chat model whose every call fails with an error the server does not know."""

    def _generate(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the model broke")

    async def _agenerate(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the model broke")

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


def test_a_stream_that_fails_midway_ends_cleanly_with_an_error_event(
    fake_memory: Memory,
) -> None:
    app = create_app(fake_memory, _BrokenModel(messages=iter(())))
    body = {
        "input": {"messages": ["hello"]},
        "config": {"configurable": {"user_id": "alice", "thread_id": "t"}},
    }
    with serve_in_thread(app) as url:
        with httpx.stream("POST", f"{url}/agent/stream", json=body, timeout=60) as r:
            text = "".join(r.iter_text())  # a broken connection would raise here
        assert r.status_code == 200
        assert "event: error" in text
        assert httpx.get(f"{url}/healthz", timeout=10).status_code == 200


def test_typed_errors_map_to_the_status_a_client_acts_on() -> None:
    from langmem_ext.core.errors import (
        EntryNotFoundError,
        EntrySupersededError,
        IndexUnavailableError,
        LineBreakError,
        PendingExpiredError,
        SchemaVersionError,
        WorkspaceLockTimeout,
    )
    from langmem_ext.server.app import _status_of

    assert _status_of(EntryNotFoundError("x")) == 404
    assert _status_of(LineBreakError("x")) == 422
    assert _status_of(PendingExpiredError("x")) == 409
    assert _status_of(EntrySupersededError("x")) == 409
    assert _status_of(WorkspaceLockTimeout("x")) == 503
    assert _status_of(IndexUnavailableError("x")) == 503
    assert _status_of(SchemaVersionError("x")) == 400
