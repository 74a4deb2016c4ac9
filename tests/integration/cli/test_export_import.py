"""``langmem-ext export DIR`` / ``import DIR`` on the embedded engine: the tree of files
a person reads goes out, hand edits come back as memory updates; a tree that could
write outside itself or is not UTF-8 is refused whole."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from langmem_ext import Memory, Settings
from langmem_ext.cli.app import main


def _settings(root: Path) -> Settings:
    s = Settings(workspace=root)
    s.embeddings.provider = "fake"
    return s


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    with Memory(settings=_settings(root)) as mem:
        mem.add("I like green tea")
        mem.add("I own a red bicycle", scope="user_bob")
        mem.upsert_facts({"name": "Ann"})
        mem.session_log.append(None, "t1", "user", "hello there")
    return root


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_export_writes_the_tree_and_import_takes_hand_edits_back(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "tree"
    code, text, _ = _run(capsys, "-w", str(ws), "--embedder", "fake", "export", str(out))
    assert code == 0 and "files into" in text
    files = {p.relative_to(out).as_posix() for p in out.rglob("*.md")}
    assert {"MEMORY.md", "PROFILE.md", "memory/scopes/user_bob/LONG_TERM.md"} <= files
    assert any(f.startswith("memory/transcripts/") for f in files)
    assert (out / "MEMORY.md").read_bytes() == (ws / "MEMORY.md").read_bytes()

    memory_md = out / "MEMORY.md"
    memory_md.write_text(memory_md.read_text("utf-8").replace("green tea", "jasmine tea"), "utf-8")
    profile = out / "PROFILE.md"
    profile.write_text(profile.read_text("utf-8").replace("Ann", "Anna"), "utf-8")
    code, text, _ = _run(capsys, "-w", str(ws), "--embedder", "fake", "import", str(out))
    assert code == 0 and "2 changed" in text, text
    with Memory(settings=_settings(ws)) as mem:
        [entry] = mem.list()
        assert entry.text == "I like jasmine tea"
        last = mem.history(entry.id)[-1]
        assert (last["old_text"], last["new_text"]) == ("I like green tea", "I like jasmine tea")
        assert mem.profile().name == "Anna"
        assert mem.search("jasmine", k=1)[0].id == entry.id
    # importing the same tree again changes nothing
    code, text, _ = _run(capsys, "-w", str(ws), "--embedder", "fake", "import", str(out))
    assert code == 0 and "0 changed" in text


def test_json_export_keeps_its_old_forms(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, text, _ = _run(capsys, "-w", str(ws), "--embedder", "fake", "export")
    assert code == 0 and json.loads(text)[0]["text"] == "I like green tea"
    code, text, _ = _run(capsys, "-w", str(ws), "--embedder", "fake", "export", "-")
    assert json.loads(text)[0]["text"] == "I like green tea"
    dest = tmp_path / "mem.json"
    assert _run(capsys, "-w", str(ws), "--embedder", "fake", "export", str(dest))[0] == 0
    assert json.loads(dest.read_text("utf-8"))[0]["text"] == "I like green tea"


def test_export_never_overwrites_other_text(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "tree"
    out.mkdir()
    (out / "MEMORY.md").write_text("mine\n", "utf-8")
    code, _, err = _run(capsys, "-w", str(ws), "--embedder", "fake", "export", str(out))
    assert code == 2 and "exists with other text" in err
    assert (out / "MEMORY.md").read_text("utf-8") == "mine\n"
    assert not (out / "PROFILE.md").exists()


@pytest.mark.parametrize("problem", ["link out", "linked folder", "stray file", "not utf-8"])
def test_import_refuses_a_tree_that_is_unsafe_and_writes_nothing(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], problem: str
) -> None:
    out = tmp_path / "tree"
    assert _run(capsys, "-w", str(ws), "--embedder", "fake", "export", str(out))[0] == 0
    memory_md = out / "MEMORY.md"
    memory_md.write_text(memory_md.read_text("utf-8").replace("green", "white"), "utf-8")
    secret = tmp_path / "secret.md"
    secret.write_text("- outside the tree\n", "utf-8")
    if problem == "link out":
        os.symlink(secret, out / "memory" / "2026-01-02.md")
        expected = "symlink"
    elif problem == "linked folder":
        os.symlink(tmp_path, out / "memory" / "scopes" / "eve")
        expected = "symlink"
    elif problem == "stray file":
        (out / "memory" / "notes.md").write_text("- x\n", "utf-8")
        expected = "no file of a memory tree"
    else:
        (out / "memory" / "2026-01-03.md").write_bytes(b"- caf\xe9\n")
        expected = "not valid UTF-8"
    before = (ws / "MEMORY.md").read_bytes()
    code, _, err = _run(capsys, "-w", str(ws), "--embedder", "fake", "import", str(out))
    assert code == 2 and expected in err, err
    assert (ws / "MEMORY.md").read_bytes() == before  # nothing was taken
    assert not (ws / "memory" / "2026-01-02.md").exists()


def test_migrate_refuses_what_it_cannot_copy_before_opening_a_database(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ["-w", str(ws), "--embedder", "fake", "migrate"]
    code, _, err = _run(capsys, *common, "--to", f"sqlite:///{tmp_path}")
    assert code == 2 and "PostgreSQL URL" in err
    code, _, err = _run(capsys, *common, "--to", "postgresql://h/db", "--from", "postgresql://x/y")
    assert code == 2 and "embedded workspace" in err
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = _run(capsys, *common, "--to", "postgresql://h/db", "--from", str(empty))
    assert code == 2 and "no state.db" in err
    assert list(empty.iterdir()) == []
    code, _, err = _run(capsys, "-w", str(ws), "--server", "http://127.0.0.1:9", "import", "x")
    assert code == 2 and "not through a server" in err
