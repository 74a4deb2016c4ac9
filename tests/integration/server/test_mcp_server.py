"""The MCP server through the ``mcp`` SDK's own client: ``langmem-ext mcp`` over stdio
and ``/mcp`` of a real ``langmem-ext serve`` over streamable HTTP; and its tools loaded
by ``langchain-mcp-adapters`` into a LangGraph agent that saves, confirms and recalls."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from _agent_helpers import ScriptedChatModel, call, last_tool, pending_id_in
from _serve_helpers import CLI, checkout_env, served
from langchain_core.messages import AIMessage, BaseMessage
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client
from pydantic import AnyUrl

from langmem_ext import Memory, Settings
from langmem_ext.tools import TOOL_NAMES

pytestmark = pytest.mark.slow
README = Path(__file__).resolve().parents[3] / "README.md"


def _seed(workspace: Path) -> None:
    """A workspace where alice's profile names an allergy before any client connects."""
    with Memory(settings=Settings(workspace=workspace)) as memory:
        memory.upsert_facts({"allergies": ["peanuts"]}, scope="user_alice")


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("mcp")
    _seed(root / "ws")
    with served(root / "ws", root / "serve.log") as base:
        yield base


@asynccontextmanager
async def over_http(url: str, user: str) -> AsyncIterator[tuple[ClientSession, str]]:
    async with (
        streamablehttp_client(f"{url}/mcp", headers={"X-User-Id": user}) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        init = await session.initialize()
        yield session, init.instructions or ""


def text_of(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def use_every_tool(session: ClientSession) -> dict[str, str]:
    """Save, confirm, search, get, update, graph, profile, forget; the ids it made."""
    tools = await session.list_tools()
    assert [t.name for t in tools.tools] == list(TOOL_NAMES)
    assert tools.tools[0].inputSchema["properties"]["query"]["type"] == "string"
    saved = await session.call_tool("memory_save", {"text": "Alice plays the viola"})
    assert not saved.isError and "NOT stored yet" in text_of(saved)
    pending = saved.structuredContent["id"]
    confirmed = await session.call_tool("memory_confirm", {"pending_id": pending})
    assert not confirmed.isError, text_of(confirmed)
    entry = confirmed.structuredContent
    found = await session.call_tool("memory_search", {"query": "Alice viola"})
    assert "Alice plays the viola" in text_of(found)
    lines = await session.call_tool("memory_get", {"path": entry["anchor"]})
    assert f"Alice plays the viola ^{entry['id']}" in text_of(lines)
    graph = await session.call_tool("memory_graph", {"entity": "Alice"})
    assert "viola" in text_of(graph)
    new = await session.call_tool(
        "memory_update", {"memory_id": entry["id"], "text": "Alice plays the cello"}
    )
    assert not new.isError and new.structuredContent["supersedes"] == entry["id"]
    profile = await session.call_tool("profile_get", {})
    assert profile.structuredContent["allergies"] == ["peanuts"]
    named = await session.call_tool("profile_update", {"facts": {"name": "Alice"}})
    assert "Saved: name" in text_of(named)
    bad = await session.call_tool("memory_confirm", {"pending_id": pending})
    assert bad.isError and "already confirmed" in text_of(bad)
    invalid = await session.call_tool("memory_search", {"query": ""})
    assert invalid.isError and "Invalid tool arguments" in text_of(invalid)
    return {"pending": pending, "entry": new.structuredContent["id"], "path": entry["path"]}


async def read_files(session: ClientSession, path: str) -> None:
    listed = {str(r.uri) for r in (await session.list_resources()).resources}
    assert {"memory://safety", f"memory://files/{path}"} <= listed
    safety = await session.read_resource(AnyUrl("memory://safety"))
    assert "peanuts" in safety.contents[0].text  # type: ignore[union-attr]
    content = await session.read_resource(AnyUrl(f"memory://files/{path}"))
    assert "Alice plays the cello" in content.contents[0].text  # type: ignore[union-attr]


async def test_stdio_through_the_sdks_client(tmp_path: Path) -> None:
    _seed(tmp_path / "ws")
    # the README's configuration for a desktop client, with this test's workspace and user
    [config] = re.findall(r"```json\n(\{\n  \"mcpServers\".*?)```", README.read_text(), re.S)
    entry = json.loads(config)["mcpServers"]["memory"]
    assert entry["command"] == "langmem-ext"
    args = [str(tmp_path / "ws") if a.startswith("/home/") else a for a in entry["args"]]
    args = ["alice" if a == "me" else a for a in args]
    params = StdioServerParameters(
        command=CLI[0],
        args=[*CLI[1:], *args],
        env=checkout_env(),
        cwd=str(tmp_path),
    )
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            init = await session.initialize()
            assert "memory_save only proposes" in (init.instructions or "")
            assert "peanuts" in (init.instructions or "")  # the safety profile, read first
            made = await use_every_tool(session)
            await read_files(session, made["path"])
    with Memory(settings=Settings(workspace=tmp_path / "ws")) as memory:  # in alice's scope
        assert [e.text for e in memory.list(scope="user_alice")] == ["Alice plays the cello"]


async def test_http_through_the_sdks_client_and_scoping(url: str) -> None:
    async with over_http(url, "alice") as (session, instructions):
        assert "peanuts" in instructions
        made = await use_every_tool(session)
        await read_files(session, made["path"])
    async with over_http(url, "mallory") as (session, instructions):
        assert "peanuts" not in instructions  # mallory's own (empty) safety profile
        attempts = {
            "memory_get": {"path": made["path"]},
            "memory_update": {"memory_id": made["entry"], "text": "changed"},
            "memory_forget": {"memory_id": made["entry"]},
            "memory_confirm": {"pending_id": made["pending"]},
            "memory_reject": {"pending_id": made["pending"]},
        }
        for name, args in attempts.items():
            result = await session.call_tool(name, args)
            assert result.isError, (name, text_of(result))
            assert "cello" not in text_of(result)
        found = await session.call_tool("memory_search", {"query": "cello"})
        assert "found nothing" in text_of(found)
        graph = await session.call_tool("memory_graph", {"entity": "Alice"})
        assert "No facts" in text_of(graph)
        listed = {str(r.uri) for r in (await session.list_resources()).resources}
        assert listed == {"memory://safety"}
        with pytest.raises(Exception, match="No memory file"):
            await session.read_resource(AnyUrl(f"memory://files/{made['path']}"))
    async with over_http(url, "alice") as (session, _):  # alice's memory is intact
        found = await session.call_tool("memory_search", {"query": "cello"})
        assert "Alice plays the cello" in text_of(found)


def test_http_without_a_user_is_refused(url: str) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"accept": "application/json, text/event-stream"}
    r = httpx.post(f"{url}/mcp", json=body, headers=headers, timeout=30)
    assert r.status_code == 401 and "X-User-Id" in r.json()["detail"]
    r = httpx.post(f"{url}/mcp", content="x", headers={**headers, "content-type": "text/plain"})
    assert r.status_code == 415  # the app's guard is in front of /mcp too


def _answer(messages: list[BaseMessage]) -> AIMessage:
    """The model's answer after the tool: what the tool said (so the test can read it)."""
    return AIMessage(f"(from memory) {last_tool(messages).content}")


async def test_langchain_mcp_adapters_agent_saves_confirms_and_recalls(url: str) -> None:
    from langchain.agents import create_agent
    from langchain_mcp_adapters.client import MultiServerMCPClient
    from langgraph.checkpoint.memory import InMemorySaver

    client = MultiServerMCPClient(
        {
            "memory": {
                "transport": "streamable_http",
                "url": f"{url}/mcp",
                "headers": {"X-User-Id": "nina"},
            }
        }
    )
    tools = await client.get_tools()
    assert {t.name for t in tools} == set(TOOL_NAMES)
    model = ScriptedChatModel.of(
        [
            call("memory_save", {"text": "Nina loves cold brew coffee"}),
            "I can remember that you love cold brew coffee. Shall I save it?",
            lambda messages: call("memory_confirm", {"pending_id": pending_id_in(messages)}),
            _answer,
            call("memory_search", {"query": "what coffee does Nina like"}),
            _answer,
        ]
    )
    agent = create_agent(model, tools=tools, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "n1"}}
    await agent.ainvoke({"messages": [("user", "Remember that I love cold brew coffee")]}, config)
    out = await agent.ainvoke({"messages": [("user", "yes, save it")]}, config)
    assert "Confirmed and stored" in str(out["messages"][-1].content)
    out = await agent.ainvoke({"messages": [("user", "What coffee do I like?")]}, config)
    recalled = str(out["messages"][-1].content)
    assert "Nina loves cold brew coffee" in recalled, recalled
    assert re.search(r"#\^m-[0-9a-z]+", recalled)  # cited by its anchor
