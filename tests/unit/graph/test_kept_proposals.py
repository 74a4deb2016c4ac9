"""The proposed saves a reply answers come from the state, without a ledger read."""

from __future__ import annotations

from datetime import UTC, datetime

from langmem_ext.graph.proposals import kept_proposals, may_propose_profile
from langmem_ext.memory.types import PendingItem

T0 = datetime(2025, 3, 1, 12, tzinfo=UTC).timestamp()


def _kept(pid: str, text: str, expires: float) -> dict[str, object]:
    item = PendingItem(
        id=pid,
        text=text,
        scope="user_alice",
        target="long_term",
        category="fact",
        status="pending",
        created_at=datetime.fromtimestamp(T0 - 60, UTC),
        expires_at=datetime.fromtimestamp(expires, UTC),
        entry_id="m-" + pid[2:],
        thread_id="t1",
    )
    return item.model_dump(mode="json")


def test_kept_items_come_back_in_the_proposed_order_and_expired_ones_drop_out() -> None:
    kept = [
        _kept("p-aaaaaaaaaa", "likes ramen", T0 + 3600),
        _kept("p-bbbbbbbbbb", "gone already", T0 - 1),
        _kept("p-cccccccccc", "lives in Oslo", T0 + 3600),
    ]
    items = kept_proposals(kept, ["p-cccccccccc", "p-bbbbbbbbbb", "p-aaaaaaaaaa"], now=T0)
    assert items is not None
    assert [(p.id, p.text) for p in items] == [
        ("p-cccccccccc", "lives in Oslo"),
        ("p-aaaaaaaaaa", "likes ramen"),
    ]
    assert all(isinstance(p, PendingItem) and p.thread_id == "t1" for p in items)


def test_a_state_without_the_kept_item_asks_for_a_read() -> None:
    kept = [_kept("p-aaaaaaaaaa", "likes ramen", T0 + 3600)]
    assert kept_proposals(kept, ["p-aaaaaaaaaa", "p-dddddddddd"], now=T0) is None
    assert kept_proposals([], ["p-aaaaaaaaaa"], now=T0) is None
    assert kept_proposals([], [], now=T0) == []


def test_only_a_stated_safety_fact_may_propose_a_profile_change() -> None:
    assert may_propose_profile(["我对花生过敏"])
    assert may_propose_profile(["likes ramen", "I'm allergic to penicillin"])
    assert not may_propose_profile(["主人喜欢吃拉面", "I live in Oslo"])
    assert not may_propose_profile(["I'm not allergic to anything"])
