"""One factory picks the storage engines from a URL; the workspace, the graph and
the server reach them (the checkpointer included) through the memory layer."""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from _agent_helpers import ScriptedChatModel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver

from langmem_ext import Memory, Settings
from langmem_ext.core.errors import EngineUnavailableError, InvalidInputError, LangmemError
from langmem_ext.graph import build_memory_graph
from langmem_ext.memory.sessions.threads import default_saver, open_async_saver
from langmem_ext.workspace import engines as engines_module
from langmem_ext.workspace.engines import (
    EngineRequest,
    Engines,
    embedded_engines,
    engines_from_url,
    register_engine,
    registered_schemes,
)
from langmem_ext.workspace.protocols import (
    Checkpoints,
    DocumentStore,
    KeywordIndex,
    Ledger,
    VectorIndex,
    WorkspaceLock,
)

MODEL = "engine-test-embedder"


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Registrations made by a test are forgotten after it."""
    monkeypatch.setattr(engines_module, "_OPENERS", dict(engines_module._OPENERS))


def _fake_settings(root: Path, url: str | None = None) -> Settings:
    s = Settings(workspace=root, database_url=url)
    s.embeddings.provider = "fake"
    return s


def test_the_embedded_engines_satisfy_every_protocol(tmp_path: Path) -> None:
    engines = engines_from_url(None, root=tmp_path / "ws", model_name=MODEL)
    keyword = engines.open_keyword()
    try:
        assert engines.name == "embedded"
        assert isinstance(engines.ledger, Ledger)
        assert isinstance(engines.documents, DocumentStore)
        assert isinstance(keyword, KeywordIndex)
        assert isinstance(engines.vectors, VectorIndex)
        assert isinstance(engines.lock, WorkspaceLock)
        assert isinstance(engines.checkpoints, Checkpoints)
    finally:
        keyword.close()
        engines.close()


@pytest.mark.parametrize("scheme", ["postgresql", "postgresql+psycopg", "POSTGRES"])
def test_a_postgresql_url_of_an_unreachable_server_is_refused_before_writing(
    tmp_path: Path, scheme: str
) -> None:
    root = tmp_path / "ws"
    url = f"{scheme}://app:s3cret@/memory?host={tmp_path}/no-server"  # no server there
    with pytest.raises(EngineUnavailableError, match="cannot be reached") as e:
        engines_from_url(url, root=root, model_name=MODEL)
    assert isinstance(e.value, LangmemError)
    assert "s3cret" not in str(e.value)
    assert not root.exists()


def test_an_unknown_scheme_names_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(EngineUnavailableError, match=r"'mysql'.*known: .*sqlite"):
        engines_from_url("mysql://h/db", root=tmp_path / "ws", model_name=MODEL)
    assert not (tmp_path / "ws").exists()


def test_sqlite_urls_and_paths_naming_the_workspace_open_the_embedded_engines(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    for url in (
        None,
        "",
        "sqlite://",
        f"sqlite:///{root}",
        f"sqlite:///{root}/state.db",
        str(root),
    ):
        engines = engines_from_url(url, root=root, model_name=MODEL)
        assert engines.name == "embedded"
        engines.close()
    assert (root / "state.db").exists()


@pytest.mark.parametrize("where", ["elsewhere", "elsewhere/state.db"])
def test_a_sqlite_url_naming_another_folder_is_refused(tmp_path: Path, where: str) -> None:
    root = tmp_path / "ws"
    with pytest.raises(EngineUnavailableError, match="workspace folder"):
        engines_from_url(f"sqlite:///{tmp_path / where}", root=root, model_name=MODEL)
    with pytest.raises(EngineUnavailableError, match="workspace folder"):
        engines_from_url(str(tmp_path / where), root=root, model_name=MODEL)
    assert not root.exists() and not (tmp_path / "elsewhere").exists()


def test_a_sqlite_url_with_a_host_is_refused(tmp_path: Path) -> None:
    with pytest.raises(EngineUnavailableError, match="local path"):
        engines_from_url("sqlite://somehost/db", root=tmp_path / "ws", model_name=MODEL)


def test_a_registered_scheme_gets_its_opener(tmp_path: Path, registry: None) -> None:
    asked: list[EngineRequest] = []

    def opener(request: EngineRequest) -> Engines:
        asked.append(request)
        return embedded_engines(replace(request, url=None))

    register_engine("TestDB", opener)
    assert "testdb" in registered_schemes()
    engines = engines_from_url(
        "testdb+driver://h/x", root=tmp_path / "ws", model_name=MODEL, lock_timeout=2.5
    )
    engines.close()
    assert len(asked) == 1
    assert asked[0].scheme == "testdb" and asked[0].lock_timeout == 2.5
    assert asked[0].model_name == MODEL


def test_a_known_engine_module_is_imported_on_its_first_url(
    tmp_path: Path, registry: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scheme whose engine lives in a module is registered by importing it."""
    (tmp_path / "mods").mkdir()
    (tmp_path / "mods" / "lazydb_engine.py").write_text(
        "from dataclasses import replace\n"
        "from langmem_ext.workspace.engines import embedded_engines, register_engine\n"
        "def _open(request):\n"
        "    return replace(embedded_engines(replace(request, url=None)), name='lazydb')\n"
        "register_engine('lazydb', _open)\n",
        encoding="utf-8",
    )
    (tmp_path / "mods" / "silentdb_engine.py").write_text("# registers nothing\n")
    monkeypatch.syspath_prepend(str(tmp_path / "mods"))
    monkeypatch.setitem(engines_module._PROVIDERS, "lazydb", ("lazydb_engine", "LazyDB"))
    monkeypatch.setitem(engines_module._PROVIDERS, "silentdb", ("silentdb_engine", "SilentDB"))
    monkeypatch.setitem(engines_module._PROVIDERS, "gonedb", ("no_such_engine_mod", "GoneDB"))
    assert "lazydb" not in registered_schemes()
    engines = engines_from_url("lazydb://h/x", root=tmp_path / "ws", model_name=MODEL)
    engines.close()
    assert engines.name == "lazydb" and "lazydb" in registered_schemes()
    with pytest.raises(EngineUnavailableError, match="SilentDB did not register 'silentdb'"):
        engines_from_url("silentdb://h/x", root=tmp_path / "ws2", model_name=MODEL)
    with pytest.raises(EngineUnavailableError, match="GoneDB is not installed"):
        engines_from_url("gonedb://h/x", root=tmp_path / "ws3", model_name=MODEL)
    assert not (tmp_path / "ws2").exists() and not (tmp_path / "ws3").exists()


@pytest.mark.parametrize("scheme", ["", "post gres://", "a:b", "x/y", "pg+psycopg"])
def test_an_invalid_scheme_is_not_registered(scheme: str, registry: None) -> None:
    with pytest.raises(InvalidInputError):
        register_engine(scheme, embedded_engines)


def test_the_database_url_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANGMEM_DATABASE_URL", "postgresql://h/db")
    assert Settings().database_url == "postgresql://h/db"
    monkeypatch.delenv("LANGMEM_DATABASE_URL")
    assert Settings().database_url is None


def test_a_memory_on_an_unavailable_engine_fails_before_writing(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    url = f"postgresql://h/db?host={tmp_path}/no-server"  # no server there
    with pytest.raises(EngineUnavailableError):
        Memory(settings=_fake_settings(root, url))
    assert not root.exists()


# -- a second engine set, as a registered scheme --------------------------------


class _MemoryCheckpoints:
    """Checkpoints an engine set supplies instead of ``checkpoints.db``."""

    def __init__(self) -> None:
        self.sync = InMemorySaver()
        self.async_ = InMemorySaver()

    def saver(self) -> BaseCheckpointSaver[Any]:
        return self.sync

    def open_async(self) -> AbstractAsyncContextManager[BaseCheckpointSaver[Any]]:
        @asynccontextmanager
        async def opened() -> Any:
            yield self.async_

        return opened()


class _CountingDocuments:
    """The embedded document store, counting the writes the workspace makes."""

    def __init__(self, inner: DocumentStore) -> None:
        self.inner = inner
        self.writes: list[tuple[str, str]] = []

    def read(self, scope: str, rel: str) -> str:
        return self.inner.read(scope, rel)

    def write(self, scope: str, rel: str, text: str) -> None:
        self.writes.append((scope, rel))
        self.inner.write(scope, rel, text)

    def delete(self, scope: str, rel: str) -> bool:
        return self.inner.delete(scope, rel)

    def stamp(self, scope: str, rel: str) -> tuple[int, int] | None:
        return self.inner.stamp(scope, rel)

    def list(self, scope: str) -> list[str]:
        return self.inner.list(scope)

    def scopes(self) -> builtins.list[str]:
        return self.inner.scopes()

    def tree(self) -> builtins.list[tuple[str, str]]:
        return self.inner.tree()


@pytest.fixture
def second_engine(registry: None) -> Iterator[dict[str, Any]]:
    """Scheme ``memtest://``: the embedded engines with their own checkpoints and a
    counting document store (what a second engine set changes)."""
    made: dict[str, Any] = {}

    def opener(request: EngineRequest) -> Engines:
        engines = embedded_engines(replace(request, url=None))
        made["checkpoints"] = _MemoryCheckpoints()
        made["documents"] = _CountingDocuments(engines.documents)
        return replace(
            engines, name="memtest", checkpoints=made["checkpoints"], documents=made["documents"]
        )

    register_engine("memtest", opener)
    yield made


def test_the_workspace_uses_the_engines_it_is_given(
    tmp_path: Path, second_engine: dict[str, Any]
) -> None:
    memory = Memory(settings=_fake_settings(tmp_path / "ws", "memtest://x"))
    try:
        assert memory.workspace.engines.name == "memtest"
        entry_id = memory.add("Ana lives in Lyon")
        memory.update(entry_id, "Ana lives in Paris", supersede=False)
        assert ("main", "MEMORY.md") in second_engine["documents"].writes
        assert "Paris" in memory.long_term_text()
    finally:
        memory.close()


def test_the_graph_and_the_server_get_their_checkpointer_from_the_engines(
    tmp_path: Path, second_engine: dict[str, Any]
) -> None:
    import asyncio

    root = tmp_path / "ws"
    memory = Memory(settings=_fake_settings(root, "memtest://x"))
    try:
        checkpoints = second_engine["checkpoints"]
        assert default_saver(memory) is checkpoints.sync
        model = ScriptedChatModel.of(["Hello!"])
        graph = build_memory_graph(model, memory, background_writes=False)
        assert graph.checkpointer is checkpoints.sync
        graph.invoke({"messages": [("user", "hi")]}, {"configurable": {"thread_id": "t1"}})
        assert checkpoints.sync.get_tuple({"configurable": {"thread_id": "t1"}}) is not None

        async def opened() -> BaseCheckpointSaver[Any]:
            async with open_async_saver(memory) as saver:
                return saver

        assert asyncio.run(opened()) is checkpoints.async_
        assert not (root / "checkpoints.db").exists()
    finally:
        memory.close()


def test_the_embedded_checkpointer_is_on_checkpoints_db(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    memory = Memory(settings=_fake_settings(root))
    try:
        saver = default_saver(memory)
        assert type(saver).__name__ == "SqliteSaver"
        assert default_saver(memory) is saver  # one per memory
        assert (root / "checkpoints.db").exists()
    finally:
        memory.close()


def test_a_workspace_without_engines_opens_the_embedded_ones(tmp_path: Path) -> None:
    from langmem_ext.embeddings.factory import HashingEmbeddings
    from langmem_ext.workspace import Workspace

    ws = Workspace(tmp_path / "ws", HashingEmbeddings(), model_name=MODEL)
    try:
        assert ws.engines.name == "embedded"
        assert ws.ledger is ws.engines.ledger and ws.lock is ws.engines.lock
        assert (tmp_path / "ws" / "state.db").exists()
    finally:
        ws.close()
