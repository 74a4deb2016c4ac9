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


__all__ = ["LANGS", "labels", "t"]
