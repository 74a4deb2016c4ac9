"""The prose of memory files: what a person wrote around the bullets, as chunks.

A memory file holds entries (``- text ^m-…`` bullets, see
:mod:`~langmem_ext.workspace.markdown`) and whatever else was typed into it: a
paragraph under a heading, a numbered list, a quote, a table, a fenced block. That
text is searchable too, as *chunks*:

- a paragraph (consecutive non-blank lines) is one chunk;
- each item of a list that is not an entry (``1. …``, ``+ …``, an indented ``- …``)
  starts a chunk of its own, its indented lines continue it;
- a fenced block (```` ``` ```` / ``~~~``) is one chunk, blank lines included;
- headings, blank lines, rules (``---``) and entry bullets end a chunk; the headings
  above a chunk (all but the file's title) are its context, searched with it.

A chunk longer than :data:`CHUNK_MAX_CHARS` is cut between its lines.

Each chunk has an anchor, ``p-`` and ten hex digits of a hash of its file and its
text (``p-3f9a1c02d4``; the second chunk of one file with the same text gets
``-2``, and so on). It is written nowhere: the file stays exactly as typed, and
the anchor is found again by parsing the file. An edit anywhere else in the file
(lines added above, another paragraph changed, entries added) leaves it as it is;
an edit of the chunk's own text gives it a new anchor.

Everything here is pure: text in, chunks out.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from langmem_ext.workspace.markdown import bullet_end, category_of_heading, heading_of, is_bullet

PROSE_PREFIX = "p-"
"""What opens the anchor of a prose chunk (entries' block ids open with ``m-``)."""
CHUNK_MAX_CHARS = 1200
"""Chunks longer than this are cut between lines (a single longer line stays whole)."""
HEADING_SEPARATOR = " › "
"""Joins the headings above a chunk into its context (``Trip to Japan › Food``)."""

ANCHOR_RE = re.compile(r"p-[0-9a-f]{10}(?:-[0-9]{1,6})?")
"""A prose chunk's anchor."""
_RULE_RE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ITEM_RE = re.compile(r"^\s*(?:\d{1,9}[.)]|[-*+])\s+\S")
"""A list item that is not an entry (an entry's bullet is matched first)."""


@dataclass(frozen=True)
class ProseChunk:
    """One chunk of prose of a memory file.

    Attributes:
        anchor: Its anchor (``p-3f9a1c02d4``); ``path#^anchor`` cites it.
        text: Its lines, stripped, joined by ``\\n``.
        heading: The headings above it, outermost first, joined by
            :data:`HEADING_SEPARATOR` (``""`` under none but the file's title).
        category: The category of the ``##`` section it is in (as an entry there
            would have): ``fact`` under no known heading.
        line: 1-based first line.
        end_line: 1-based last line.
    """

    anchor: str
    text: str
    heading: str
    category: str
    line: int
    end_line: int

    @property
    def indexed_text(self) -> str:
        """What the chunk is found by: its headings, then its text."""
        return f"{self.heading}\n{self.text}" if self.heading else self.text


def prose_anchor(path: str, text: str) -> str:
    """The anchor of a chunk with ``text`` in the file ``path`` (its first copy there)."""
    digest = hashlib.sha256(f"{path}\n{text}".encode()).hexdigest()
    return PROSE_PREFIX + digest[:10]


def parse_prose(content: str, path: str) -> list[ProseChunk]:
    """The prose chunks of a memory file, in file order.

    Args:
        content: The file's text.
        path: Its workspace-relative path (part of each anchor).

    Returns:
        The chunks; text without a letter or digit (a table's ``|---|`` row alone,
        a line of emoji) is left out.

    Example:
        >>> text = "# Long-term memory\\n\\n## Trip\\nWe took the night train.\\n- Likes tea ^m-0001\\n"
        >>> [(c.heading, c.text, c.line) for c in parse_prose(text, "MEMORY.md")]
        [('Trip', 'We took the night train.', 4)]
    """
    lines = content.splitlines()
    spans: list[tuple[int, int, str, str]] = []  # (start, end, category, heading)
    trail: list[tuple[int, str]] = []
    category = "fact"
    title = _title_index(lines)
    start: int | None = None
    fence: str | None = None

    def close(end: int) -> None:
        nonlocal start
        if start is not None and end > start:
            heading = HEADING_SEPARATOR.join(t for _lvl, t in trail)
            spans.append((start, end, category, heading))
        start = None

    i = 0
    while i < len(lines):
        raw = lines[i]
        if fence is not None:  # inside a fenced block: it ends at its closing fence
            i += 1
            if raw.strip().startswith(fence):
                fence = None
                close(i)
            continue
        if not raw.strip() or _RULE_RE.match(raw):
            close(i)
            i += 1
            continue
        head = heading_of(raw)
        if head is not None:
            close(i)
            level, name = head
            if level >= 2:
                category = category_of_heading(name) or "fact"
            if i != title:
                trail = [(lvl, t) for lvl, t in trail if lvl < level] + [(level, name.strip())]
            i += 1
            continue
        if is_bullet(raw):  # an entry: not prose
            close(i)
            i = bullet_end(lines, i)
            continue
        opened = _FENCE_RE.match(raw)
        if opened is not None:
            close(i)
            start = i
            fence = opened.group(1)[0] * len(opened.group(1))
            i += 1
            continue
        if start is not None and _ITEM_RE.match(raw):
            close(i)  # a list item starts a chunk of its own
        if start is None:
            start = i
        i += 1
    close(len(lines))
    return _chunks(lines, spans, path)


def _title_index(lines: list[str]) -> int:
    """Index of the file's title: a ``#`` heading that is its first non-blank line (-1: none)."""
    for i, raw in enumerate(lines):
        if raw.strip():
            head = heading_of(raw)
            return i if head is not None and head[0] == 1 else -1
    return -1


def _chunks(
    lines: list[str], spans: list[tuple[int, int, str, str]], path: str
) -> list[ProseChunk]:
    """The chunks of the line spans (long ones cut), with their anchors."""
    seen: dict[str, int] = {}
    out: list[ProseChunk] = []
    for start, end, category, heading in spans:
        for lo, hi in _pieces(lines, start, end):
            text = "\n".join(s for s in (ln.strip() for ln in lines[lo:hi]) if s)
            if not any(ch.isalnum() for ch in text):
                continue
            base = prose_anchor(path, text)
            seen[base] = seen.get(base, 0) + 1
            anchor = base if seen[base] == 1 else f"{base}-{seen[base]}"
            out.append(ProseChunk(anchor, text, heading, category, lo + 1, hi))
    return out


def _pieces(lines: list[str], start: int, end: int) -> list[tuple[int, int]]:
    """``[start, end)`` cut between lines into pieces of at most :data:`CHUNK_MAX_CHARS`."""
    pieces: list[tuple[int, int]] = []
    lo, size = start, 0
    for i in range(start, end):
        n = len(lines[i].strip()) + 1
        if size and size + n > CHUNK_MAX_CHARS:
            pieces.append((lo, i))
            lo, size = i, 0
        size += n
    pieces.append((lo, end))
    return pieces


def joins_prose(above: str | None, below: str | None) -> bool:
    """Whether the lines ``above`` and ``below`` an entry's bullet are read as one
    chunk once the bullet is removed between them (``None``: no line there).

    When this is ``False``, removing the bullet leaves the file's chunks as they
    were, only moved; when it is ``True`` the two chunks around it may become one.
    """
    return all(
        line is not None and line.strip() and heading_of(line) is None and not is_bullet(line)
        for line in (above, below)
    )


__all__ = [
    "ANCHOR_RE",
    "CHUNK_MAX_CHARS",
    "HEADING_SEPARATOR",
    "PROSE_PREFIX",
    "ProseChunk",
    "joins_prose",
    "parse_prose",
    "prose_anchor",
]
