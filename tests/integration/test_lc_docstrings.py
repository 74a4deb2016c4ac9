"""The docstring examples of the LangChain / LangGraph surfaces run.

Every ``.. code-block:: python`` block of a public class or factory docstring is
executed in order, in one namespace per docstring, from a temporary working
directory (examples use ``Memory("./memory-ws")``); blocks with top-level ``await``
run in an event loop. ``>>>`` examples run as doctests.
"""

from __future__ import annotations

import ast
import asyncio
import doctest
import inspect
import textwrap
import types
from pathlib import Path
from typing import Any

import pytest

import langmem_ext.memory.scoping
import langmem_ext.middleware
import langmem_ext.retrievers
import langmem_ext.server.app
import langmem_ext.store.chroma
import langmem_ext.tools
from langmem_ext import Memory

MODULES = [
    langmem_ext.tools,
    langmem_ext.retrievers,
    langmem_ext.store.chroma,
    langmem_ext.middleware,
    langmem_ext.memory.scoping,
    langmem_ext.server.app,
]
SECTIONS = ("Setup:", "Instantiate:", "Invoke:", "Async:", "Use in a graph:")


def _public(module: types.ModuleType) -> list[Any]:
    return [getattr(module, n) for n in module.__all__ if not n.isupper()]


def _with_examples() -> list[Any]:
    return [
        obj
        for m in MODULES
        for obj in _public(m)
        if inspect.getdoc(obj) and ".. code-block:: python" in (inspect.getdoc(obj) or "")
    ]


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _blocks(obj: Any) -> list[str]:
    """The ``.. code-block:: python`` bodies: lines indented deeper than the directive."""
    out: list[str] = []
    lines = (inspect.getdoc(obj) or "").splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() == ".. code-block:: python":
            base, body = _indent(lines[i]), []
            i += 1
            while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > base):
                body.append(lines[i])
                i += 1
            out.append(textwrap.dedent("\n".join(body)).strip() + "\n")
        else:
            i += 1
    return out


def test_public_classes_have_langchain_style_docstrings() -> None:
    classes = [o for m in MODULES[:4] for o in _public(m) if inspect.isclass(o)]
    assert len(classes) == 13
    for cls in classes:
        doc = inspect.getdoc(cls) or ""
        missing = [s for s in SECTIONS if s not in doc]
        assert not missing, f"{cls.__name__} lacks {missing}"


@pytest.mark.parametrize("obj", _with_examples(), ids=lambda o: o.__name__)
def test_docstring_examples_run(obj: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    blocks = _blocks(obj)
    assert blocks, obj
    ns: dict[str, Any] = {"__name__": f"docs_{obj.__name__}"}
    loop = asyncio.new_event_loop()
    try:
        for src in blocks:
            code = compile(
                src, f"<{obj.__name__} example>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
            )
            result = eval(code, ns)
            if inspect.iscoroutine(result):
                loop.run_until_complete(result)
    finally:
        loop.close()
        for value in ns.values():
            if isinstance(value, Memory):
                value.close()


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_doctests(module: types.ModuleType) -> None:
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    result = doctest.testmod(module, optionflags=flags, verbose=False)
    assert result.failed == 0
