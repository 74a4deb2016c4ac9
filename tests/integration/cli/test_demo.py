"""``langmem-ext demo``: its own temp workspace is removed, dates follow today, answers
come from the whole memory block. Real graph, embedded Chroma, the offline embedder."""

from __future__ import annotations

import json
import tempfile
from datetime import date, timedelta
from pathlib import Path

import pytest

from langmem_ext.cli.demo import load_sample, run_demo


@pytest.fixture
def temp_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where ``tempfile`` puts new folders during the test."""
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    return root


def test_demo_removes_its_temporary_workspace_and_says_so(
    temp_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_demo(scripted=True) == 0
    out = capsys.readouterr().out
    assert list(temp_root.iterdir()) == []
    [made] = [line for line in out.splitlines() if line.startswith("workspace: ")]
    where = made.split()[1]
    assert where.startswith(str(temp_root))
    assert f"removed the demo workspace {where}" in out


def test_demo_json_report_says_the_workspace_was_removed(
    temp_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_demo(scripted=True, as_json=True) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["workspace_removed"] is True
    assert list(temp_root.iterdir()) == []


def test_demo_keeps_a_workspace_the_user_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = tmp_path / "mine"
    assert run_demo(str(ws), scripted=True, as_json=True) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["workspace_removed"] is False
    assert (ws / "memory" / "scopes" / "demo" / "LONG_TERM.md").exists()


def test_demo_answers_every_recall_question_and_uses_todays_dates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_demo(str(tmp_path / "ws"), scripted=True, as_json=True) == 0
    report = json.loads(capsys.readouterr().out)
    sample = load_sample()
    answers = {r["query"]: r["answer"] for r in report["recall"]}
    questions = [q for q in sample["queries"] if q["query"].endswith(("?", "？"))]
    assert len(questions) >= 5
    for q in questions:
        assert q["expect"].lower() in answers[q["query"]].lower(), (q, answers[q["query"]])
    mei = next(t for t in report["stored"] if "Mei" in t)
    visit = date.fromisoformat(mei.rsplit(" ", 1)[1])
    assert abs(visit - date.today()) <= timedelta(days=14), mei
    assert [s["started_at"][:10] for s in report["sessions"]] == [
        s["started_at"][:10] for s in sample["sessions"]
    ]
