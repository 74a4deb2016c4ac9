"""``kill -9`` during a profile confirm: the profile and its pending item agree after.

A child process confirms a pending allergy and kills itself (SIGKILL) at one point:
right after ``PROFILE.md`` is written (the ledger transaction that records the change
and marks the item confirmed never ran), or right before that write. The workspace is
reopened: when the file holds the change, the item is confirmed and the history says
the confirm made it (not a hand edit), and a reject reports the change was applied;
when it does not, the item is still pending and confirms normally.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from langmem_ext import Memory, Settings
from langmem_ext.core.errors import PendingAlreadyResolvedError

CHILD = """
import os, signal, sys
from langmem_ext import Memory, Settings
from langmem_ext.workspace.documents import FileDocuments

root, pending_id, point = sys.argv[1], sys.argv[2], sys.argv[3]
write = FileDocuments.write

def die():
    os.kill(os.getpid(), signal.SIGKILL)

def killed_write(self, scope, rel, text):
    if not rel.endswith("PROFILE.md"):
        return write(self, scope, rel, text)
    if point == "before-write":
        die()
    write(self, scope, rel, text)
    die()

FileDocuments.write = killed_write
settings = Settings(workspace=root)
settings.embeddings.provider = "fake"
Memory(settings=settings).confirm(pending_id, scope="user_alice")
sys.exit(3)  # not killed: the kill point was never reached
"""


def _settings(root: Path) -> Settings:
    s = Settings(workspace=root)
    s.embeddings.provider = "fake"
    return s


def _proposed(root: Path) -> str:
    with Memory(settings=_settings(root)) as m:
        m.upsert_facts({"allergies": ["peanuts"]}, scope="user_alice")
        [item] = m.upsert_facts(
            {"allergies": ["shellfish"]}, scope="user_alice", source="agent"
        ).pending
        return item.id


def _confirm_killed(root: Path, pending_id: str, point: str) -> None:
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), pending_id, point],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert child.returncode == -9, child.stderr


@pytest.mark.slow
def test_a_confirm_killed_after_the_file_write_is_confirmed_on_open(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    pending_id = _proposed(root)
    _confirm_killed(root, pending_id, "after-write")
    assert "shellfish" in (root / "memory/scopes/user_alice/PROFILE.md").read_text()
    with Memory(settings=_settings(root)) as m:
        confirmed = m.workspace.ledger.pending.of_scope("user_alice", "confirmed")
        assert [r.id for r in confirmed] == [pending_id]  # settled on open
        assert m.list_pending(scope="user_alice") == []
        assert m.profile(scope="user_alice").allergies == ["peanuts", "shellfish"]
        history = m.profile_history(scope="user_alice", field="allergies")
        assert [(c.new, c.source) for c in history] == [
            (["peanuts"], "app"),
            (["peanuts", "shellfish"], "agent+confirmed"),
        ]
        with pytest.raises(PendingAlreadyResolvedError, match="already confirmed"):
            m.reject(pending_id, scope="user_alice")
        with pytest.raises(PendingAlreadyResolvedError):
            m.confirm(pending_id, scope="user_alice")
        assert m.profile(scope="user_alice").allergies == ["peanuts", "shellfish"]


@pytest.mark.slow
def test_a_confirm_killed_after_the_file_write_is_settled_by_reject(tmp_path: Path) -> None:
    """Another process that was open all along settles it when asked to reject."""
    root = tmp_path / "ws"
    pending_id = _proposed(root)
    with Memory(settings=_settings(root)) as m:
        m.profile(scope="user_alice")  # read (and cached) before the kill
        _confirm_killed(root, pending_id, "after-write")
        with pytest.raises(PendingAlreadyResolvedError, match=r"PROFILE\.md"):
            m.reject(pending_id, scope="user_alice")
        assert m.profile(scope="user_alice").allergies == ["peanuts", "shellfish"]
        assert [c.source for c in m.profile_history(scope="user_alice")][-1] == "agent+confirmed"


@pytest.mark.slow
def test_a_confirm_killed_before_the_file_write_stays_pending(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    pending_id = _proposed(root)
    _confirm_killed(root, pending_id, "before-write")
    with Memory(settings=_settings(root)) as m:
        assert [p.id for p in m.list_pending(scope="user_alice")] == [pending_id]
        assert m.profile(scope="user_alice").allergies == ["peanuts"]
        m.confirm(pending_id, scope="user_alice")
        assert m.profile(scope="user_alice").allergies == ["peanuts", "shellfish"]
        assert m.list_pending(scope="user_alice") == []
        assert m.workspace.ledger.meta.with_prefix("profile-confirm-intent:") == {}


class Killed(BaseException):
    """Stands in for a kill inside the ledger transaction."""


def test_the_history_and_the_pending_item_are_one_transaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "ws"
    pending_id = _proposed(root)
    mem = Memory(settings=_settings(root))

    def killed(*args: object, **kwargs: object) -> None:
        raise Killed

    monkeypatch.setattr(mem.workspace.ledger.pending, "resolve", killed)
    with pytest.raises(Killed):
        mem.confirm(pending_id, scope="user_alice")
    monkeypatch.undo()
    # the history row written before the failing resolve was rolled back with it
    rows = mem.workspace.ledger.profile.of_scope("user_alice", "allergies")
    assert [r.source for r in rows] == ["app"]
    mem.close()
    with Memory(settings=_settings(root)) as m:
        assert m.list_pending(scope="user_alice") == []
        assert [c.source for c in m.profile_history(scope="user_alice", field="allergies")] == [
            "app",
            "agent+confirmed",
        ]
