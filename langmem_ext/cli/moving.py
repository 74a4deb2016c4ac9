"""``langmem-ext export``, ``import`` and ``migrate``: moving a memory in and out.

``export DIR`` writes the tree of Markdown files a person reads (each scope's
long-term file, ``PROFILE.md``, daily notes and transcripts) from the configured
engine; ``export`` alone, ``export -`` or ``export FILE.json`` print or write the
memories as JSON instead. ``import DIR`` takes such a tree, edited by hand, back into
the configured engine through the sync that picks up hand edits of the files.
``migrate --to URL`` copies an embedded workspace into a PostgreSQL database.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from langmem_ext.core.errors import InvalidInputError

EXPORT_HELP = (
    "a folder: the Markdown files (MEMORY.md, daily notes, PROFILE.md, transcripts) of "
    "every scope; a path ending in .json: the scope's memories as JSON; omitted or -: "
    "that JSON on stdout"
)
IMPORT_HELP = (
    "a folder as `export DIR` writes it; changed files are synced (edits become new "
    "versions, history kept); files it lacks are left as they are"
)
FROM_HELP = (
    "the embedded workspace folder (or sqlite:///folder) to copy (default: --workspace "
    "/ LANGMEM_WORKSPACE)"
)
FORCE_HELP = (
    "replace what the database holds (default: refuse a database with memory data, copying nothing)"
)


def add_arguments(parsers: dict[str, argparse.ArgumentParser]) -> None:
    """The arguments of ``export``, ``import`` and ``migrate`` on their parsers."""
    parsers["export"].add_argument("dest", nargs="?", metavar="DEST", help=EXPORT_HELP)
    parsers["import"].add_argument("folder", metavar="DIR", help=IMPORT_HELP)
    migrate = parsers["migrate"]
    migrate.add_argument("--to", required=True, metavar="URL", help="the PostgreSQL database")
    migrate.add_argument("--from", dest="from_", metavar="WORKSPACE", help=FROM_HELP)
    migrate.add_argument("--force", action="store_true", help=FORCE_HELP)


def export_is_json(dest: str | None) -> bool:
    """Whether ``export DEST`` means JSON: no destination, ``-`` (stdout) or a path
    ending in ``.json``; anything else names the folder of the file tree."""
    return dest is None or dest == "-" or dest.lower().endswith(".json")


def run_export(mem: Any, args: argparse.Namespace, emit: Any) -> None:
    """``langmem-ext export [DEST]``.

    Args:
        mem: The memory (or a server's client, for JSON only).
        args: The parsed command line (``dest``, ``scope``, ``server``).
        emit: ``emit(data, human)`` of the command line's output.

    Raises:
        InvalidInputError: A folder export through ``--server``, or a file of the
            folder exists with other text.
        MemoryFileError: A stored file is not UTF-8.
    """
    dest: str | None = args.dest
    if export_is_json(dest):
        text = json.dumps(mem.export(scope=args.scope), ensure_ascii=False, indent=2)
        if dest is None or dest == "-":
            print(text)
        else:
            from langmem_ext.workspace.files import atomic_write_text

            atomic_write_text(Path(dest), text + "\n")
            print(f"export: memories as JSON in {dest}", file=sys.stderr)
        return
    if args.server:
        raise InvalidInputError(
            "export into a folder runs where the memory is stored, not through a server: "
            "drop --server (or export a .json file)."
        )
    from langmem_ext.workspace.tree import stored_tree, write_tree

    assert dest is not None
    files = stored_tree(mem.workspace.documents)
    written = write_tree(files, Path(dest))
    emit(
        {"folder": dest, "files": len(files), "by_kind": written},
        lambda: f"export: {len(files)} files into {dest} ({_kinds(written)})",
    )


def run_import(mem: Any, args: argparse.Namespace, emit: Any) -> None:
    """``langmem-ext import DIR``: write the tree's changed files into the configured
    engine, then sync them (hand edits become memory updates with history; a changed
    ``PROFILE.md`` is recorded as a hand edit of the profile).

    Every file is checked before any is written. Files the folder lacks are left as
    they are (an import never deletes).

    Raises:
        InvalidPathError: ``DIR`` is no folder, holds a symlink or a Markdown file in
            no place of the tree.
        MemoryFileError: A file is not UTF-8.
    """
    from langmem_ext.workspace.tree import read_tree, store_tree

    files = read_tree(Path(args.folder))
    ws = mem.workspace
    changed = store_tree(ws.documents, ws.lock, files)
    rep = mem.sync()
    for scope in sorted({f.scope for f in changed if f.kind == "profile"}):
        mem.profile(scope=scope)  # records the hand edit in the profile's history
    emit(
        {"files": len(files), "changed": [f.rel for f in changed], "sync": rep.__dict__},
        lambda: (
            f"import: {len(files)} files read, {len(changed)} changed; "
            f"+{rep.added} ~{rep.updated} -{rep.removed} memories"
            + "".join(f"\nskipped {p}: {why}" for p, why in sorted(rep.skipped.items()))
        ),
    )


def _kinds(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {n}" for k, n in sorted(counts.items())) or "nothing"


def _source_root(value: str | None, default: Path) -> Path:
    """The embedded workspace ``--from`` names (a folder or ``sqlite:///folder``)."""
    from langmem_ext.workspace.engines import url_scheme

    if value is None:
        return default.expanduser().resolve()
    scheme = url_scheme(value)
    if scheme is None:
        return Path(value).expanduser().resolve()
    if scheme == "sqlite":
        rest = value.split("://", 1)[1]
        path = Path(rest[1:] if rest.startswith("/") else rest).expanduser().resolve()
        return path.parent if path.name == "state.db" else path
    raise InvalidInputError(
        f"--from {value.split('://', 1)[0]}://…: migrate copies from an embedded workspace "
        "(a folder or sqlite:///folder); export and import move between other engines."
    )


def run_migrate(args: argparse.Namespace, settings: Any, emit: Any, progress: Any) -> None:
    """``langmem-ext migrate --to URL [--from WORKSPACE] [--force]``.

    Copies the workspace (ledger, files, checkpoints) in one database transaction
    (see :func:`~langmem_ext.workspace.postgres.copy.migrate_workspace`), then
    rebuilds the derived indexes (keyword, vectors) in the database from what was
    copied. Counts per kind go to stderr as they are known.

    Args:
        args: The parsed command line (``to``, ``from_``, ``force``).
        settings: The settings in effect (workspace, embedder).
        emit: ``emit(data, human)`` of the command line's output.
        progress: ``progress(desc)`` -> ``(update, close)`` of a progress display.

    Raises:
        InvalidInputError: ``--to`` is no PostgreSQL URL, ``--from`` no embedded
            workspace.
        TargetNotEmptyError: The database holds data and ``--force`` is not set.
        MigrationError: The copy did not read back whole (rolled back).
    """
    from langmem_ext.memory import Memory
    from langmem_ext.workspace.engines import url_scheme
    from langmem_ext.workspace.postgres.copy import migrate_workspace
    from langmem_ext.workspace.postgres.ledger import PgLedger

    if url_scheme(args.to) not in ("postgresql", "postgres"):
        raise InvalidInputError(
            "--to must be a PostgreSQL URL (postgresql://user:password@host/database)."
        )
    root = _source_root(args.from_, Path(settings.workspace))
    if not (root / "state.db").is_file():  # before the database is opened
        raise InvalidInputError(
            f"{root} holds no embedded workspace (no state.db): name the workspace folder "
            "with --workspace or --from."
        )
    with tempfile.TemporaryDirectory(prefix="langmem-migrate-") as scratch:
        target = settings.model_copy(update={"database_url": args.to, "workspace": Path(scratch)})
        mem = Memory(settings=target)
        try:
            ws = mem.workspace
            if not isinstance(ws.ledger, PgLedger):  # pragma: no cover - the URL chose it
                raise InvalidInputError(f"--to {args.to!r} did not open the PostgreSQL engine.")
            print(f"migrate: copying {root} into the database …", file=sys.stderr, flush=True)
            with ws.lock.hold():  # replicas on the database wait while it is filled
                copied = migrate_workspace(
                    root,
                    ws.ledger,
                    ws.documents,  # type: ignore[arg-type]
                    ws.engines.checkpoints,  # type: ignore[arg-type]
                    force=args.force,
                    lock_timeout=settings.lock_timeout_s,
                )
            for kind, n in copied.items():
                print(f"  {kind}: {n}", file=sys.stderr, flush=True)
            update, close = progress("index")
            try:
                rep = ws.rebuild(progress=update)
            finally:
                close()
        finally:
            mem.close()
    emit(
        {"from": str(root), "copied": copied, "indexed": rep.__dict__},
        lambda: (
            f"migrate: {root} copied into the database ({copied['entries']} memory versions, "
            f"{sum(n for k, n in copied.items() if k.startswith('files.'))} files, "
            f"{copied['threads']} conversation threads); index rebuilt "
            f"({rep.embedded} embedded)."
            + (f"\nvector index not updated: {rep.vector_error}" if rep.vector_error else "")
        ),
    )


__all__ = ["add_arguments", "export_is_json", "run_export", "run_import", "run_migrate"]
