"""Package attributes that load their module on first use (PEP 562).

A package whose ``__init__`` imports every submodule makes each of its light modules
pay for the heavy ones: ``langmem-ext --server …`` reads result types and sends HTTP,
and must not load LangChain's model classes, Chroma or the tokenizer to do it.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_getattr(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` importing ``exports[name]`` when ``name`` is first read.

    Args:
        package: The package's ``__name__``.
        exports: Attribute name → module that defines it.

    Returns:
        The function to assign to the package's ``__getattr__``.
    """

    def __getattr__(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(exports[name]), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__


__all__ = ["lazy_getattr"]
