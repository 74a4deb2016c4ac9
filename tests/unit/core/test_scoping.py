"""Scope resolution from ``config["configurable"]``."""

from __future__ import annotations

import re

import pytest

from langmem_ext import InvalidScopeError
from langmem_ext.memory.scoping import scope_for_user, scope_from_config

SCOPE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\-]{0,63}$")


def test_order_scope_then_user_then_default() -> None:
    assert scope_from_config({"configurable": {"scope": "team_a", "user_id": "42"}}) == "team_a"
    assert scope_from_config({"configurable": {"user_id": "42"}}, "x") == "user_42"
    assert scope_from_config({"configurable": {"langgraph_user_id": "7"}}) == "user_7"
    assert scope_from_config({"configurable": {"thread_id": "t"}}, "fallback") == "fallback"
    assert scope_from_config(None) == "main"
    assert scope_from_config({}, "d") == "d"
    assert scope_from_config({"configurable": {"scope": "  ", "user_id": ""}}, "d") == "d"


@pytest.mark.parametrize(
    "user_id",
    ["alice@example.com", "a.b", "a/b", "../../etc", "名前", "x" * 200, "a b", 12345, "A-b_C"],
)
def test_every_user_id_maps_to_a_valid_scope(user_id: str | int) -> None:
    scope = scope_for_user(user_id)
    assert SCOPE_RE.match(scope), scope
    assert scope == scope_for_user(user_id)  # stable


def test_distinct_ids_never_share_a_scope() -> None:
    ids = ["a.b", "a/b", "a b", "a-b", "a_b", "A.B", "a..b", "user-x", "x" * 59, "x" * 60]
    scopes = [scope_for_user(i) for i in ids]
    assert len(set(scopes)) == len(ids)
    # a readable id can never spell a hashed one (``user_`` vs ``user-``)
    hashed = scope_for_user("a.b")
    assert hashed.startswith("user-") and scope_for_user(hashed[5:]).startswith("user_")


def test_bad_values_raise_the_package_error() -> None:
    with pytest.raises(InvalidScopeError):
        scope_from_config({"configurable": {"scope": "../etc"}})
    with pytest.raises(InvalidScopeError):
        scope_from_config({"configurable": {"scope": 5}})
    with pytest.raises(InvalidScopeError):
        scope_for_user(True)  # type: ignore[arg-type]
    with pytest.raises(InvalidScopeError):
        scope_from_config({}, "not a scope")
