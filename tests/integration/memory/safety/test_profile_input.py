"""What goes into the profile comes out unchanged, or is refused with nothing written.

``PROFILE.md`` holds one ``- field: value`` line per field, so a value that spans
lines (``\\n``, but also ``\\u2028``, ``\\x0b``, ``\\x1c``, ``\\x85`` … anything
``str.splitlines`` splits on) could write lines of other fields; a lone surrogate
cannot be written as UTF-8 at all. Both are refused with a typed error whatever the
way in: the application's calls, the ``profile_update`` tool and the admin form.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langmem_ext import Memory, Settings
from langmem_ext.core.errors import InvalidInputError
from langmem_ext.memory.profile import FIELDS, LIST_FIELDS, parse_profile

LINE_BREAKS = "".join(c for c in map(chr, range(0x3000)) if len(f"a{c}b".splitlines()) > 1)
"""Every character ``str.splitlines`` splits on."""
SEPARATORS = ",，、;；"
"""What separates the items of a list field in ``PROFILE.md``."""
BASELINE: dict[str, Any] = {
    "name": "Ann",
    "preferred_name": "Annie",
    "language": "en",
    "timezone": "Europe/Paris",
    "allergies": ["peanuts", "shellfish"],
    "dietary_restrictions": ["vegetarian"],
    "medical_conditions": ["asthma"],
    "medications": ["salbutamol"],
    "surgeries": ["appendectomy"],
    "accessibility_needs": ["large print"],
    "emergency_contact": "Bob +33 6 12 34 56 78",
}
BASE_PREFERENCES = {"seat": "window", "tea": "green"}


def test_a_line_break_in_an_item_cannot_rewrite_the_allergies(fake_memory: Memory) -> None:
    fake_memory.upsert_facts({"allergies": ["peanuts", "shellfish"]})
    path = fake_memory.root / "PROFILE.md"
    before = path.read_bytes()
    for brk in ("\n", "\r", "\u2028", "\u2029", "\x0b", "\x0c", "\x1c", "\x85"):
        with pytest.raises(InvalidInputError, match="line break"):
            fake_memory.upsert_facts({"medications": [f"aspirin{brk}- allergies:"]})
        with pytest.raises(InvalidInputError, match="line break"):
            fake_memory.upsert_facts({"name": f"Ann{brk}"})
        with pytest.raises(InvalidInputError, match="line break"):
            fake_memory.upsert_preferences({f"tea{brk}- allergies": "none"})
        with pytest.raises(InvalidInputError, match="line break"):
            fake_memory.upsert_preferences({"tea": f"green{brk}## Safety"})
        with pytest.raises(InvalidInputError, match="line break"):
            fake_memory.upsert_facts({f"allergies{brk}": ["x"]})
    assert fake_memory.profile().allergies == ["peanuts", "shellfish"]
    assert path.read_bytes() == before
    assert [c.field for c in fake_memory.profile_history()] == ["allergies"]


def test_a_lone_surrogate_is_a_typed_error(fake_memory: Memory) -> None:
    fake_memory.upsert_facts({"allergies": ["peanuts"]})
    path = fake_memory.root / "PROFILE.md"
    before = path.read_bytes()
    for facts in ({"medications": ["aspi\ud800rin"]}, {"name": "A\udfffnn"}):
        with pytest.raises(InvalidInputError, match="surrogate"):
            fake_memory.upsert_facts(facts)
    for prefs in ({"t\ud83dea": "green"}, {"tea": "gr\udc00een"}):
        with pytest.raises(InvalidInputError, match="surrogate"):
            fake_memory.upsert_preferences(prefs)
    assert path.read_bytes() == before
    assert not list(fake_memory.root.glob(".PROFILE.md.*"))  # no temp file left
    assert [c.field for c in fake_memory.profile_history()] == ["allergies"]


def test_the_tool_refuses_a_hidden_line_break_and_writes_nothing(fake_memory: Memory) -> None:
    from langmem_ext.tools import create_memory_tools

    fake_memory.upsert_facts({"allergies": ["peanuts"]}, scope="user_alice")
    tools = {t.name: t for t in create_memory_tools(fake_memory)}
    alice = {"configurable": {"user_id": "alice"}}
    call = {
        "name": "profile_update",
        "args": {"facts": {"medications": ["aspirin\u2028- allergies:"]}},
        "id": "c1",
        "type": "tool_call",
    }
    out = tools["profile_update"].invoke(call, alice)
    assert out.status == "error" and "line break" in out.content
    assert fake_memory.list_pending(scope="user_alice") == []
    assert fake_memory.profile(scope="user_alice").allergies == ["peanuts"]


# -- every field, round trip -----------------------------------------------------------

_LETTERS = st.characters(codec="utf-8", categories=["L", "N", "P", "S", "Zs"])
_TRICKY = st.sampled_from(
    [*LINE_BREAKS, *SEPARATORS, ":", "：", "-", "#", "*", " ", "\t", "\ud800"]
)
_ANY_TEXT = st.text(st.one_of(_LETTERS, _TRICKY), max_size=12)


def _item_ok(item: str) -> bool:
    return bool(item) and item == item.strip() and not any(c in SEPARATORS for c in item)


_ITEM = st.text(_LETTERS, min_size=1, max_size=12).filter(_item_ok)
_TEXT = st.text(_LETTERS, min_size=1, max_size=20).map(lambda s: " ".join(s.split())).filter(bool)
_KEY = _TEXT.filter(lambda k: ":" not in k and "：" not in k)


def _valid_value(field: str) -> st.SearchStrategy[Any]:
    if field in LIST_FIELDS:
        return st.lists(_ITEM, min_size=1, max_size=4, unique=True)
    return _TEXT


@st.composite
def _valid_change(draw: st.DrawFn) -> tuple[str, Any]:
    field = draw(st.sampled_from([*FIELDS, "preference"]))
    if field == "preference":
        return field, (draw(_KEY), draw(_TEXT))
    return field, draw(_valid_value(field))


def _has_break_or_surrogate(text: str) -> bool:
    return any(c in LINE_BREAKS or "\ud800" <= c <= "\udfff" for c in text)


@st.composite
def _any_change(draw: st.DrawFn) -> tuple[str, Any]:
    field = draw(st.sampled_from([*FIELDS, "preference"]))
    if field == "preference":
        return field, (draw(_ANY_TEXT), draw(_ANY_TEXT))
    if field in LIST_FIELDS:
        return field, draw(st.lists(_ANY_TEXT, max_size=4))
    return field, draw(_ANY_TEXT)


@pytest.fixture(scope="module")
def shared_memory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    """One workspace for every example (each example works in a scope of its own)."""
    s = Settings(workspace=tmp_path_factory.mktemp("profile-props") / "ws")
    s.embeddings.provider = "fake"
    with Memory(settings=s) as mem:
        yield mem


_scopes = itertools.count()


def _baseline(memory: Memory) -> str:
    scope = f"p{next(_scopes)}"
    memory.upsert_facts(BASELINE, scope=scope, replace=True)
    memory.upsert_preferences(dict(BASE_PREFERENCES), scope=scope)
    return scope


def _upsert(memory: Memory, scope: str, field: str, value: Any) -> None:
    if field == "preference":
        key, text = value
        memory.upsert_preferences({key: text}, scope=scope)
    else:
        memory.upsert_facts({field: value}, scope=scope, replace=True)


def _fields(memory: Memory, scope: str) -> dict[str, Any]:
    """Every field as the file says, read twice: through the API and parsed afresh."""
    p = memory.profile(scope=scope)
    fresh = parse_profile(memory.profiles.path(scope).read_text(encoding="utf-8"))
    assert fresh.flat() == p.flat()
    return p.flat()


def _others(fields: dict[str, Any], name: str) -> dict[str, Any]:
    """Every field but ``name``: what an upsert of ``name`` must leave as it was."""
    return {k: v for k, v in fields.items() if k != name}


_PROPS = settings(
    max_examples=60,
    deadline=None,
    database=None,  # nothing written into the checkout
    suppress_health_check=[HealthCheck.too_slow],
)


@_PROPS
@given(change=_valid_change())
def test_valid_values_of_every_field_come_back_unchanged(
    shared_memory: Memory, change: tuple[str, Any]
) -> None:
    field, value = change
    scope = _baseline(shared_memory)
    before = _fields(shared_memory, scope)
    _upsert(shared_memory, scope, field, value)
    after = _fields(shared_memory, scope)
    name = f"preferences.{value[0]}" if field == "preference" else field
    assert after[name] == (value[1] if field == "preference" else value)
    assert _others(after, name) == _others(before, name)


@_PROPS
@given(change=_any_change())
def test_any_value_is_stored_as_given_or_refused_with_no_change(
    shared_memory: Memory, change: tuple[str, Any]
) -> None:
    field, value = change
    scope = _baseline(shared_memory)
    path = shared_memory.profiles.path(scope)
    before, raw = _fields(shared_memory, scope), path.read_bytes()
    history = len(shared_memory.profile_history(scope=scope))
    texts = list(value) if isinstance(value, list | tuple) else [value]
    must_refuse = any(_has_break_or_surrogate(t) for t in texts)
    try:
        _upsert(shared_memory, scope, field, value)
    except InvalidInputError:
        assert path.read_bytes() == raw
        assert _fields(shared_memory, scope) == before
        assert len(shared_memory.profile_history(scope=scope)) == history
        return
    assert not must_refuse, f"{field} = {value!r} was written"
    after = _fields(shared_memory, scope)
    if field == "preference":
        name, expected = f"preferences.{' '.join(value[0].split())}", " ".join(value[1].split())
        expected = expected or None
    elif field in LIST_FIELDS:
        name = field
        expected = list(dict.fromkeys(i.strip() for i in value if i.strip()))
    else:
        name, expected = field, " ".join(value.split()) or None
    assert after.get(name) == expected
    assert _others(after, name) == _others(before, name)
