"""``langmem_ext.language`` is the base layer of language resources: it imports
nothing of the package outside itself."""

from __future__ import annotations

import ast
from pathlib import Path

import langmem_ext.language

PACKAGE = Path(langmem_ext.language.__file__).parent


def _imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                names.add("langmem_ext.language")  # a relative import stays inside
            elif node.module:
                names.add(node.module)
    return names


def test_language_imports_nothing_of_the_package_outside_it() -> None:
    modules = sorted(PACKAGE.glob("*.py"))
    assert {m.stem for m in modules} >= {
        "sentences",
        "statements",
        "summary_cues",
        "intent_vocab",
        "replies_vocab",
        "session_vocab",
        "safety_vocab",
        "triple_patterns",
        "text",
    }
    upward = {
        f"{m.name}: {name}"
        for m in modules
        for name in _imported(m)
        if name.startswith("langmem_ext") and not name.startswith("langmem_ext.language")
    }
    assert upward == set()
