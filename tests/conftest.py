"""Shared fixtures.

The network is blocked by pytest-socket (``--allow-hosts`` in pyproject.toml): only
loopback is reachable, for the Chroma server and LangServe fixtures.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
import time_machine

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
# hypothesis keeps its caches in ./.hypothesis (of the checkout) unless told otherwise
os.environ.setdefault(
    "HYPOTHESIS_STORAGE_DIRECTORY", str(Path(tempfile.gettempdir()) / "langmem-ext-hypothesis")
)

from _chroma import chroma_server_url  # noqa: F401  (fixtures)
from _postgres import pg_replicas, pg_server, pg_url, pg_vector_url  # noqa: F401  (fixtures)

from langmem_ext import Memory, Settings


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Settings for a fresh workspace with the real offline embedder."""
    return Settings(workspace=tmp_path / "ws")


@pytest.fixture
def memory(settings: Settings) -> Iterator[Memory]:
    """A fresh workspace on the real embedded Chroma and the real USE embedder."""
    mem = Memory(settings=settings)
    yield mem
    mem.close()


@pytest.fixture
def fake_memory(tmp_path: Path) -> Iterator[Memory]:
    """A fresh workspace with the deterministic hashing embedder (pure logic tests)."""
    s = Settings(workspace=tmp_path / "ws-fake")
    s.embeddings.provider = "fake"
    mem = Memory(settings=s)
    yield mem
    mem.close()


FIXED_NOW = datetime(2026, 6, 17, 15, 0)
"""The local time ``fixed_clock`` starts from: a Wednesday afternoon in mid-month, weeks
from any daylight-saving change and hours from midnight on either side."""


@pytest.fixture
def fixed_clock() -> Iterator[datetime]:
    """Run the test with the clock at :data:`FIXED_NOW` (still ticking).

    For tests whose outcome depends on the date (yesterday's day, a day N days on,
    local noon): request it before the workspace fixtures, or with
    ``pytest.mark.usefixtures("fixed_clock")``, so the workspace is made at that time too.
    Processes the test starts keep the real clock.
    """
    with time_machine.travel(FIXED_NOW.timestamp(), tick=True):
        yield FIXED_NOW


V0_WORKSPACE = Path(__file__).parent / "data" / "workspace_v0"
"""A workspace written before schema versions (tests/data/make_workspace_v0.py); read only."""


def _written_at(root: Path) -> float:
    """When a committed workspace was written: its ledger's newest timestamp.

    Read with ``immutable=1``, so the committed file gets no ``-wal`` / ``-shm``.
    """
    uri = f"file:{root / 'state.db'}?mode=ro&immutable=1"
    with sqlite3.connect(uri, uri=True) as conn:
        row = conn.execute(
            "SELECT max(t) FROM (SELECT max(created_at) AS t FROM entries "
            "UNION ALL SELECT max(created_at) FROM pending)"
        ).fetchone()
    return float(row[0])


@pytest.fixture
def v0_workspace(tmp_path: Path) -> Iterator[Path]:
    """A copy of the committed v0 workspace, opened an hour after it was written.

    The clock is moved (and keeps ticking) so that its pending saves, decay and TTLs
    are where they were when it was made, whatever today's date is; the committed
    files are never opened in place.
    """
    root = tmp_path / "ws-v0"
    shutil.copytree(V0_WORKSPACE, root)
    with time_machine.travel(_written_at(V0_WORKSPACE) + 3600, tick=True):
        yield root


_TREE = Path(__file__).resolve().parent.parent
_WATCHED = ("tests", "langmem_ext", "examples", "graphs", "benchmarks", "docs")
"""Folders of the checkout that tests must leave as they found them."""
_BEFORE = pytest.StashKey[set[Path]]()


def _tree_files() -> set[Path]:
    out: set[Path] = set()
    for top in _WATCHED:
        for path in (_TREE / top).rglob("*"):
            if "__pycache__" not in path.parts and path.is_file():
                out.add(path.relative_to(_TREE))
    return out


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_BEFORE] = _tree_files()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    before = session.config.stash.get(_BEFORE, None)
    if before is None:
        return
    added = sorted(_tree_files() - before)
    if added:
        listing = ", ".join(str(p) for p in added[:10])
        session.config.get_terminal_writer().line(
            f"tests wrote into the checkout (use tmp_path): {listing}", red=True
        )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--shift-clock-days",
        type=float,
        default=None,
        help="run the whole session with the clock moved by this many days (finds tests "
        "that depend on today's date; processes a test starts keep the real clock)",
    )


@pytest.fixture(scope="session", autouse=True)
def _shifted_clock(request: pytest.FixtureRequest) -> Iterator[None]:
    days = request.config.getoption("--shift-clock-days")
    if not days:
        yield
        return
    import time

    with time_machine.travel(time.time() + days * 86400, tick=True):
        yield
