"""The errors tree in ``langmem_ext.core.errors``' docstring is the real one, and every
typed error of the package is defined there."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import langmem_ext
from langmem_ext.core import errors


def _drawn_tree() -> dict[str, str]:
    """``{error: parent}`` as the module docstring draws it."""
    doc = errors.__doc__ or ""
    lines = doc[doc.index("    LangmemError\n") :].split("\n\n", 1)[0].splitlines()
    parents: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    for line in lines:
        found = re.search(r"(\w+(?:Error|Timeout))", line)
        if found is None:
            continue
        depth = found.start()
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if stack:
            parents[found.group(1)] = stack[-1][1]
        stack.append((depth, found.group(1)))
    return parents


def _real_tree() -> dict[str, str]:
    tree: dict[str, str] = {}
    for name, cls in vars(errors).items():
        if inspect.isclass(cls) and issubclass(cls, errors.LangmemError):
            if cls is errors.LangmemError:
                continue
            base = next(b for b in cls.__bases__ if issubclass(b, errors.LangmemError))
            tree[name] = base.__name__
    return tree


def test_the_drawn_tree_is_the_real_one() -> None:
    assert _drawn_tree() == _real_tree()


def test_every_typed_error_is_defined_in_the_errors_module() -> None:
    outside: list[str] = []
    for info in pkgutil.walk_packages(langmem_ext.__path__, "langmem_ext."):
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an optional extra that is not installed
            continue
        for name, cls in vars(module).items():
            if (
                inspect.isclass(cls)
                and issubclass(cls, errors.LangmemError)
                and cls.__module__ == module.__name__
                and module is not errors
            ):
                outside.append(f"{module.__name__}.{name}")
    assert outside == []


def test_every_error_is_exported_from_the_package() -> None:
    for name in _real_tree():
        assert getattr(errors, name) is getattr(langmem_ext, name, None), name
