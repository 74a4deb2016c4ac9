"""``kill -9`` during ``maintain`` loses nothing, and a rerun finishes the job.

A child process runs ``maintain`` on a real workspace and kills itself (SIGKILL) at
one point: between steps (after a scope's decay, a deletion, a review) or inside a
write (before the decay transaction commits, after an episode's Markdown rewrite,
after a promotion moved a bullet). The workspace is reopened: every confirmed memory
is still there, and a rerun completes. Where the kill fell between two durable
writes, the end state equals a clean run's on a copy: decay was applied once.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from datetime import date, datetime, timedelta
from pathlib import Path

import pytest

from langmem_ext import Memory, Settings

pytestmark = pytest.mark.slow

RUN_DAYS = 20
"""``maintain`` runs for local noon this many days after the memories were written."""

CHILD = """
import os, signal, sys
from datetime import datetime
from langmem_ext import Memory, Settings
from langmem_ext.workspace.sqlite.entries import SqliteEntries
from langmem_ext.workspace.store import Workspace

root, point, at = sys.argv[1], sys.argv[2], float(sys.argv[3])

def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

def after(cls, name):
    original = getattr(cls, name)
    def wrapped(*args, **kwargs):
        result = original(*args, **kwargs)
        die()
        return result
    setattr(cls, name, wrapped)

kind, _, arg = point.partition(":")
if kind == "in-decay-transaction":
    SqliteEntries.set_importances = die
elif kind == "after-markdown-delete":
    after(Workspace, "rewrite_entry")
elif kind == "after-markdown-move":
    after(Workspace, "move_entry")

def progress(done, total):
    if kind == "tick" and done == int(arg):
        die()

settings = Settings(workspace=root)
settings.embeddings.provider = "fake"
memory = Memory(settings=settings)
memory.maintain(now=datetime.fromtimestamp(at), progress=progress)
sys.exit(3)  # not killed: the test's kill point was never reached
"""


def settings_for(root: Path) -> Settings:
    s = Settings(workspace=root)
    s.embeddings.provider = "fake"
    return s


def run_day() -> datetime:
    return datetime.combine(date.today() + timedelta(days=RUN_DAYS), datetime.min.time()).replace(
        hour=12
    )


def build(root: Path, run: datetime) -> dict[str, set[str]]:
    """A workspace with decaying facts, old episodes, a fact due for promotion, core.

    Args:
        root: Where the workspace goes.
        run: When ``maintain`` will run; the boosts fall on the three days before it.

    Returns:
        The ids that must survive any run, per scope (facts and core; the episodes are
        due for deletion).
    """
    with Memory(settings=settings_for(root)) as m:
        facts = m.add_many(["主人喜欢吃拉面", "主人住在上海", "Works as a nurse"], scope="main")
        core = m.add("主人对花生过敏", scope="main", category="core")
        star = m.add("主人的生日是三月五日", scope="main")
        m.add_many(["聊了面试", "Talked about trains"], scope="main", category="episode")
        alice = m.add_many(["Likes jazz", "Has a dog named Biscuit"], scope="alice")
        m.add("Went hiking", scope="alice", category="episode")
        m.save("Owns a cat", scope="main")
        # boosted on 3 distinct days just before the run: promoted by the fallback
        start = datetime.combine(run.date() - timedelta(days=3), datetime.min.time())
        for day, hours in ((0, (8, 11)), (1, (8, 11)), (2, (8,))):
            for hour in hours:
                when = start + timedelta(days=day, hours=hour)
                assert m.boost(star, scope="main", now=when.timestamp()) > 0
    return {"main": {*facts, core, star}, "alice": set(alice)}


_NOTE_ID = re.compile(r"^(- \[unconfirmed\] .*\^)m-[0-9a-z]+$", re.MULTILINE)


def state(root: Path) -> tuple[dict[str, tuple[str, str, float]], dict[str, str]]:
    """Every live memory ``id -> (category, text, importance)`` and every Markdown file.

    The note an expired save leaves gets a fresh id in each workspace: it is keyed by
    its text, and its block id is left out of the files.
    """
    with Memory(settings=settings_for(root)) as m:
        entries = {
            (e.text if e.unconfirmed else e.id): (e.category, e.text, round(e.importance, 6))
            for scope in ("main", "alice")
            for e in m.list(scope=scope)
        }
    files = {
        str(p.relative_to(root)): _NOTE_ID.sub(r"\1note", p.read_text())
        for p in root.rglob("*.md")
        if ".index" not in p.parts and "transcripts" not in p.parts
    }
    return entries, files


@pytest.mark.parametrize(
    "point",
    [
        "tick:1",  # after the first scope's decay
        "tick:3",  # after the first episode deletion
        "tick:8",  # in the middle of the reviews
        "in-decay-transaction",
        "after-markdown-delete",
        "after-markdown-move",
    ],
)
def test_kill_9_during_maintain_loses_nothing_and_a_rerun_completes(
    tmp_path: Path, point: str
) -> None:
    root, clean = tmp_path / "ws", tmp_path / "clean"
    run = run_day()  # once: the child, the rerun and the clean run share it across midnight
    keep = build(root, run)
    shutil.copytree(root, clean)
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), point, repr(run.timestamp())],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert child.returncode == -9, child.stderr
    # reopened after the kill: no confirmed memory is lost
    entries, _files = state(root)
    for scope_ids in keep.values():
        assert scope_ids <= set(entries), scope_ids - set(entries)
    # the rerun completes
    with Memory(settings=settings_for(root)) as m:
        report = m.maintain(now=run)
        assert not report.errors
        assert m.maintain(now=run).changes == []
    with Memory(settings=settings_for(clean)) as m:
        m.maintain(now=run)
    after, files = state(root)
    expected, expected_files = state(clean)
    assert set(after) == set(expected)  # the same memories survive as in a clean run
    star = next(i for i, (_c, text, _imp) in expected.items() if "生日" in text)
    assert after[star][0] == "core"
    if point != "after-markdown-move":  # killed between durable writes: same end state
        assert after == expected
        assert files == expected_files
