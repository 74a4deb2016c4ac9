"""``MemoryClient`` / ``AsyncMemoryClient`` and ``langmem-ext --server`` against a real
``langmem-ext serve`` process (real embedder, Chroma and SQLite)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from _serve_helpers import CLI, checkout_env, served
from langchain_core.messages import AIMessage, ToolMessage

from langmem_ext import Memory, Settings
from langmem_ext.client import AsyncMemoryClient, MemoryClient
from langmem_ext.core.errors import (
    EntryNotFoundError,
    InvalidInputError,
    NoiseTextError,
    PendingAlreadyResolvedError,
    ServiceError,
)
from langmem_ext.memory import MemoryEntry, PendingItem, SearchHit
from langmem_ext.memory.knowledge.triples import Triple
from langmem_ext.memory.lifecycle.maintenance import MaintenanceReport
from langmem_ext.memory.profile import Profile, ProfileUpdate
from langmem_ext.workspace.store import SyncReport

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("client")
    with served(root / "ws", root / "serve.log") as base:
        yield base


def test_the_client_has_memorys_methods_and_types(url: str) -> None:
    with MemoryClient(url, user_id="cora") as mem:
        entry_id = mem.add("Cora lives in Lisbon")
        entry = mem.get_entry(entry_id)
        assert isinstance(entry, MemoryEntry) and entry.scope == "user_cora"
        assert mem.get_entry(entry.anchor).id == entry_id
        new = mem.update(entry_id, "Cora lives in Porto")
        assert new.supersedes == entry_id
        assert [row["id"] for row in mem.history(new.id)] == [entry_id, entry_id, new.id]
        hits = mem.search("where does Cora live")
        assert isinstance(hits[0], SearchHit) and hits[0].text == "Cora lives in Porto"
        assert "final" in hits[0].debug
        assert mem.search("Cora live", explain=False)[0].debug == {}
        pending = mem.save("Cora is allergic to penicillin")
        assert isinstance(pending, PendingItem) and mem.list_pending()[0].id == pending.id
        confirmed = mem.confirm(pending.id)
        assert isinstance(confirmed, MemoryEntry) and confirmed.id == pending.entry_id
        other = mem.save("Cora dislikes opera")
        assert mem.reject(other.id).status == "rejected"
        assert [e.text for e in mem.list()] == [
            "Cora lives in Porto",
            "Cora is allergic to penicillin",
        ]
        assert len(mem.list(include_superseded=True)) == 3
        page = mem.list_page(limit=1, sort="text")
        assert page.total == 2 and page.entries[0].text == "Cora is allergic to penicillin"
        assert mem.files() == ["memory/scopes/user_cora/LONG_TERM.md"]
        assert mem.get(confirmed.anchor).lines == [
            f"- Cora is allergic to penicillin ^{confirmed.id}"
        ]
        triples = mem.triples("Cora")
        assert all(isinstance(t, Triple) for t in triples)
        assert ("lives_in", "Porto") in {(t.predicate, t.object) for t in triples}
        update = mem.upsert_facts({"name": "Cora", "medications": ["aspirin"]})
        assert isinstance(update, ProfileUpdate) and update.profile.name == "Cora"
        mem.upsert_preferences({"seat": "aisle"})
        profile = mem.profile()
        assert isinstance(profile, Profile) and profile.preferences == {"seat": "aisle"}
        assert {c.field for c in mem.profile_history()} == {
            "name",
            "medications",
            "preferences.seat",
        }
        assert [e["text"] for e in mem.export()] == [e.text for e in mem.list()]
        assert mem.stats()["scopes"]["user_cora"]["entries"] == 2
        assert isinstance(mem.sync(), SyncReport)
        report = mem.maintain()
        assert isinstance(report, MaintenanceReport) and report.scopes == ["user_cora"]
        mem.delete(confirmed.id)
        with pytest.raises(EntryNotFoundError):
            mem.get_entry(confirmed.id)


def test_the_session_engine_through_the_client(url: str) -> None:
    call = {"name": "memory_search", "args": {"query": "tea"}, "id": "c1", "type": "tool_call"}
    tools = [AIMessage("", tool_calls=[call]), ToolMessage("nothing found", tool_call_id="c1")]
    with MemoryClient(url, user_id="dan") as mem:
        mem.write_turn("t1", "do I like tea?", "I found nothing.", tool_messages=tools)
        mem.write_turn("t1", "I like green tea", "Noted.")
        ctx = mem.query_context("t1")
        assert [m.type for m in ctx.messages()] == ["human", "ai", "tool", "ai", "human", "ai"]
        done = mem.checkpoint("t1", summary="Dan likes green tea.", keep_last_turns=1, force=True)
        assert done.made and done.compacted == 4
        assert mem.query_context("t1").summary == "Dan likes green tea."
        final = mem.finalize_session("t1", summary="Dan talked about tea.")
        assert final.episode_id is not None
        assert "Dan talked about tea." in mem.get_entry(final.episode_id).text


def test_errors_come_back_as_their_own_class(url: str, tmp_path: Path) -> None:
    with MemoryClient(url, user_id="erin") as mem:
        with pytest.raises(EntryNotFoundError):
            mem.get_entry("m-0000000000")
        with pytest.raises(NoiseTextError):
            mem.save("hello")
        pending = mem.save("Erin collects stamps")
        mem.confirm(pending.id)
        with pytest.raises(PendingAlreadyResolvedError):
            mem.confirm(pending.id)
        with pytest.raises(InvalidInputError):
            mem.search("stamps", k=0)  # refused by the request's validation
        with pytest.raises(InvalidInputError):
            mem.delete("../pending")  # never sent
    with MemoryClient(url) as anonymous, pytest.raises(ServiceError) as no_user:
        anonymous.list()
    assert no_user.value.status == 401
    with (
        MemoryClient(url, user_id="erin", scope="user_cora") as other,
        pytest.raises(ServiceError) as forbidden,
    ):
        other.list()
    assert forbidden.value.status == 403
    with (
        MemoryClient("http://127.0.0.1:9", user_id="erin") as down,
        pytest.raises(ServiceError) as unreachable,
    ):
        down.search("stamps")
    assert unreachable.value.status == 0 and "langmem-ext serve" in str(unreachable.value)


async def test_the_async_client(url: str) -> None:
    async with AsyncMemoryClient(url, user_id="fay") as mem:
        pending = await mem.save("Fay grows tomatoes on her balcony")
        entry = await mem.confirm(pending.id)
        assert isinstance(entry, MemoryEntry)
        hits = await mem.search("tomatoes")
        assert hits[0].id == entry.id
        assert [e.id for e in await mem.list()] == [entry.id]
        await mem.delete(entry.id)
        with pytest.raises(EntryNotFoundError):
            await mem.get_entry(entry.id)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, timeout=300, env=checkout_env()
    )


def test_cli_commands_through_the_server(url: str) -> None:
    server = ["--server", url, "--user", "gus"]
    saved = _cli(*server, "--json", "save", "Gus plays the trumpet")
    assert saved.returncode == 0, saved.stderr
    pid = json.loads(saved.stdout)["id"]
    assert _cli(*server, "confirm", pid).returncode == 0
    found = _cli(*server, "--json", "search", "trumpet")
    assert found.returncode == 0, found.stderr
    assert [h["text"] for h in json.loads(found.stdout)] == ["Gus plays the trumpet"]
    shown = _cli(*server, "search", "trumpet", "--debug")  # the table, with the reasons
    assert shown.returncode == 0, shown.stderr
    assert "Gus plays the trumpet" in shown.stdout
    table = _cli(*server, "list")
    assert "Gus plays the trumpet" in table.stdout and "user_gus" in table.stdout
    refused = _cli(*server, "reindex")
    assert refused.returncode == 2 and "drop --server" in refused.stderr
    with MemoryClient(url, user_id="gus") as mem:  # the server holds what the CLI wrote
        assert [e.text for e in mem.list()] == ["Gus plays the trumpet"]


def test_user_names_the_scope_without_a_server(tmp_path: Path) -> None:
    settings = Settings(workspace=tmp_path / "ws")
    settings.embeddings.provider = "fake"
    with Memory(settings=settings) as mem:
        mem.add("Hal sails on weekends", scope="user_hal")
    env = {"LANGMEM_EMBEDDINGS__PROVIDER": "fake"}
    done = subprocess.run(
        [*CLI, "--workspace", str(tmp_path / "ws"), "--user", "hal", "--json", "list"],
        capture_output=True, text=True, timeout=300, env=checkout_env(**env),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert [e["text"] for e in json.loads(done.stdout)] == ["Hal sails on weekends"]
