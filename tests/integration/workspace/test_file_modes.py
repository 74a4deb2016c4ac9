"""Everything a workspace holds is private to its owner: files 0600, folders 0700."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from _agent_helpers import ScriptedChatModel

from langmem_ext import Memory, Settings, build_memory_graph
from langmem_ext.store.chroma import ChromaMemoryStore

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")


def _modes(root: Path) -> dict[str, int]:
    out = {}
    for path in [root, *root.rglob("*")]:
        if path.is_symlink():
            continue
        out[str(path.relative_to(root))] = stat.S_IMODE(path.lstat().st_mode)
    return out


def test_every_file_of_a_used_workspace_is_private(tmp_path: Path) -> None:
    old = os.umask(0o022)  # the usual default: files 0644 unless the package says otherwise
    try:
        root = tmp_path / "ws"
        memory = Memory(settings=Settings(workspace=root))
        memory.add("I am allergic to peanuts", scope="user_alice")
        memory.add("Dentist on Friday", scope="user_alice", target="daily")
        pending = memory.save("I like green tea", scope="user_alice")
        memory.reject(pending.id, scope="user_alice")
        memory.upsert_facts({"name": "Alice"}, scope="user_alice")
        ChromaMemoryStore(memory).put(("prefs",), "k", {"text": "likes tea"})
        graph = build_memory_graph(ScriptedChatModel.of(["Hello!"]), memory)
        graph.invoke(
            {"messages": [("user", "hi there, how are you today?")]},
            {"configurable": {"thread_id": "t1", "user_id": "alice"}},
        )
        memory.close()
    finally:
        os.umask(old)
    modes = _modes(root)
    assert any("transcripts" in p for p in modes) and "checkpoints.db" in modes
    assert "state.db" in modes and any(p.endswith("PROFILE.md") for p in modes)
    index = root / ".index"
    loose = {
        p: oct(m)
        for p, m in modes.items()
        if not (root / p).is_relative_to(index / "chroma")  # Chroma's own files: in a 0700 folder
        and m & 0o077
    }
    assert loose == {}
    assert stat.S_IMODE(index.stat().st_mode) & 0o077 == 0


def test_an_existing_folder_keeps_its_mode_and_a_loose_database_is_tightened(
    tmp_path: Path,
) -> None:
    root = tmp_path / "mine"
    root.mkdir(mode=0o755)
    os.chmod(root, 0o755)
    (root / "state.db").touch(mode=0o644)
    os.chmod(root / "state.db", 0o644)
    settings = Settings(workspace=root)
    settings.embeddings.provider = "fake"
    Memory(settings=settings).close()
    assert stat.S_IMODE(root.stat().st_mode) == 0o755
    assert stat.S_IMODE((root / "state.db").stat().st_mode) == 0o600
