"""The admin UI's labels in English and Chinese (``t(lang, key)``).

The labels live in ``labels.json`` next to this module (``{"key": {"en": …, "zh": …}}``),
so a translator edits data, not code.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

LANGS = ("en", "zh")
"""Languages of the UI; the first is the default."""


@cache
def labels() -> dict[str, dict[str, str]]:
    """Every label, by key then language (read once)."""
    data: dict[str, dict[str, str]] = json.loads(
        (Path(__file__).parent / "labels.json").read_text(encoding="utf-8")
    )
    return data


def t(lang: str, key: str, **values: object) -> str:
    """The label ``key`` in ``lang`` (English when unknown), formatted with ``values``.

    Example:
        >>> t("zh", "done_bulk", deleted=2, skipped=1)
        '已删除 2 条记忆；跳过 1 条核心/系统记忆。'
    """
    pair = labels().get(key)
    if pair is None:
        return key
    text = pair.get(lang) or pair["en"]
    return text.format(**values) if values else text


def value(lang: str, kind: str, raw: str) -> str:
    """A stored value in words: the label ``<kind>_<raw>`` (a category, a source, a
    profile field ...) in ``lang``, or ``raw`` itself when it has none.

    Args:
        lang: ``en`` or ``zh``.
        kind: What the value is: ``cat``, ``src``, ``field``, ``target``, ``op`` or
            ``m`` (a kind of maintenance change).
        raw: The value as stored.

    Returns:
        The label, or ``raw``.

    Example:
        >>> value("zh", "cat", "fact"), value("zh", "src", "my-importer")
        ('事实', 'my-importer')
    """
    return t(lang, f"{kind}_{raw}") if f"{kind}_{raw}" in labels() else raw


__all__ = ["LANGS", "labels", "t", "value"]
