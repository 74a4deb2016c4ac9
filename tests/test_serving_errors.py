"""Every error of the server is JSON with the typed error's message, never a bare 500;
the OpenAPI schema renders, and nothing advertised loads from another site."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from langmem_ext import Memory
from langmem_ext.scripted import ScriptedChatModel, offline_policy
from langmem_ext.serving import create_app

ALICE = {"configurable": {"user_id": "alice"}}


@pytest.fixture
def client(fake_memory: Memory) -> Iterator[TestClient]:
    app = create_app(fake_memory, ScriptedChatModel(policy=offline_policy))
    with TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as c:
        yield c


def test_a_typed_error_answers_json_with_its_message(client: TestClient) -> None:
    r = client.post("/memory/invoke", json={"input": "", "config": ALICE})
    assert r.status_code == 422 and r.headers["content-type"] == "application/json"
    assert r.json()["error"] == "EmptyTextError" and "query" in r.json()["detail"].lower()


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
