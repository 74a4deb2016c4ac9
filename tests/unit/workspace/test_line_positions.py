"""Ordering keys that never need renumbering, and the line change between two texts
(the PostgreSQL document store's pure parts)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langmem_ext.workspace.postgres.documents import _text_change
from langmem_ext.workspace.postgres.positions import keys_between, spread_keys


def test_keys_fit_between_any_two_and_stay_short_when_added_one_after_another() -> None:
    keys = spread_keys(10_000)
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    low, high = keys[5], keys[6]
    for _ in range(5_000):  # each new line after the previous one, before the same line
        (low,) = keys_between(low, high, 1)
        assert keys[5] < low < high
    assert len(low) < 20
    run = keys_between(keys[-1], None, 3)
    assert run == sorted(run) and run[0] > keys[-1]
    assert keys_between(None, keys[0], 2)[-1] < keys[0]
    assert all(not k.endswith("0") for k in [*keys, *run])
    for bad in [("b", "a"), ("a", "a"), ("a0", None), ("G", None), ("", "a")]:
        with pytest.raises(ValueError):
            keys_between(*bad, 1)


_TEXT = st.text(alphabet=st.sampled_from("ab\n\r é"), max_size=40)


@given(old=_TEXT, new=_TEXT)
def test_the_line_change_rebuilds_the_new_text_from_the_old(old: str, new: str) -> None:
    start, end, added, grown = _text_change(old, new)
    assert grown == len(new.encode("utf-8")) - len(old.encode("utf-8"))
    lines = old.split("\n")
    assert 0 <= start <= end <= len(lines)
    lines[start:end] = added
    assert "\n".join(lines) == new
    if old == new:
        assert start == end and added == []


def test_a_one_line_edit_of_a_large_text_is_one_line() -> None:
    lines = [f"- bullet {i}" for i in range(200_000)]
    old = "\n".join(lines) + "\n"
    for at in (0, 100_000, 199_999):
        edited = [*lines[:at], "- changed", *lines[at + 1 :]]
        assert _text_change(old, "\n".join(edited) + "\n")[:3] == (at, at + 1, ["- changed"])
        removed = lines[:at] + lines[at + 1 :]
        start, end, added, _grown = _text_change(old, "\n".join(removed) + "\n")
        assert end - start == 1 and added == []
