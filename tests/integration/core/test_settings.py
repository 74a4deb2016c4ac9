"""Settings refuse unknown names (saying the closest valid one), document every field
in the JSON schema, and the reference page is generated from them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from langmem_ext import Settings
from langmem_ext.core.config import settings_reference

DOCS = Path(__file__).resolve().parents[3] / "docs" / "settings.md"


@pytest.mark.parametrize(
    ("kwargs", "said"),
    [
        ({"worksapce": "x"}, "Did you mean 'workspace'"),
        ({"retrieval": {"vector_wieght": 0.9}}, "Did you mean 'vector_weight'"),
        ({"server": {"max_body": 10}}, "ServerSettings has no setting 'max_body'"),
    ],
)
def test_unknown_names_are_refused_with_the_closest_valid_one(
    kwargs: dict[str, object], said: str
) -> None:
    with pytest.raises(ValidationError, match=said):
        Settings(**kwargs)  # type: ignore[arg-type]


def test_a_typo_in_an_environment_variable_or_a_file_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANGMEM_RETRIEVAL__TOP_KK", "7")
    with pytest.raises(ValidationError, match="Did you mean 'top_k'"):
        Settings()
    monkeypatch.delenv("LANGMEM_RETRIEVAL__TOP_KK")
    path = tmp_path / "langmem.toml"
    path.write_text('[retrieval]\ntop_k = 7\n[server]\nallowed_host = ["box"]\n')
    with pytest.raises(ValidationError, match="Did you mean 'allowed_hosts'"):
        Settings.from_file(path)
    path.write_text("[retrieval]\ntop_k = 7\n")
    assert Settings.from_file(path).retrieval.top_k == 7


def test_assigning_an_unknown_name_is_refused() -> None:
    settings = Settings()
    with pytest.raises(ValueError):
        settings.retrieval.vector_wieght = 0.9  # type: ignore[attr-defined]


def test_every_field_is_documented_in_the_json_schema() -> None:
    schema = Settings.model_json_schema()
    sections = [schema, *schema["$defs"].values()]
    missing = [
        f"{section.get('title')}.{name}"
        for section in sections
        for name, prop in section.get("properties", {}).items()
        if "$ref" not in prop and not prop.get("description")
    ]
    assert missing == []


def test_the_reference_page_is_generated_from_the_settings() -> None:
    page = settings_reference()
    assert "`LANGMEM_SERVER__MAX_BODY_BYTES`" in page and "Largest request body" in page
    assert DOCS.read_text(encoding="utf-8") == page + "\n", (
        "docs/settings.md is out of date: langmem-ext settings --reference > docs/settings.md"
    )


def test_the_settings_command_prints_a_file_settings_can_read(tmp_path: Path) -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "langmem_ext.cli.app",
            "--workspace",
            str(tmp_path / "ws"),
            "settings",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    path = tmp_path / "settings.toml"
    path.write_text(out)
    assert Settings.from_file(path).workspace == tmp_path / "ws"
