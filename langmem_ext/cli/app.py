"""``langmem-ext`` command line: tables for people, ``--json`` for scripts.

Examples:
    .. code-block:: bash

        langmem-ext demo
        langmem-ext --workspace ./ws save "主人喜欢吃拉面"
        langmem-ext --workspace ./ws pending
        langmem-ext --workspace ./ws confirm p-1a2b3c4d5e
        langmem-ext --workspace ./ws search 拉面
        langmem-ext --workspace ./ws get MEMORY.md:3
        langmem-ext --workspace ./ws maintain
        langmem-ext --workspace ./ws graph "Lin Wei" --hops 2
        langmem-ext --workspace ./ws serve --scripted
        langmem-ext --workspace ./ws export ./memory-files
        langmem-ext --workspace ./ws import ./memory-files
        langmem-ext --workspace ./ws migrate --to postgresql://user:pw@host/db
        langmem-ext --server http://127.0.0.1:8000 --user alice search 拉面
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import os
import sys
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from langmem_ext.core.errors import InvalidInputError, LangmemError

COMMANDS: dict[str, str] = {
    "save": "propose a memory (waits for confirm)",
    "pending": "list pending saves",
    "confirm": "confirm pending saves",
    "reject": "reject pending saves",
    "add": "write a memory directly (trusted source)",
    "update": "change a memory's text (history kept)",
    "forget": "delete a memory by id",
    "search": "search memories",
    "get": "read lines of a memory file (path or path:line)",
    "list": "list memories",
    "sync": "pick up hand edits of the Markdown files",
    "reindex": "rebuild the derived index from Markdown",
    "stats": "counts per scope and category",
    "maintain": "decay, delete old episodes, review, expire pending (once a day is enough)",
    "export": "write the Markdown files a person reads into a folder (a .json file or -: "
    "memories as JSON)",
    "import": "take a folder of Markdown files (hand edits) back into the memory",
    "migrate": "copy an embedded workspace into a PostgreSQL database (--to URL)",
    "demo": "run the bilingual sample conversation through the memory graph",
    "chat": "talk to the memory agent (resumes the scope's latest session)",
    "graph": "show the knowledge graph around an entity as a tree",
    "serve": "serve the memory graph and retriever with LangServe on 127.0.0.1",
    "settings": "show the settings in effect (--reference: every setting, documented)",
    "mcp": "serve the memory to an MCP client over stdio (Claude Desktop, Cursor ...)",
}


def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], max_col: int = 60) -> str:
    """Render rows as an aligned text table with :mod:`rich` (CJK widths are rich's).

    Every cell stays on one line, cut to ``max_col`` columns with "…" (a newline in
    a cell shows as ``⏎``); rows are never narrowed to a console width. On a
    terminal the header is styled; otherwise (a pipe, a file, a test) the table is
    plain text, without ANSI codes.
    """
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for header in headers:
        table.add_column(header, max_width=max_col, no_wrap=True, overflow="ellipsis")
    for row in rows:
        table.add_row(*(Text(str(c).replace("\n", " ⏎ ")) for c in row))
    return _render(table)


def _render(renderable: Any) -> str:
    """A rich renderable as text: styled on a terminal, plain otherwise."""
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=1_000_000,
        force_terminal=sys.stdout.isatty(),
        highlight=False,
        emoji=False,
    )
    console.print(renderable)
    return "\n".join(line.rstrip() for line in buffer.getvalue().splitlines())


class _Out:
    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json

    def emit(self, data: Any, human: Callable[[], str]) -> None:
        if self.as_json:
            print(json.dumps(data, ensure_ascii=False, indent=2, default=str))
        else:
            print(human())


SERVER_COMMANDS = frozenset(COMMANDS) - {
    "reindex", "demo", "chat", "serve", "mcp", "settings", "import", "migrate"
}  # fmt: skip
"""Commands ``--server`` runs through a running server (the others need the workspace
here: ``reindex`` rebuilds every scope's index, ``import`` and ``migrate`` write every
scope's files, ``chat`` and ``demo`` run the agent in this process, ``mcp`` serves it;
a running server has ``/mcp`` itself)."""


def _settings_of(args: argparse.Namespace) -> Any:
    """The settings in effect with the command line's ``--workspace`` and ``--embedder``."""
    from langmem_ext.core.config import Settings

    settings = Settings()
    if args.workspace:
        settings.workspace = Path(args.workspace)
    if args.embedder:
        settings.embeddings.provider = args.embedder
    return settings


def _memory(args: argparse.Namespace) -> Any:
    """The memory the command works on: a :class:`~langmem_ext.client.MemoryClient` of
    the server with ``--server``, else the workspace's :class:`~langmem_ext.Memory`."""
    if args.server:
        from langmem_ext.client import MemoryClient

        return MemoryClient(args.server, user_id=args.user, scope=args.scope)
    from langmem_ext.memory import Memory

    return Memory(settings=_settings_of(args))


def _progress_bar(
    desc: str, unit: str = "mem"
) -> tuple[Callable[[int, int], None], Callable[[], None]]:
    """``(update(done, total), close())`` of a progress display on stderr.

    On a terminal: an animated tqdm bar. Otherwise (a log file, a pipe, CI) no
    frames at all, only one final line ``desc: done/total memories`` (or ``steps``)
    on close.
    """
    plural = "memories" if unit == "mem" else f"{unit}s"
    bar: dict[str, Any] = {}
    if not sys.stderr.isatty():

        def count(done: int, total: int) -> None:
            bar["done"], bar["total"] = done, total

        def summary() -> None:
            if "total" in bar:
                print(f"{desc}: {bar['done']}/{bar['total']} {plural}", file=sys.stderr)

        return count, summary

    from tqdm import tqdm

    def update(done: int, total: int) -> None:
        if "bar" not in bar:
            bar["bar"] = tqdm(total=total, desc=desc, unit=unit, file=sys.stderr)
        b = bar["bar"]
        b.total = total
        b.n = done
        b.refresh()

    def close() -> None:
        if "bar" in bar:
            bar["bar"].close()

    return update, close


SERVE_MODULES = ("langserve", "fastapi", "uvicorn", "sse_starlette", "jinja2")
"""What ``langmem-ext serve`` imports (the ``serve`` extra)."""


def _serve_problem(host: str, port: int) -> str | None:
    """Why ``serve`` cannot start (the extra is missing, the port is taken), in one line
    with the fix; ``None`` when it can."""
    import importlib.util
    import socket

    missing = [m for m in SERVE_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        return (
            f"serving needs the serve extra ({', '.join(missing)} not installed): "
            "pip install 'langmem-ext[serve]'"
        )
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as e:
        return f"cannot listen on {host!r}: {e}; pass --host with an address of this machine"
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as e:
            return (
                f"cannot listen on {host}:{port} ({e.strerror or e}): stop what uses it "
                "or pass --port with a free port"
            )
    return None


def _serve(args: argparse.Namespace) -> int:
    """``langmem-ext serve``: the LangServe app with uvicorn until SIGINT / SIGTERM."""
    import signal

    from langmem_ext.chat_models.choice import (
        ModelUnavailableError,
        chat_model_from_settings,
        check_model_reachable,
    )
    from langmem_ext.server.app import serve

    def stop(_signum: int, _frame: Any) -> None:
        raise SystemExit(0)

    problem = _serve_problem(args.host, args.port)
    if problem:  # before anything is announced or created
        print(f"langmem-ext serve: {problem}", file=sys.stderr)
        return 2
    mem = _memory(args)
    # uvicorn shuts down gracefully on SIGTERM, then re-raises it: exit 0 then.
    previous = signal.signal(signal.SIGTERM, stop)
    try:
        model: Any = None
        jobs_model: Any = None
        if args.scripted:
            from langmem_ext.chat_models.scripted import ScriptedChatModel, offline_policy

            model = ScriptedChatModel(policy=offline_policy)
            name = (
                "scripted (offline stand-in for an LLM: saves on 'remember', answers from memory)"
            )
        else:
            name = mem.settings.chat_model
            try:
                check_model_reachable(mem.settings)
                jobs_model = chat_model_from_settings(mem.settings)
            except ModelUnavailableError as e:
                print(
                    f"warning: {str(e).splitlines()[0]} The chat model is not reachable: "
                    "/agent answers 503 until it is (start it, or restart with --scripted); "
                    "/memory works.",
                    file=sys.stderr,
                )
        host = f"[{args.host}]" if ":" in args.host else args.host
        print(
            f"langmem-ext serve: listening on http://{host}:{args.port} "
            f"(chat model: {name}; workspace: {mem.root}); "
            f"admin UI: http://{host}:{args.port}/admin",
            file=sys.stderr,
            flush=True,
        )
        lc = mem.settings.lifecycle
        if lc.daily_jobs:
            print(
                f"lifecycle jobs: maintain when due and daily at {lc.daily_at} local time, "
                "idle conversations summarised (LANGMEM_LIFECYCLE__DAILY_JOBS=false: off)",
                file=sys.stderr,
                flush=True,
            )
        serve(args.host, args.port, memory=mem, model=model, jobs_model=jobs_model)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        mem.close()
    return 0


def _mcp(args: argparse.Namespace) -> int:
    """``langmem-ext mcp``: the MCP server over stdio for one user (or scope) until the
    client closes it. Nothing but the protocol goes to stdout."""
    import asyncio
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        print("langmem-ext mcp: needs the mcp package: pip install 'langmem-ext[serve]'",
              file=sys.stderr)  # fmt: skip
        return 2
    from langmem_ext.memory.scoping import check_scope
    from langmem_ext.server.callers import resolve_caller
    from langmem_ext.server.mcp_server import run_stdio

    mem = _memory(args)
    try:
        if args.user is not None:  # the user's scope, or the one --scope names for it
            shared = [args.scope] if args.scope else []
            caller = resolve_caller(args.user, args.scope, shared_scopes=shared)
        else:
            scope = check_scope(args.scope or mem.settings.default_scope)
            caller = resolve_caller(None, None, default_scope=scope)
        asyncio.run(run_stdio(mem, caller))
    except KeyboardInterrupt:
        pass
    finally:
        mem.close()
    return 0


def _hits_table(
    hits: Sequence[Any],
    debug: bool = False,
    query: str | None = None,
    stages: Sequence[str] = (),
) -> str:
    head = f"stages: {' > '.join(stages)}\n\n" if debug and stages else ""
    if not hits:
        return head + "No memories found."
    headers = ["score", "id", "category", "where", "text"]
    rows = [[f"{h.score:.3f}", h.id, h.category, h.citation, h.text] for h in hits]
    table = format_table(headers, rows)
    if debug:  # why each hit ranked where it did, then the numbers behind it
        blocks = []
        for h in hits:
            why = [f"  {s.name}: {s.effect} — {s.reason}" for s in h.reasons(query)]
            nums = "  numbers: " + ", ".join(f"{k}={v:.3f}" for k, v in h.debug.items())
            blocks.append("\n".join([f"{h.id}:", *why, nums]))
        table += "\n\n" + "\n\n".join(blocks)
    return head + table


def _stage_names(mem: Any) -> Sequence[str]:
    """The ranking stages a local memory runs (a server's client does not know them)."""
    engine = getattr(mem, "engine", None)
    return engine.stages.names if engine is not None else ()


def _pending_table(items: Sequence[Any]) -> str:
    if not items:
        return "No pending saves."
    rows = [
        [
            p.id,
            p.target,
            p.category,
            f"{p.expires_at:%Y-%m-%d %H:%M}",
            p.text if p.supersedes is None else f"{p.text} (replaces {p.supersedes})",
        ]
        for p in items
    ]
    return format_table(["pending id", "target", "category", "expires (UTC)", "text"], rows)


def _entries_table(entries: Sequence[Any]) -> str:
    if not entries:
        return "No memories."
    rows = [
        [e.id, e.category, f"{e.importance:.2f}", f"{e.created_at:%Y-%m-%d}", e.citation, e.text]
        for e in entries
    ]
    return format_table(["id", "category", "imp", "created", "where", "text"], rows)


def _when(value: str | None, flag: str = "--now") -> datetime | None:
    """``--now``: an ISO date or date-time (local time unless it names a zone)."""
    if value is None:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise InvalidInputError(
            f"{flag} {value!r} is not an ISO date or time: use e.g. 2026-03-05 or 2026-03-05T04:00."
        ) from None


def _graph_tree(entity: str, key: str, triples: Sequence[Any]) -> str:
    """The neighbourhood as a tree: entity → predicate → object [memory ids], and the
    objects' own triples below them (``← predicate`` when the entity is the object)."""
    placed: set[str] = set()

    def grow(node: Tree, at: str, depth: int) -> None:
        branches: dict[str, list[tuple[Any, str, str]]] = {}
        for t in triples:
            if t.id in placed or at not in (t.subject_key, t.object_key):
                continue
            placed.add(t.id)
            relation = ("not " if t.negated else "") + t.predicate
            if t.subject_key == at:
                branches.setdefault(relation, []).append((t, t.object_key, t.object))
            else:
                branches.setdefault(f"← {relation}", []).append((t, t.subject_key, t.subject))
        for relation, items in branches.items():
            rel_node = node.add(Text(relation))
            for t, other_key, other in items:
                child = rel_node.add(Text(f"{other} [{', '.join(t.support)}]"))
                if depth < 2:
                    grow(child, other_key, depth + 1)

    root = Tree(Text(entity))
    grow(root, key, 1)
    if not triples:
        root.add(Text("(no facts)"))
    return _render(root)


def _graph(mem: Any, args: argparse.Namespace, out: _Out) -> None:
    """``langmem-ext graph ENTITY``: the entity's neighbourhood as a tree."""
    from langmem_ext.memory.knowledge.extract import normalise_entity

    if args.server:
        if args.rebuild:
            raise InvalidInputError("--rebuild runs where the workspace is, not with --server.")
        scope = args.scope
        profile = mem.profile(scope=scope)
        names = tuple(n for n in (profile.name, profile.preferred_name) if n)
    else:
        scope = args.scope if args.scope is not None else mem.settings.default_scope
        if args.rebuild:
            mem.knowledge.rebuild(scope)
        names = mem.knowledge.user_names(scope)
    found = mem.triples(
        args.entity, scope=scope, hops=args.hops, as_of=_when(args.as_of, "--as-of")
    )
    key = normalise_entity(args.entity, user_names=names)
    out.emit(
        [{**dataclasses.asdict(t), "text": t.text} for t in found],
        lambda: _graph_tree(args.entity, key, found),
    )


def _importance(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _maintenance_table(rep: Any) -> str:
    """What a maintenance run changed, then its totals."""
    summary = rep.summary()
    totals = ", ".join(f"{n} {kind}" for kind, n in summary.items() if n) or "nothing changed"
    head = f"maintain {rep.day.isoformat()} ({', '.join(rep.scopes)}): {totals}"
    if rep.decay_already_done:
        head += f"\ndecay already done today for: {', '.join(rep.decay_already_done)}"
    head += "".join(f"\nerror: {e}" for e in rep.errors)
    if not rep.changes:
        return head
    rows = [
        [
            c.scope,
            c.id,
            c.action,
            c.category,
            f"{_importance(c.importance_before)} → {_importance(c.importance_after)}",
            c.text,
            c.reason,
        ]
        for c in rep.changes
    ]
    table = format_table(["scope", "id", "change", "category", "importance", "text", "why"], rows)
    return f"{table}\n\n{head}"


def _maintain(mem: Any, args: argparse.Namespace, out: _Out) -> None:
    """``langmem-ext maintain``: one lifecycle run with a progress bar and a table."""
    if args.server:
        if args.with_model:
            raise InvalidInputError(
                "--with-model runs where the workspace is: the server reviews with its "
                "deterministic rules."
            )
        rep = mem.maintain(scope=args.scope, now=_when(args.now))
        out.emit(rep.to_dict(), lambda: _maintenance_table(rep))
        return
    model = None
    if args.with_model:
        from langmem_ext.chat_models.choice import load_chat_model

        model = load_chat_model(mem.settings)
    update, close = _progress_bar("maintain", unit="step")
    try:
        rep = mem.maintain(scope=args.scope, now=_when(args.now), progress=update, model=model)
    finally:
        close()
    out.emit(rep.to_dict(), lambda: _maintenance_table(rep))


def _settings(args: argparse.Namespace, out: _Out) -> int:
    """``langmem-ext settings``: the settings in effect, or the reference page."""
    from langmem_ext.core.config import settings_reference

    if args.reference:
        print(settings_reference())
        return 0
    data = _settings_of(args).model_dump(mode="json")
    out.emit(data, lambda: _as_toml(data))
    return 0


def _as_toml(data: dict[str, Any]) -> str:
    """Settings as a TOML file would hold them (unset values as comments)."""

    def line(key: str, value: Any) -> str:
        if value is None:
            return f"# {key} = (not set)"
        return f"{key} = {json.dumps(value, ensure_ascii=False)}"

    lines = [line(k, v) for k, v in data.items() if not isinstance(v, dict)]
    for name, section in data.items():
        if isinstance(section, dict):
            lines += ["", f"[{name}]", *(line(k, v) for k, v in section.items())]
    return "\n".join(lines)


def _run(args: argparse.Namespace) -> int:
    out = _Out(args.json)
    cmd = args.command
    if cmd == "demo":
        from langmem_ext.cli.demo import run_demo

        return run_demo(
            args.demo_workspace or args.workspace,
            as_json=args.json,
            embedder=args.embedder,
            scripted=args.scripted,
        )
    if args.server and cmd not in SERVER_COMMANDS:
        raise InvalidInputError(
            f"`{cmd}` runs where the workspace is, not through a server: drop --server "
            f"(--server runs {', '.join(c for c in COMMANDS if c in SERVER_COMMANDS)})."
        )
    if cmd == "serve":
        return _serve(args)
    if cmd == "settings":
        return _settings(args, out)
    if cmd == "mcp":
        return _mcp(args)
    if cmd == "migrate":
        from langmem_ext.cli.moving import run_migrate

        run_migrate(args, _settings_of(args), out.emit, _progress_bar)
        return 0
    if args.user is not None and args.scope is None and not args.server:
        from langmem_ext.memory.scoping import scope_for_user

        args.scope = scope_for_user(args.user)
    mem = _memory(args)
    try:
        scope = args.scope
        if cmd == "save":
            p = mem.save(args.text, scope=scope, target=args.target, category=args.category)
            out.emit(
                p.model_dump(mode="json"),
                lambda: (
                    f"Pending {p.id} (expires {p.expires_at:%Y-%m-%d %H:%M} UTC): {p.text}\n"
                    f"Confirm with: langmem-ext confirm {p.id}"
                ),
            )
        elif cmd == "pending":
            items = mem.list_pending(scope=scope)
            out.emit([p.model_dump(mode="json") for p in items], lambda: _pending_table(items))
        elif cmd in ("confirm", "reject"):
            ids = [p.id for p in mem.list_pending(scope=scope)] if args.all else args.ids
            if not ids:
                raise SystemExit("Nothing to do: pass pending ids or --all.")
            results = []
            for pid in ids:
                if cmd == "confirm":
                    results.append(mem.confirm(pid, scope=scope).model_dump(mode="json"))
                else:
                    results.append(mem.reject(pid, scope=scope).model_dump(mode="json"))
            out.emit(
                results,
                lambda: "\n".join(
                    f"{'Confirmed' if cmd == 'confirm' else 'Rejected'}: {r['text']}"
                    + (f"  ({r['path']}:{r['line']}, id {r['id']})" if cmd == "confirm" else "")
                    for r in results
                ),
            )
        elif cmd == "add":
            eid = mem.add(args.text, scope=scope, target=args.target, category=args.category)
            e = mem.get_entry(eid, scope=scope)
            out.emit(e.model_dump(mode="json"), lambda: f"Added {e.id} at {e.citation}: {e.text}")
        elif cmd == "update":
            e = mem.update(args.id, args.text, scope=scope)
            out.emit(
                e.model_dump(mode="json"),
                lambda: f"New version {e.id} (supersedes {e.supersedes}) at {e.citation}: {e.text}",
            )
        elif cmd == "forget":
            mem.delete(args.id, scope=scope)
            out.emit({"deleted": args.id}, lambda: f"Forgot {args.id}.")
        elif cmd == "search":
            hits = mem.search(args.query, scope=scope, k=args.k, mode=args.mode)
            out.emit(
                [h.model_dump(mode="json") for h in hits],
                lambda: _hits_table(hits, args.debug, args.query, _stage_names(mem)),
            )
        elif cmd == "get":
            r = mem.get(args.path, scope=scope, from_line=args.from_line, lines=args.lines)
            out.emit(
                r.model_dump(mode="json"),
                lambda: (
                    r.text + (f"\n… (truncated; next: --from {r.next_from})" if r.truncated else "")
                ),
            )
        elif cmd == "list":
            entries = mem.list(scope=scope, category=args.category)
            out.emit([e.model_dump(mode="json") for e in entries], lambda: _entries_table(entries))
        elif cmd in ("sync", "reindex"):
            update, close = _progress_bar("embedding")
            try:
                rep = (
                    mem.reindex(progress=update) if cmd == "reindex" else mem.sync(progress=update)
                )
            finally:
                close()
            data = rep.__dict__
            out.emit(
                data,
                lambda: (
                    f"{cmd}: {rep.files_scanned} files, {rep.files_changed} changed, +{rep.added} "
                    f"~{rep.updated} -{rep.removed}, {rep.ids_assigned} ids assigned, "
                    f"{rep.embedded} embedded"
                    + (
                        f"\nvector index not updated: {rep.vector_error}"
                        if rep.vector_error
                        else ""
                    )
                    + "".join(
                        f"\nskipped {path}: {why}" for path, why in sorted(rep.skipped.items())
                    )
                ),
            )
        elif cmd == "stats":
            st = mem.stats(scope=args.scope_filter)
            out.emit(
                st,
                lambda: (
                    format_table(
                        ["scope", "entries", "system", "core", "fact", "episode", "pending"],
                        [
                            [s, v["entries"], *v["by_category"].values(), v["pending"]]
                            for s, v in st["scopes"].items()
                        ],
                    )
                    + f"\n\nworkspace: {st['workspace']}  embedder: {st['embedder']}  "
                    f"vectors waiting: {st['vectors_waiting']}"
                ),
            )
        elif cmd == "maintain":
            _maintain(mem, args, out)
        elif cmd == "graph":
            _graph(mem, args, out)
        elif cmd == "chat":
            from langmem_ext.cli.chat import run_chat

            return run_chat(mem, scope=scope, new=args.new, scripted=args.scripted)
        elif cmd == "export":
            from langmem_ext.cli.moving import run_export

            run_export(mem, args, out.emit)
        elif cmd == "import":
            from langmem_ext.cli.moving import run_import

            run_import(mem, args, out.emit)
        return 0
    finally:
        mem.close()


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for docs tests)."""
    p = argparse.ArgumentParser(
        prog="langmem-ext", description="Durable memory for LangChain agents."
    )
    p.add_argument(
        "--workspace",
        "-w",
        help="workspace folder (default: LANGMEM_WORKSPACE or ./langmem-workspace)",
    )
    p.add_argument("--scope", "-s", default=None, help="memory scope (default: main)")
    p.add_argument(
        "--user",
        "-u",
        default=None,
        help="user id: the memory of that user's scope (user_<id>); with --server, who calls",
    )
    p.add_argument(
        "--server",
        default=None,
        metavar="URL",
        help="run the command through a running `langmem-ext serve` at URL "
        "(e.g. http://127.0.0.1:8000): the embedder stays loaded there",
    )
    p.add_argument("--json", action="store_true", help="print JSON for scripts")
    p.add_argument(
        "--embedder",
        choices=["use", "e5", "ollama", "fake"],
        default=None,
        help="embedder (default: LANGMEM_EMBEDDINGS__PROVIDER or use)",
    )
    # The same options after the command (`langmem-ext search x --json`); SUPPRESS keeps
    # the global value when the option is not repeated.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    common.add_argument("--scope", "-s", default=argparse.SUPPRESS)
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    parsers = {
        name: sub.add_parser(name, help=help_, parents=[common]) for name, help_ in COMMANDS.items()
    }
    for name in ("save", "add"):
        parsers[name].add_argument("text")
        parsers[name].add_argument("--target", default="long_term", choices=["long_term", "daily"])
        parsers[name].add_argument(
            "--category", default="fact", choices=["system", "core", "fact", "episode"]
        )
    for name in ("confirm", "reject"):
        parsers[name].add_argument("ids", nargs="*")
        parsers[name].add_argument(
            "--all", action="store_true", help="every pending save of the scope"
        )
    parsers["update"].add_argument("id")
    parsers["update"].add_argument("text")
    parsers["forget"].add_argument("id")
    parsers["search"].add_argument("query")
    parsers["search"].add_argument("-k", type=int, default=None)
    parsers["search"].add_argument("--mode", choices=["hybrid", "vector", "fts", "keyword"])
    parsers["search"].add_argument(
        "--debug",
        action="store_true",
        help="show the ranking stages in order, then why each hit ranked (each stage, "
        "in words, and its numbers)",
    )
    parsers["get"].add_argument("path", help="path or path:line")
    parsers["get"].add_argument("--from", dest="from_line", type=int, default=None)
    parsers["get"].add_argument("--lines", type=int, default=None)
    parsers["list"].add_argument("--category", choices=["system", "core", "fact", "episode"])
    parsers["demo"].add_argument(
        "--workspace",
        dest="demo_workspace",
        default=None,
        help="fresh folder for the demo (default: a new temp folder)",
    )
    parsers["demo"].add_argument(
        "--scripted",
        action="store_true",
        help="use the scripted model even if a real one is reachable",
    )
    parsers["chat"].add_argument("--new", action="store_true", help="start a new session")
    parsers["chat"].add_argument(
        "--scripted", action="store_true", help="offline scripted model (no LLM needed)"
    )
    parsers["serve"].add_argument("--host", default="127.0.0.1")
    parsers["serve"].add_argument("--port", type=int, default=8000)
    parsers["serve"].add_argument(
        "--scripted",
        action="store_true",
        help="offline scripted model (no LLM needed): saves on 'remember', answers from memory",
    )
    # a desktop client's config lists the command first: `mcp --workspace W --user U`
    parsers["mcp"].add_argument("--workspace", "-w", default=argparse.SUPPRESS)
    parsers["mcp"].add_argument("--user", "-u", default=argparse.SUPPRESS)
    parsers["graph"].add_argument("entity", help="a name, e.g. 'Lin Wei' ('I' is the user)")
    parsers["graph"].add_argument("--hops", type=int, choices=[1, 2], default=1)
    parsers["graph"].add_argument(
        "--as-of", default=None, help="the time to look at, ISO (default now)"
    )
    parsers["graph"].add_argument(
        "--rebuild", action="store_true", help="extract the scope's triples again first"
    )
    parsers["settings"].add_argument(
        "--reference", action="store_true", help="print the settings reference (Markdown)"
    )
    from langmem_ext.cli.moving import add_arguments

    add_arguments(parsers)
    parsers["stats"].add_argument("--only", dest="scope_filter", default=None, help="one scope")
    parsers["maintain"].add_argument(
        "--now", default=None, help="the time to run for, ISO (default now; e.g. 2026-03-05T04:00)"
    )
    parsers["maintain"].add_argument(
        "--with-model",
        action="store_true",
        help="review with the chat model of LANGMEM_CHAT_MODEL (default: the deterministic rules)",
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``langmem-ext``."""
    import logging

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    args = build_parser().parse_args(argv)
    try:
        code = _run(args)
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return code
    except LangmemError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # `langmem-ext list | head`: the reader is gone. Python docs' recipe: point
        # stdout at devnull so the final flush at exit cannot fail again; exit 1.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
