"""``langmem-ext maintain``: a progress line, a table of what changed, ``--json`` for scripts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langmem_ext.cli import main


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("LANGMEM_EMBEDDINGS__PROVIDER", "fake")
    return str(tmp_path / "ws")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_maintain_shows_a_table_of_changes_and_is_idempotent(
    ws: str, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, "--workspace", ws, "add", "主人喜欢吃拉面")
    run(
        capsys,
        "--workspace",
        ws,
        "add",
        "聊了面试和游戏",
        "--category",
        "episode",
        "--target",
        "daily",
    )
    run(capsys, "--workspace", ws, "add", "主人对花生过敏", "--category", "core")
    code, out, err = run(capsys, "--workspace", ws, "maintain", "--now", "2099-01-01T04:00")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["scope", "id", "change", "category", "importance", "text", "why"]
    assert any("decayed" in line and "主人喜欢吃拉面" in line for line in lines)
    assert any("deleted" in line and "聊了面试和游戏" in line for line in lines)
    assert not any("主人对花生过敏" in line for line in lines)  # core: never
    assert "maintain 2099-01-01 (main):" in out and "1 deleted" in out
    assert "maintain:" in err and "steps" in err  # the progress line (not a terminal)
    code, out, _ = run(capsys, "--workspace", ws, "maintain", "--now", "2099-01-01T20:00")
    assert code == 0 and "nothing changed" in out and "decay already done" in out


def test_maintain_json_and_scope(ws: str, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "--workspace", ws, "--scope", "alice", "add", "Likes ramen")
    run(capsys, "--workspace", ws, "--scope", "bob", "add", "Likes sushi")
    code, out, _ = run(
        capsys, "--workspace", ws, "--json", "--scope", "alice", "maintain", "--now", "2099-01-01"
    )
    data = json.loads(out)
    assert code == 0 and data["scopes"] == ["alice"] and data["day"] == "2099-01-01"
    assert [(c["scope"], c["action"]) for c in data["changes"]] == [
        ("alice", "decayed"),
        ("alice", "reset"),
    ]
    assert data["summary"]["decayed"] == 1


def test_maintain_refuses_a_bad_time(ws: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "--workspace", ws, "maintain", "--now", "yesterday")
    assert code == 2 and err.startswith("error: --now 'yesterday' is not an ISO")
