"""The Markdown format of memory files: one entry per bullet, sections as categories.

A memory file looks like::

    # Long-term memory

    ## Core
    - 主人喜欢拉面 ^m-3f9a1c02d4

    ## Facts
    - Lives in Berlin since 2021 ^m-0a1b2c3d4e
    - A longer entry whose text goes on
      on an indented continuation line ^m-77aa00bb11

A bullet starts with ``- `` (or ``* ``) at column 0; indented lines after it
continue it. Its block id ``^m-…`` closes the last line. A bullet without an id
(typed by hand) is given one on the next sync. The ``##`` heading above a bullet
gives its category; bullets under no known heading are facts.

Everything here is pure: text in, text or entries out.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass

ID_PREFIX = "m-"
_BLOCK_ID_RE = re.compile(r"\s*\^(m-[0-9a-z]{4,32})\s*$")
_BULLET_RE = re.compile(r"^[-*] (.*)$")
_HEADING_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")

SECTION_TITLES: dict[str, str] = {
    "system": "System",
    "core": "Core",
    "fact": "Facts",
    "episode": "Episodes",
}
_HEADING_ALIASES: dict[str, str] = {
    "system": "system",
    "系统": "system",
    "系統": "system",
    "core": "core",
    "核心": "core",
    "fact": "fact",
    "facts": "fact",
    "事实": "fact",
    "事實": "fact",
    "episode": "episode",
    "episodes": "episode",
    "情景": "episode",
    "经历": "episode",
    "經歷": "episode",
}


def new_entry_id() -> str:
    """Return a fresh random block id such as ``m-3f9a1c02d4``."""
    return ID_PREFIX + secrets.token_hex(5)


def category_of_heading(title: str) -> str | None:
    """Map a ``##`` heading title to a category (``None`` when it names none)."""
    return _HEADING_ALIASES.get(title.strip().lower())


@dataclass(frozen=True)
class ParsedEntry:
    """One bullet of a memory file.

    Attributes:
        id: Its block id, or ``None`` when the bullet has none yet.
        text: The text, continuation lines joined by ``\\n``, id removed.
        category: From the section heading above it.
        line: 1-based line of the bullet.
        end_line: 1-based last line of the bullet (continuations included).
    """

    id: str | None
    text: str
    category: str
    line: int
    end_line: int


def parse_entries(content: str) -> list[ParsedEntry]:
    """Parse every bullet of a memory file.

    Args:
        content: The file's text.

    Returns:
        Entries in file order. Empty bullets are skipped.
    """
    lines = content.splitlines()
    entries: list[ParsedEntry] = []
    category = "fact"
    i = 0
    n = len(lines)
    while i < n:
        raw = lines[i]
        heading = _HEADING_RE.match(raw)
        if heading:
            if len(heading.group(1)) >= 2:
                category = category_of_heading(heading.group(2)) or "fact"
            i += 1
            continue
        bullet = _BULLET_RE.match(raw)
        if not bullet:
            i += 1
            continue
        start = i
        parts = [bullet.group(1)]
        i += 1
        while i < n and lines[i][:1] in (" ", "\t") and lines[i].strip():
            parts.append(lines[i].strip())
            i += 1
        text, entry_id = split_block_id("\n".join(parts))
        if text.strip():
            entries.append(
                ParsedEntry(
                    id=entry_id, text=text.strip(), category=category, line=start + 1, end_line=i
                )
            )
    return entries


def split_block_id(text: str) -> tuple[str, str | None]:
    """Split a trailing ``^m-…`` block id off ``text``."""
    m = _BLOCK_ID_RE.search(text)
    if not m:
        return text, None
    return text[: m.start()], m.group(1)


def render_bullet(text: str, entry_id: str) -> list[str]:
    """Render one entry as bullet lines (continuations indented by two spaces)."""
    parts = [p.strip() for p in text.strip().splitlines()]
    parts = [p for p in parts if p] or [""]
    out = [f"- {parts[0]}"] + [f"  {p}" for p in parts[1:]]
    out[-1] = f"{out[-1]} ^{entry_id}"
    return out


def normalise_text(text: str) -> str:
    """The canonical form of a memory text as stored (trimmed, blank lines dropped)."""
    parts = [p.strip() for p in text.strip().splitlines()]
    return "\n".join(p for p in parts if p)


def insert_entries(content: str, items: Iterable[tuple[str, str, str]], *, title: str) -> str:
    """Append entries under their category sections, creating sections as needed.

    Args:
        content: Current file text ("" for a new file).
        items: ``(entry_id, text, category)`` triples, in order.
        title: The ``#`` title written when the file is new.

    Returns:
        The new file text.
    """
    lines = content.splitlines() if content else [f"# {title}", ""]
    by_cat: dict[str, list[str]] = {}
    for entry_id, text, category in items:
        by_cat.setdefault(category, []).extend(render_bullet(text, entry_id))
    for category, bullet_lines in by_cat.items():
        lines = _insert_into_section(lines, category, bullet_lines)
    return "\n".join(lines).rstrip("\n") + "\n"


def _section_bounds(lines: list[str], category: str) -> tuple[int, int] | None:
    start = None
    for idx, raw in enumerate(lines):
        m = _HEADING_RE.match(raw)
        if not m:
            continue
        if start is not None and len(m.group(1)) <= 2:
            return start, idx
        if len(m.group(1)) == 2 and category_of_heading(m.group(2)) == category:
            start = idx
    if start is None:
        return None
    return start, len(lines)


def _insert_into_section(lines: list[str], category: str, bullets: list[str]) -> list[str]:
    bounds = _section_bounds(lines, category)
    if bounds is None:
        while lines and not lines[-1].strip():
            lines.pop()
        return [*lines, "", f"## {SECTION_TITLES[category]}", *bullets]
    start, end = bounds
    pos = end
    while pos > start + 1 and not lines[pos - 1].strip():
        pos -= 1
    new = [*lines[:pos], *bullets, *lines[pos:]]
    # keep one blank line before the next heading
    after = pos + len(bullets)
    if after < len(new) and new[after].startswith("#"):
        new.insert(after, "")
    return new


def replace_entry(content: str, entry_id: str, new_text: str | None) -> tuple[str, bool]:
    """Replace (or with ``new_text=None`` remove) the bullet carrying ``entry_id``.

    Returns:
        ``(new content, found)``.
    """
    lines = content.splitlines()
    for entry in parse_entries(content):
        if entry.id != entry_id:
            continue
        repl = [] if new_text is None else render_bullet(new_text, entry_id)
        lines[entry.line - 1 : entry.end_line] = repl
        return "\n".join(lines).rstrip("\n") + "\n", True
    return content, False


def assign_missing_ids(content: str, taken: set[str]) -> tuple[str, list[ParsedEntry]]:
    """Give every bullet without an id (or with a duplicate id) a fresh one.

    Args:
        content: File text.
        taken: Ids already used elsewhere in the workspace; extended in place.

    Returns:
        ``(new content, entries with their ids)``.
    """
    lines = content.splitlines()
    changed = False
    seen_here: set[str] = set()
    for entry in parse_entries(content):
        if entry.id is not None and entry.id not in seen_here and entry.id not in taken:
            seen_here.add(entry.id)
            continue
        new_id = new_entry_id()
        while new_id in taken or new_id in seen_here:
            new_id = new_entry_id()
        seen_here.add(new_id)
        lines[entry.line - 1 : entry.end_line] = _with_id(
            lines[entry.line - 1 : entry.end_line], new_id
        )
        changed = True
    taken.update(seen_here)
    if not changed:
        return content, parse_entries(content)
    new_content = "\n".join(lines).rstrip("\n") + "\n"
    return new_content, parse_entries(new_content)


def _with_id(block: list[str], new_id: str) -> list[str]:
    out = list(block)
    last, _old = split_block_id(out[-1])
    out[-1] = f"{last.rstrip()} ^{new_id}"
    return out


__all__ = [
    "SECTION_TITLES",
    "ParsedEntry",
    "assign_missing_ids",
    "category_of_heading",
    "insert_entries",
    "new_entry_id",
    "normalise_text",
    "parse_entries",
    "render_bullet",
    "replace_entry",
    "split_block_id",
]
