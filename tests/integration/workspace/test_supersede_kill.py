"""A process killed while it writes a new version keeps the link between the versions.

The kill is simulated at the worst point: the new version is in the Markdown, the
ledger transaction that records it never ran. The next open's sync finds the intent
(or the pending update's row) and records the new version as the one that replaces
the old.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from langmem_ext import EntrySupersededError, Memory, Settings


class Killed(BaseException):
    """Stands in for SIGKILL: nothing after it runs."""


def _settings(root: Path) -> Settings:
    s = Settings(workspace=root)
    s.embeddings.provider = "fake"
    return s


def _kill_before_the_ledger(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    def killed(*args: object, **kwargs: object) -> None:
        raise Killed

    monkeypatch.setattr(mem.workspace.ledger.entries, "set_valid_to", killed)


def _versions(mem: Memory, entry_id: str) -> list[str]:
    return [h["id"] for h in mem.history(entry_id) if h["op"] in ("add", "hand-add", "update")]


def test_an_update_killed_after_the_markdown_keeps_its_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "ws"
    mem = Memory(settings=_settings(root))
    old = mem.add("I live in Porto")
    _kill_before_the_ledger(mem, monkeypatch)
    with pytest.raises(Killed):
        mem.update(old, "I live in Lisbon")
    monkeypatch.undo()
    mem.close()
    with Memory(settings=_settings(root)) as mem:
        [current] = [e for e in mem.list() if e.text == "I live in Lisbon"]
        assert _versions(mem, old) == [old, current.id]
        with pytest.raises(EntrySupersededError):
            mem.update(old, "I live in Faro")
        assert mem.search("where do I live", k=1)[0].id == current.id
        assert mem.workspace.ledger.meta.get(f"supersede-intent:{current.id}") is None


def test_a_superseding_confirm_killed_after_the_markdown_keeps_its_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "ws"
    mem = Memory(settings=_settings(root))
    old = mem.add("My dentist is Dr. Schmidt")
    pending = mem.save("My dentist is Dr. Weber", supersedes=old)
    _kill_before_the_ledger(mem, monkeypatch)
    with pytest.raises(Killed):
        mem.confirm(pending.id)
    monkeypatch.undo()
    mem.close()
    with Memory(settings=_settings(root)) as mem:
        [current] = [e for e in mem.list() if e.text == "My dentist is Dr. Weber"]
        assert _versions(mem, old) == [old, current.id]
        assert mem.list_pending() == []
