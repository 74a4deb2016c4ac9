"""The `langmem-ext` CLI: people get tables, scripts get --json."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from langmem_ext.cli.app import COMMANDS, build_parser, main

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("LANGMEM_EMBEDDINGS__PROVIDER", "fake")
    return str(tmp_path / "ws")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_save_pending_confirm_search_get_as_json(
    ws: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "--workspace", ws, "--json", "save", "主人喜欢吃拉面")
    assert code == 0
    pid = json.loads(out)["id"]
    code, out, _ = run(capsys, "--workspace", ws, "--json", "pending")
    assert [p["id"] for p in json.loads(out)] == [pid]
    code, out, _ = run(capsys, "--workspace", ws, "--json", "confirm", pid)
    [entry] = json.loads(out)
    assert entry["path"] == "MEMORY.md"
    code, out, _ = run(capsys, "--workspace", ws, "--json", "search", "拉面")
    hits = json.loads(out)
    assert hits[0]["id"] == entry["id"] and {
        "score",
        "path",
        "line",
        "category",
        "created_at",
    } <= set(hits[0])
    code, out, _ = run(
        capsys, "--workspace", ws, "--json", "get", f"MEMORY.md:{entry['line']}", "--lines", "1"
    )
    assert "主人喜欢吃拉面" in json.loads(out)["lines"][0]
    code, out, _ = run(capsys, "--workspace", ws, "--json", "export")
    assert json.loads(out)[0]["text"] == "主人喜欢吃拉面"


def test_tables_for_people(ws: str, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "--workspace", ws, "add", "I am allergic to peanuts", "--category", "core")
    code, out, _ = run(capsys, "--workspace", ws, "list")
    assert code == 0 and "core" in out and "allergic" in out and "MEMORY.md:" in out
    code, out, _ = run(capsys, "--workspace", ws, "stats")
    # pending 1: the allergy, proposed for the profile, waits for the user
    assert re.search(r"main\s+1\s+0\s+1\s+0\s+0\s+1", out)
    code, out, _err = run(capsys, "--workspace", ws, "reindex")
    assert code == 0 and "1 embedded" in out
    code, out, _ = run(capsys, "--workspace", ws, "search", "peanut", "--debug")
    assert ("score" in out and "fused" in out) or "=" in out


def test_a_pending_update_names_what_it_replaces(
    ws: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from langmem_ext import Memory

    with Memory(ws) as mem:
        old = mem.add("I live in Berlin")
        pid = mem.save("I live in Munich", supersedes=old).id
    code, out, _ = run(capsys, "--workspace", ws, "pending")
    assert code == 0 and f"replaces {old}" in out
    code, out, _ = run(capsys, "--workspace", ws, "--json", "confirm", pid)
    assert json.loads(out)[0]["supersedes"] == old


def test_errors_are_one_line_with_exit_code_2(ws: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(capsys, "--workspace", ws, "confirm", "p-doesnotexist")
    assert code == 2
    assert err.startswith("error: No pending memory") and "Traceback" not in err
    code, _, err = run(capsys, "--workspace", ws, "get", "../state.db")
    assert code == 2 and "refused" in err


def test_every_command_is_documented_in_the_readme() -> None:
    readme = (ROOT / "README.md").read_text()
    parser_cmds = set(build_parser()._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    assert parser_cmds == set(COMMANDS)
    for cmd in COMMANDS:
        assert f"langmem-ext {cmd}" in readme or f"`{cmd}`" in readme, cmd


def test_demo_runs_on_the_embedded_default(tmp_path: Path) -> None:
    """The README's first command: the bilingual demo on embedded Chroma + USE."""
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "langmem_ext.cli.app",
            "demo",
            "--workspace",
            str(tmp_path / "demo"),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    ).stdout
    report = json.loads(out)
    assert report["model"] == "scripted"  # no LLM on the CI machine
    assert len(report["stored"]) == 6 and report["pending_left"] == []
    assert "林伟今天心情不好" not in report["stored"]  # the rejected save
    found = [s for s in report["searches"] if s["expected_found"]]
    assert len(found) >= len(report["searches"]) - 1, report["searches"]
    assert (tmp_path / "demo" / "memory" / "scopes" / "demo" / "LONG_TERM.md").exists()


def test_chat_without_a_model_says_how_to_fix_it(
    ws: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANGMEM_CHAT_MODEL", "ollama:qwen2.5:7b")
    monkeypatch.setenv("LANGMEM_EMBEDDINGS__OLLAMA_BASE_URL", "http://127.0.0.1:9")  # closed port
    code, _, err = run(capsys, "--workspace", ws, "chat")
    assert code == 3
    assert "No chat model is reachable" in err and "ollama pull" in err
    assert run(capsys, "--workspace", ws, "add", "memory commands still work")[0] == 0


def test_chat_resumes_the_latest_session(ws: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from langmem_ext import Memory
    from langmem_ext.cli.chat import run_chat

    def session(lines: list[str]) -> list[str]:
        out: list[str] = []
        feed = iter(lines)

        def read(_prompt: str) -> str:
            return next(feed)  # StopIteration → treated like EOF below

        def safe_read(prompt: str) -> str:
            try:
                return read(prompt)
            except StopIteration:
                raise EOFError from None

        with Memory(ws) as mem:
            assert run_chat(mem, scripted=True, read=safe_read, write=out.append) == 0
        return out

    first = session(["hello there, how are you doing today?"])
    assert first[0].startswith("New session")
    second = session(["/pending"])
    assert second[0].startswith("Resuming session") and "2 messages" in second[0]


def _console_script() -> str:
    """The installed ``langmem-ext`` console script of this interpreter's environment."""
    script = Path(sys.executable).parent / "langmem-ext"
    assert script.exists(), f"{script} missing: pip install -e . in this environment"
    return str(script)


def _fill(ws: str, n: int) -> None:
    from langmem_ext import Memory, Settings

    settings = Settings(workspace=Path(ws))
    settings.embeddings.provider = "fake"
    with Memory(settings=settings) as mem:
        mem.add_many([f"note {i}: the quick brown fox jumps over the lazy dog" for i in range(n)])


def test_output_into_a_closed_pipe_exits_quietly(ws: str) -> None:
    """``langmem-ext list | head``: no BrokenPipeError traceback when the reader is gone."""
    import os

    _fill(ws, 200)
    env = {**os.environ, "LANGMEM_EMBEDDINGS__PROVIDER": "fake"}
    for argv in (["list"], ["--json", "export"]):
        proc = subprocess.Popen(
            [_console_script(), "--workspace", ws, *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()  # the reader is gone before the first write: EPIPE guaranteed
        err = proc.stderr.read().decode()
        code = proc.wait(timeout=120)
        assert err == "", err
        assert code == 1  # the Python docs' recipe: exit 1 on EPIPE, quietly


def test_progress_bar_prints_no_frames_when_stderr_is_not_a_terminal(ws: str) -> None:
    import os

    _fill(ws, 300)
    env = {**os.environ, "LANGMEM_EMBEDDINGS__PROVIDER": "fake"}
    out = subprocess.run(
        [_console_script(), "--workspace", ws, "reindex"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=True,
    )
    assert "300 embedded" in out.stdout
    assert "\r" not in out.stderr and "\x1b" not in out.stderr, repr(out.stderr)
    frames = [line for line in out.stderr.splitlines() if "embedding" in line]
    assert frames == ["embedding: 300/300 memories"], repr(out.stderr)


def test_demo_scripted_flag_is_honoured_even_when_a_model_answers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``demo --scripted`` uses the scripted model although an "Ollama" port is open."""
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def hang_up() -> None:  # a port that accepts and closes: any real chat call fails fast
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            conn.close()

    threading.Thread(target=hang_up, daemon=True).start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    monkeypatch.setenv("LANGMEM_CHAT_MODEL", "ollama:qwen2.5:7b")
    monkeypatch.setenv("LANGMEM_EMBEDDINGS__OLLAMA_BASE_URL", url)
    monkeypatch.setenv("OLLAMA_HOST", url)
    try:
        code, out, _ = run(
            capsys, "demo", "--workspace", str(tmp_path / "demo"), "--scripted", "--json"
        )
    finally:
        listener.close()
    assert code == 0
    assert json.loads(out)["model"] == "scripted"


def test_sync_names_a_file_it_skipped(ws: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "--workspace", ws, "add", "User drinks green tea")[0] == 0
    bad = Path(ws) / "memory" / "2026-01-05.md"
    bad.parent.mkdir(parents=True, exist_ok=True)
    bad.write_bytes(b"# 2026-01-05\n\n## Facts\n- bad \xff bytes\n")
    code, out, _ = run(capsys, "--workspace", ws, "sync")
    assert code == 0
    assert re.search(r"skipped memory/2026-01-05\.md: .*UTF-8", out), out
    code, out, _ = run(capsys, "--workspace", ws, "--json", "sync")
    assert "memory/2026-01-05.md" in json.loads(out)["skipped"]


def test_format_table_aligns_cjk_cuts_long_cells_and_stays_plain_off_a_terminal() -> None:
    from rich.cells import cell_len

    from langmem_ext.cli.app import format_table

    out = format_table(
        ["text", "id"], [["主人喜欢吃拉面", "m-1"], ["ramen", "m-2"], ["x" * 80, "m-3"]]
    )
    lines = out.splitlines()
    assert lines[0].split() == ["text", "id"] and "\x1b" not in out
    # the id column starts at the same display column on every row, CJK or not
    starts = {cell_len(line[: line.index("m-")]) for line in lines[2:]}
    assert len(starts) == 1
    assert "x" * 80 not in out and "…" in lines[4]


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
