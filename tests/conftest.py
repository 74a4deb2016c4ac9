"""Shared fixtures.

The network is blocked by pytest-socket (``--allow-hosts`` in pyproject.toml): only
loopback is reachable, for the Chroma server and LangServe fixtures.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

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
