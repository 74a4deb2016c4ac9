"""Who a ``/v1`` request is: ``authenticate=`` alone when given, else the ``X-User-Id``
header of a client on this machine."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest
from fastapi import Request
from langchain_core.messages import AIMessage

from langmem_ext import Memory
from langmem_ext.chat_models.scripted import ScriptedChatModel
from langmem_ext.server.app import create_app, serve_in_thread
from langmem_ext.server.callers import CallerRefused, ServingState, request_caller

TOKENS = {"secret-a": "alice", "secret-b": "bob"}


def bearer(request: Request) -> str | None:
    """Who a bearer token names (``None``: no or unknown token)."""
    token = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
    return TOKENS.get(token)


@pytest.fixture
def url(fake_memory: Memory) -> Iterator[str]:
    app = create_app(
        fake_memory,
        ScriptedChatModel(policy=lambda messages: AIMessage("ok")),
        authenticate=bearer,
        shared_scopes=["team"],
    )
    with serve_in_thread(app) as base:
        yield base


def _get(url: str, path: str, **headers: str) -> httpx.Response:
    return httpx.get(f"{url}/v1{path}", headers=headers, timeout=60)


def test_authenticate_decides_the_user(url: str) -> None:
    json = {"content-type": "application/json"}
    r = httpx.post(
        f"{url}/v1/memories",
        json={"text": "Alice keeps a red notebook"},
        headers={**json, "authorization": "Bearer secret-a"},
        timeout=60,
    )
    assert r.status_code == 201 and r.json()["scope"] == "user_alice", r.text
    assert _get(url, "/memories").status_code == 401
    assert _get(url, "/memories", authorization="Bearer wrong").status_code == 401
    claimed = _get(url, "/memories", authorization="Bearer secret-b", **{"X-User-Id": "alice"})
    assert claimed.status_code == 403
    bob = _get(url, f"/memories/{r.json()['id']}", authorization="Bearer secret-b")
    assert bob.status_code == 404
    same = _get(url, "/memories", authorization="Bearer secret-a", **{"X-User-Id": "alice"})
    assert same.json()["total"] == 1
    shared = _get(url, "/memories", authorization="Bearer secret-b", **{"X-Scope": "team"})
    assert shared.status_code == 200 and shared.json()["total"] == 0
    other = _get(url, "/memories", authorization="Bearer secret-b", **{"X-Scope": "user_alice"})
    assert other.status_code == 403


def _request(host: str) -> Request:
    return Request({"type": "http", "method": "GET", "path": "/v1/memories", "headers": [],
                    "client": (host, 50000), "query_string": b""})  # fmt: skip


def test_without_authenticate_only_loopback_clients_are_answered(fake_memory: Memory) -> None:
    state = ServingState(memory=fake_memory, graph=None, owns_memory=False)
    found = asyncio.run(
        request_caller(_request("127.0.0.1"), state, None, user_id="alice", scope=None)
    )
    assert (found.user_id, found.scope) == ("alice", "user_alice")
    with pytest.raises(CallerRefused) as refused:
        asyncio.run(request_caller(_request("10.1.2.3"), state, None, user_id="alice", scope=None))
    assert refused.value.status == 403 and "127.0.0.1" in refused.value.message
    with pytest.raises(CallerRefused) as bad:
        asyncio.run(request_caller(_request("::1"), state, None, user_id="a", scope="../up"))
    assert bad.value.status == 422
