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
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import compress, count, repeat
from typing import NamedTuple

ID_PREFIX = "m-"
_BLOCK_ID_RE = re.compile(r"\s*\^(m-[0-9a-z]{4,32})\s*$")
_BULLET_RE = re.compile(r"^[-*] (.*)$")
_HEADING_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_STRUCK_RE = re.compile(r"^~~(.+)~~$", re.DOTALL)
"""A struck-through bullet (``- ~~I live in Berlin~~ ^m-…``) is a superseded version."""

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
        superseded: The bullet is struck through (``~~…~~``): a version that is no
            longer current (its text is given without the ``~~``).
    """

    id: str | None
    text: str
    category: str
    line: int
    end_line: int
    superseded: bool = False


def parse_entries(content: str) -> list[ParsedEntry]:
    """Parse every bullet of a memory file.

    Args:
        content: The file's text.

    Returns:
        Entries in file order. Empty bullets are skipped.
    """
    lines = content.splitlines()
    return _parse_lines(lines, 0, len(lines), "fact")


def _parse_lines(lines: list[str], start: int, end: int, category: str) -> list[ParsedEntry]:
    """Parse the bullets of ``lines[start:end]``; ``category`` is the one in force at ``start``."""
    entries: list[ParsedEntry] = []
    i = start
    while i < end:
        raw = lines[i]
        heading = _HEADING_RE.match(raw) if raw.startswith("#") else None
        if heading:
            if len(heading.group(1)) >= 2:
                category = category_of_heading(heading.group(2)) or "fact"
            i += 1
            continue
        bullet = _BULLET_RE.match(raw)
        if not bullet:
            i += 1
            continue
        head = bullet.group(1)
        first = i
        i = _block_end(lines, i, end)
        parts = [head, *(line.strip() for line in lines[first + 1 : i])]
        text, entry_id = _split_block_ids(parts)
        struck = _STRUCK_RE.match(text)
        if struck:
            text = struck.group(1).strip()
        if text:
            entries.append(
                ParsedEntry(
                    id=entry_id,
                    text=text,
                    category=category,
                    line=first + 1,
                    end_line=i,
                    superseded=struck is not None,
                )
            )
    return entries


def _block_end(lines: list[str], start: int, end: int) -> int:
    """Index after the bullet starting at ``lines[start]``: its indented, non-empty
    continuation lines (a line typed by hand below a bullet continues it)."""
    i = start + 1
    while i < end and lines[i][:1] in (" ", "\t") and lines[i].strip():
        i += 1
    return i


def _split_block_ids(parts: list[str]) -> tuple[str, str | None]:
    """The text of a bullet's lines and its block id: the last ``^m-…`` that ends one
    of its lines. It ends the last line as written; a line added below it by hand
    leaves it on an earlier one. An id-looking word earlier in the text is text."""
    for k in range(len(parts) - 1, -1, -1):
        text, found = split_block_id(parts[k])
        if found is not None:
            kept = [*parts[:k], text, *parts[k + 1 :]]
            return "\n".join(p.strip() for p in kept if p.strip()).strip(), found
    return "\n".join(p.strip() for p in parts if p.strip()).strip(), None


def heading_of(line: str) -> tuple[int, str] | None:
    """``(level, title)`` of a heading line (``## Facts`` -> ``(2, "Facts")``), else ``None``."""
    m = _HEADING_RE.match(line) if line.startswith("#") else None
    return (len(m.group(1)), m.group(2)) if m else None


def is_bullet(line: str) -> bool:
    """Whether ``line`` starts an entry's bullet (``- `` or ``* `` at column 0)."""
    return _BULLET_RE.match(line) is not None


def bullet_end(lines: list[str], start: int) -> int:
    """Index after the bullet starting at ``lines[start]`` (its continuation lines included)."""
    return _block_end(lines, start, len(lines))


def _headings(lines: list[str]) -> Iterator[tuple[int, int, str]]:
    """``(index, level, title)`` of the heading lines, found at C speed (10k-line files)."""
    for idx in compress(count(), map(str.startswith, lines, repeat("#"))):
        m = _HEADING_RE.match(lines[idx])
        if m:
            yield idx, len(m.group(1)), m.group(2)


def split_block_id(text: str) -> tuple[str, str | None]:
    """Split a trailing ``^m-…`` block id off ``text``."""
    m = _BLOCK_ID_RE.search(text)
    if not m:
        return text, None
    return text[: m.start()], m.group(1)


def render_bullet(text: str, entry_id: str, *, superseded: bool = False) -> list[str]:
    """Render one entry as bullet lines (continuations indented by two spaces).

    A superseded version is struck through: ``- ~~text~~ ^id``.
    """
    parts = [p.strip() for p in text.strip().splitlines()]
    parts = [p for p in parts if p] or [""]
    if superseded:
        parts[0] = "~~" + parts[0]
        parts[-1] += "~~"
    out = [f"- {parts[0]}"] + [f"  {p}" for p in parts[1:]]
    out[-1] = f"{out[-1]} ^{entry_id}"
    return out


def normalise_text(text: str) -> str:
    """The canonical form of a memory text as stored (trimmed, blank lines dropped)."""
    parts = [p.strip() for p in text.strip().splitlines()]
    return "\n".join(p for p in parts if p)


@dataclass(frozen=True)
class Insertion:
    """What :func:`insert_entries_tracked` did to a file.

    Attributes:
        content: The new file text.
        entries: The inserted entries, exactly as :func:`parse_entries` reads them
            in ``content``.
        shifts: ``(after, count)`` pairs in the order they happened: every line
            below line ``after`` (1-based) at that point moved down ``count`` lines.
    """

    content: str
    entries: list[ParsedEntry]
    shifts: list[tuple[int, int]]


def insert_entries(content: str, items: Iterable[tuple[str, str, str]], *, title: str) -> str:
    """Append entries under their category sections, creating sections as needed.

    Args:
        content: Current file text ("" for a new file).
        items: ``(entry_id, text, category)`` triples, in order.
        title: The ``#`` title written when the file is new.

    Returns:
        The new file text.
    """
    return insert_entries_tracked(content, items, title=title).content


def insert_entries_tracked(
    content: str,
    items: Iterable[tuple[str, str, str]],
    *,
    title: str,
    lines: list[str] | None = None,
) -> Insertion:
    """:func:`insert_entries`, also telling where the new entries went and which lines moved.

    Lets a caller index an append without parsing the whole file again: only the
    inserted bullets are parsed (a bullet ends at the next bullet, blank line or
    heading, so they parse the same alone as in the file). ``lines`` are
    ``content.splitlines()`` when the caller has them (``content`` is then not read).
    """
    if lines is None:
        lines = content.splitlines() if content else [f"# {title}", ""]
    elif not lines:
        lines = [f"# {title}", ""]
    by_cat: dict[str, list[str]] = {}
    for entry_id, text, category in items:
        by_cat.setdefault(category, []).extend(render_bullet(text, entry_id))
    blocks: list[_Block] = []
    shifts: list[tuple[int, int]] = []
    for category, bullet_lines in by_cat.items():
        lines, block, added = _insert_into_section(lines, category, bullet_lines)
        if added:
            shifts.append((block.start, added))
            blocks = [b.moved(added) if b.start >= block.start else b for b in blocks]
        blocks.append(block)
    entries = [e for b in sorted(blocks) for e in _parse_lines(lines, b.start, b.end, b.category)]
    return Insertion("\n".join(lines).rstrip("\n") + "\n", entries, shifts)


class _Block(NamedTuple):
    """Inserted bullet lines ``[start, end)`` (0-based) and the category in force there."""

    start: int
    end: int
    category: str

    def moved(self, lines: int) -> _Block:
        return _Block(self.start + lines, self.end + lines, self.category)


def _section_bounds(lines: list[str], category: str) -> tuple[int, int, str] | None:
    """``(heading index, end, category in force at the end)`` of a category's section."""
    start = None
    current = "fact"  # what parse_entries assigns at this point
    for idx, level, title in _headings(lines):
        if start is not None and level <= 2:
            return start, idx, current
        named = category_of_heading(title)
        if level >= 2:
            current = named or "fact"
        if level == 2 and named == category:
            start = idx
    if start is None:
        return None
    return start, len(lines), current


def _insert_into_section(
    lines: list[str], category: str, bullets: list[str]
) -> tuple[list[str], _Block, int]:
    """Insert bullet lines at the end of a section (created at the end of the file).

    Returns:
        ``(new lines, where the bullets are, lines added before the old line at the
        block's start)`` — 0 added when they went after every old line.
    """
    bounds = _section_bounds(lines, category)
    if bounds is None:
        while lines and not lines[-1].strip():
            lines.pop()
        heading = SECTION_TITLES[category]
        at = len(lines) + 2
        block = _Block(at, at + len(bullets), category_of_heading(heading) or "fact")
        return [*lines, "", f"## {heading}", *bullets], block, 0
    start, end, in_force = bounds
    pos = end
    while pos > start + 1 and not lines[pos - 1].strip():
        pos -= 1
    new = [*lines[:pos], *bullets, *lines[pos:]]
    # keep one blank line before the next heading
    after = pos + len(bullets)
    if after < len(new) and new[after].startswith("#"):
        new.insert(after, "")
    return new, _Block(pos, after, in_force), len(new) - len(lines)


@dataclass(frozen=True)
class Outline:
    """What appending to a memory file needs to know of it, without its text.

    Attributes:
        lines: Its number of lines (as :func:`parse_entries` counts them).
        headings: ``(level, category named or None)`` of its level-1 and level-2
            headings, in file order.
        in_force: The category :func:`parse_entries` assigns at its end.
        canonical: Whether the text is exactly its lines joined by ``\\n`` with one
            final ``\\n``, the last line not blank: then :func:`insert_entries` adds
            to its last section by appending, and so may :func:`append_entries`.
    """

    lines: int
    headings: tuple[tuple[int, str | None], ...]
    in_force: str
    canonical: bool


def outline(content: str) -> Outline:
    """The :class:`Outline` of a file's text (one pass over its lines)."""
    lines = content.splitlines()
    heads: list[tuple[int, str | None]] = []
    in_force = "fact"
    for _idx, level, title in _headings(lines):
        named = category_of_heading(title)
        if level >= 2:
            in_force = named or "fact"
        if level <= 2:
            heads.append((level, named))
    canonical = bool(lines) and bool(lines[-1].strip()) and content == "\n".join(lines) + "\n"
    return Outline(len(lines), tuple(heads), in_force, canonical)


@dataclass(frozen=True)
class Append:
    """What :func:`append_entries` adds to a file.

    Attributes:
        text: The text to append at the end of the file.
        entries: The appended entries as :func:`parse_entries` reads them in the
            whole file (file line numbers).
        outline: The file's outline after the append.
    """

    text: str
    entries: list[ParsedEntry]
    outline: Outline


def append_entries(before: Outline, items: Iterable[tuple[str, str, str]]) -> Append | None:
    """:func:`insert_entries` as an append, when that is what it amounts to.

    Appending gives exactly the text :func:`insert_entries` would write when the file
    is canonical and each category's section is the file's last level-1/2 section or
    does not exist yet (it is then created at the end). Otherwise (a section in the
    middle must grow) returns ``None`` and the file has to be rewritten.

    Args:
        before: The outline of the file as it is.
        items: ``(entry_id, text, category)`` triples, in order.
    """
    if not before.canonical:
        return None
    by_cat: dict[str, list[str]] = {}
    for entry_id, text, category in items:
        by_cat.setdefault(category, []).extend(render_bullet(text, entry_id))
    heads = list(before.headings)
    in_force = before.in_force
    new: list[str] = []
    for category, bullet_lines in by_cat.items():
        first = next(
            (i for i, (level, named) in enumerate(heads) if level == 2 and named == category),
            None,
        )
        if first is None:
            title = SECTION_TITLES[category]
            new.extend(["", f"## {title}"])
            named = category_of_heading(title)
            heads.append((2, named))
            in_force = named or "fact"
        elif first != len(heads) - 1:
            return None  # a section in the middle grows: not an append
        new.extend(bullet_lines)
    entries = [
        ParsedEntry(e.id, e.text, e.category, e.line + before.lines, e.end_line + before.lines)
        for e in _parse_lines(new, 0, len(new), before.in_force)
    ]
    after = Outline(before.lines + len(new), tuple(heads), in_force, True)
    return Append("\n".join(new) + "\n", entries, after)


def replace_entry(
    content: str,
    entry_id: str,
    new_text: str | None,
    *,
    at: ParsedEntry | None = None,
    lines: list[str] | None = None,
) -> tuple[str, bool]:
    """Replace (or with ``new_text=None`` remove) the bullet carrying ``entry_id``.

    The bullet keeps its struck-through state.

    Args:
        content: The file's text.
        entry_id: The bullet's id.
        new_text: Its new text, or ``None`` to remove it.
        at: The bullet as parsed in ``content`` when the caller located it already
            (:func:`entry_at`): the file is then not parsed again.
        lines: ``content.splitlines()`` when the caller split it already; it is edited
            in place into the lines of the new content.

    Returns:
        ``(new content, found)``.
    """
    lines = content.splitlines() if lines is None else lines
    entry = _located(content, entry_id, at)
    if entry is None:
        return content, False
    lines[entry.line - 1 : entry.end_line] = replacing_lines(entry, new_text)
    return "\n".join(lines).rstrip("\n") + "\n", True


def replacing_lines(entry: ParsedEntry, new_text: str | None) -> list[str]:
    """The lines that replace the bullet ``entry`` when its text becomes ``new_text``
    (none: ``None`` removes it); it keeps its struck-through state."""
    if new_text is None:
        return []
    return render_bullet(new_text, str(entry.id), superseded=entry.superseded)


def superseding_lines(entry: ParsedEntry, new_id: str, new_text: str) -> list[str]:
    """The lines that replace the bullet ``entry`` when ``new_text`` (as ``new_id``)
    supersedes it: the old one struck through, the new one right below it."""
    return render_bullet(entry.text, str(entry.id), superseded=True) + render_bullet(
        new_text, new_id
    )


def move_entry(
    content: str, entry_id: str, category: str, *, at: ParsedEntry | None = None
) -> Insertion | None:
    """Move the bullet carrying ``entry_id`` to the end of its ``category``'s section.

    The section is created at the end of the file when missing (as
    :func:`insert_entries` does); the bullet's text and struck-through state are kept.

    Args:
        content: The file's text.
        entry_id: The bullet's id.
        category: Its new category.
        at: The bullet as parsed in ``content`` when the caller located it already
            (:func:`entry_at`): the file is then not parsed.

    Returns:
        The new content, the bullet as parsed there, and the lines that moved (up below
        the old place, then down below the new one); ``None`` when the id is not in it.
    """
    lines = content.splitlines()
    entry = _located(content, entry_id, at)
    if entry is None:
        return None
    bullet = lines[entry.line - 1 : entry.end_line]
    rest = lines[: entry.line - 1] + lines[entry.end_line :]
    moved, block, added = _insert_into_section(rest, category, bullet)
    placed = entry_at(moved, block.start + 1, block.category)
    shifts = [(entry.end_line, -len(bullet))] + ([(block.start, added)] if added else [])
    new_content = "\n".join(moved).rstrip("\n") + "\n"
    return Insertion(new_content, [placed] if placed is not None else [], shifts)


def supersede_entry(
    content: str,
    old_id: str,
    new_id: str,
    new_text: str,
    *,
    at: ParsedEntry | None = None,
    lines: list[str] | None = None,
) -> tuple[str, ParsedEntry | None]:
    """Strike the bullet ``old_id`` through and write ``new_text`` (as ``new_id``)
    right below it, in the same section.

    Args:
        content: The file's text.
        old_id: The version to strike through.
        new_id: The new version's id.
        new_text: The new version's text.
        at: The bullet ``old_id`` as parsed in ``content`` when the caller located it
            already (:func:`entry_at`): the file is then not parsed at all.
        lines: ``content.splitlines()`` when the caller split it already; it is edited
            in place into the lines of the new content.

    Returns:
        ``(new content, the new entry as parsed)``; ``(content, None)`` when
        ``old_id`` is not in the file.
    """
    lines = content.splitlines() if lines is None else lines
    entry = _located(content, old_id, at)
    if entry is None:
        return content, None
    repl = superseding_lines(entry, new_id, new_text)
    lines[entry.line - 1 : entry.end_line] = repl
    new_content = "\n".join(lines).rstrip("\n") + "\n"
    struck = len(render_bullet(entry.text, old_id, superseded=True))
    return new_content, entry_at(lines, entry.line + struck, entry.category)


def entry_at(lines: list[str], line: int, category: str) -> ParsedEntry | None:
    """The bullet starting on ``line`` (1-based) of ``lines``, as :func:`parse_entries`
    reads it when ``category`` is the section's; ``None`` when no bullet starts there.

    Reads that bullet's lines only: an edit of one entry of a large file locates it by
    the line its index row gives, instead of parsing the whole file.

    Example:
        >>> lines = ["## Facts", "- Likes tea ^m-0001", "- Lives in Lyon", "  since May ^m-0002"]
        >>> entry_at(lines, 3, "fact")  # doctest: +NORMALIZE_WHITESPACE
        ParsedEntry(id='m-0002', text='Lives in Lyon\\nsince May', category='fact',
                    line=3, end_line=4, superseded=False)
    """
    start = line - 1
    if not 0 <= start < len(lines):
        return None
    if not _BULLET_RE.match(lines[start]):
        return None
    found = _parse_lines(lines, start, _block_end(lines, start, len(lines)), category)
    return found[0] if found else None


def _located(content: str, entry_id: str, at: ParsedEntry | None) -> ParsedEntry | None:
    """``at`` when given, else the bullet carrying ``entry_id`` (the whole file parsed)."""
    if at is not None:
        return at
    return next((e for e in parse_entries(content) if e.id == entry_id), None)


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
    """The bullet's lines with ``new_id`` as its block id, on the last line (an id left
    on an earlier line by a hand edit is dropped; id-looking words of the text stay)."""
    out = list(block)
    for k in range(len(out) - 1, -1, -1):
        text, found = split_block_id(out[k])
        if found is not None:
            out[k] = text.rstrip() or out[k]
            break
    out[-1] = f"{out[-1].rstrip()} ^{new_id}"
    return out


__all__ = [
    "SECTION_TITLES",
    "Append",
    "Insertion",
    "Outline",
    "ParsedEntry",
    "append_entries",
    "assign_missing_ids",
    "bullet_end",
    "category_of_heading",
    "entry_at",
    "heading_of",
    "insert_entries",
    "insert_entries_tracked",
    "is_bullet",
    "move_entry",
    "new_entry_id",
    "normalise_text",
    "outline",
    "parse_entries",
    "render_bullet",
    "replace_entry",
    "replacing_lines",
    "split_block_id",
    "supersede_entry",
    "superseding_lines",
]
