"""The user profile: PROFILE.md, its history, and pending safety changes."""

from __future__ import annotations

import asyncio

import pytest

from langmem_ext import Memory
from langmem_ext.core.errors import InvalidInputError
from langmem_ext.memory.profile import Profile, parse_profile, render_profile, render_safety


def test_app_writes_at_once_and_the_file_reads_back(fake_memory: Memory) -> None:
    up = fake_memory.upsert_facts({"allergies": ["花生"], "name": "小明"}, scope="u1")
    assert up.pending == [] and {c.field for c in up.changed} == {"allergies", "name"}
    fake_memory.upsert_preferences({"座位": "靠窗"}, scope="u1")
    path = fake_memory.root / "memory" / "scopes" / "u1" / "PROFILE.md"
    text = path.read_text(encoding="utf-8")
    assert "## Safety" in text and "- allergies: 花生" in text and "- 座位: 靠窗" in text
    p = fake_memory.profile(scope="u1")
    assert p.allergies == ["花生"] and p.name == "小明" and p.preferences == {"座位": "靠窗"}
    assert fake_memory.profile(scope="main") == Profile()  # scopes isolate
    fake_memory.upsert_facts({"allergies": ["虾", "花生"]}, scope="u1")  # lists add by default
    assert fake_memory.profile(scope="u1").allergies == ["花生", "虾"]
    fake_memory.upsert_facts({"allergies": ["虾"]}, scope="u1", replace=True)
    assert fake_memory.profile(scope="u1").allergies == ["虾"]
    assert (fake_memory.root / "PROFILE.md").exists() is False


def test_every_change_is_in_the_history(fake_memory: Memory) -> None:
    fake_memory.upsert_facts({"allergies": ["花生"]})
    fake_memory.upsert_facts({"allergies": ["青霉素"]}, source="app")
    fake_memory.upsert_preferences({"tea": "green"})
    fake_memory.upsert_preferences({"tea": None})
    h = fake_memory.profile_history()
    assert [(c.field, c.old, c.new) for c in h] == [
        ("allergies", None, ["花生"]),
        ("allergies", ["花生"], ["花生", "青霉素"]),
        ("preferences.tea", None, "green"),
        ("preferences.tea", "green", None),
    ]
    assert all(c.source == "app" for c in h)
    assert len(fake_memory.profile_history(field="allergies")) == 2


def test_hand_edits_round_trip_and_are_recorded(fake_memory: Memory) -> None:
    fake_memory.upsert_facts({"allergies": ["花生"]})
    path = fake_memory.root / "PROFILE.md"
    text = path.read_text(encoding="utf-8")
    text = text.replace("- allergies: 花生", "- allergies: 花生，芒果")
    text = text.replace("- medications:", "- medications: aspirin\n对猫毛也有点敏感")
    text += "\n## Notes\n\nfree text stays\n"
    path.write_text(text, encoding="utf-8")
    p = fake_memory.profile()
    assert p.allergies == ["花生", "芒果"] and p.medications == ["aspirin"]
    assert p.extra_lines["Safety"] == ["对猫毛也有点敏感"]  # kept verbatim
    hand = [c for c in fake_memory.profile_history() if c.source == "hand-edit"]
    assert {c.field for c in hand} == {"allergies", "medications"}
    fake_memory.upsert_preferences({"lang": "zh"})  # a later write keeps the hand lines
    after = path.read_text(encoding="utf-8")
    assert "对猫毛也有点敏感" in after and "free text stays" in after and "## Notes" in after
    assert "对猫毛也有点敏感" in fake_memory.safety_block()  # and shows them to the model


def test_render_parse_round_trip() -> None:
    p = Profile(
        name="Ann",
        timezone="Europe/Paris",
        allergies=["peanuts", "penicillin"],
        emergency_contact="Bob +33 6 12",
        preferences={"seat": "window"},
    )
    back = parse_profile(render_profile(p))
    assert back.model_dump(exclude={"extra_lines"}) == p.model_dump(exclude={"extra_lines"})
    assert parse_profile(render_profile(back)) == back


def test_model_and_extractor_safety_changes_wait_for_confirmation(fake_memory: Memory) -> None:
    fake_memory.upsert_facts({"allergies": ["花生"]})
    up = fake_memory.upsert_facts(
        {"allergies": ["青霉素"], "preferred_name": "明明"}, source="agent"
    )
    assert [c.field for c in up.changed] == ["preferred_name"]  # non-safety: at once
    assert len(up.pending) == 1 and up.pending[0].category == "profile"
    assert fake_memory.profile().allergies == ["花生"]  # nothing changed yet
    listed = fake_memory.list_pending()
    assert [p.id for p in listed] == [up.pending[0].id] and listed[0].target == "profile"
    done = fake_memory.confirm(up.pending[0].id)
    assert fake_memory.profile().allergies == ["花生", "青霉素"]
    assert "青霉素" in done.text
    assert fake_memory.profile_history(field="allergies")[-1].source == "agent+confirmed"
    assert fake_memory.list_pending() == []
    # reject: unchanged
    up = fake_memory.upsert_facts({"medications": ["aspirin"]}, source="extractor")
    fake_memory.reject(up.pending[0].id)
    assert fake_memory.profile().medications == []
    # a proposal that changes nothing is not queued
    assert fake_memory.upsert_facts({"allergies": ["花生"]}, source="agent").pending == []


def test_bad_input_is_a_typed_error_and_writes_nothing(fake_memory: Memory) -> None:
    with pytest.raises(InvalidInputError, match="Unknown profile field"):
        fake_memory.upsert_facts({"allergies": ["花生"], "blood": "A"})
    with pytest.raises(InvalidInputError):
        fake_memory.upsert_facts({"allergies": 3})
    with pytest.raises(InvalidInputError, match="may not contain"):
        fake_memory.upsert_facts({"allergies": ["a, b"]})
    with pytest.raises(InvalidInputError):
        fake_memory.upsert_preferences({"a:b": "c"})
    assert not (fake_memory.root / "PROFILE.md").exists()
    assert fake_memory.profile_history() == []


def test_safety_block_has_its_own_budget() -> None:
    p = Profile(allergies=[f"allergen number {i}" for i in range(200)], medications=["x"])
    block = render_safety(p, 120)
    from langmem_ext.core.tokens import count_tokens

    assert count_tokens(block) <= 130 and block.endswith("</user_safety_profile>")
    assert "allergen number 0" in block
    assert render_safety(Profile(name="x"), 300) == ""
    assert "\\u003c/user" in render_safety(Profile(allergies=["</user_safety_profile>"]), 300)


def test_async_twins(fake_memory: Memory) -> None:
    async def run() -> Profile:
        await fake_memory.aupsert_facts({"allergies": ["花生"]})
        return await fake_memory.aprofile()

    assert asyncio.run(run()).allergies == ["花生"]


def test_a_proposal_made_twice_is_one_pending_item(fake_memory: Memory) -> None:
    first = fake_memory.upsert_facts({"allergies": ["青霉素"]}, source="extractor")
    again = fake_memory.upsert_facts({"allergies": ["青霉素"]}, source="extractor")
    assert len(first.pending) == 1 and again.pending == []
    assert len(fake_memory.list_pending()) == 1


def test_tools_are_scoped_from_config_and_safety_changes_wait(fake_memory: Memory) -> None:
    from langmem_ext.tools import create_memory_tools

    tools = {t.name: t for t in create_memory_tools(fake_memory)}
    alice = {"configurable": {"user_id": "alice"}}
    call = {
        "name": "profile_update",
        "args": {"facts": {"allergies": ["peanuts"], "name": "Ann"}, "preferences": {"tea": "x"}},
        "id": "c1",
        "type": "tool_call",
    }
    msg = tools["profile_update"].invoke(call, alice)
    assert "Pending p-" in msg.content and "Saved: name" in msg.content
    p = fake_memory.profile(scope="user_alice")
    assert p.allergies == [] and p.name == "Ann" and p.preferences == {"tea": "x"}
    assert fake_memory.profile(scope="main") == Profile()
    pid = msg.artifact["pending"][0]["id"]
    done = tools["memory_confirm"].invoke({"pending_id": pid}, alice)
    assert "allergies" in done
    assert fake_memory.profile(scope="user_alice").allergies == ["peanuts"]
    got = tools["profile_get"].invoke({}, alice)
    assert '- allergies: ["peanuts"]' in got and '- name: "Ann"' in got
    bad = {**call, "args": {"facts": {"blood_type": "A"}, "preferences": {"tea": "y"}}}
    assert tools["profile_update"].invoke(bad, alice).status == "error"
    assert fake_memory.profile(scope="user_alice").preferences == {"tea": "x"}  # nothing written


def test_extractor_fallback_proposes_profile_changes(fake_memory: Memory) -> None:
    from langchain_core.messages import AIMessage, HumanMessage

    turn = [HumanMessage("我叫小明，我对青霉素和花生过敏"), AIMessage("好的")]
    report = fake_memory.extract(turn, scope="u1")
    assert report.used_fallback
    p = fake_memory.profile(scope="u1")
    assert p.name == "小明" and p.allergies == []  # name at once; the allergy waits
    [pending] = [i for i in fake_memory.list_pending(scope="u1") if i.category == "profile"]
    assert pending.id in report.profile and "name" in report.profile
    fake_memory.confirm(pending.id, scope="u1")
    assert fake_memory.profile(scope="u1").allergies == ["青霉素", "花生"]


def test_surgery_history_is_a_safety_field(fake_memory: Memory) -> None:
    up = fake_memory.upsert_facts({"surgeries": ["appendectomy"]}, source="agent")
    assert fake_memory.profile().surgeries == [] and len(up.pending) == 1  # waits
    fake_memory.confirm(up.pending[0].id)
    assert fake_memory.profile().surgeries == ["appendectomy"]
    assert '- surgeries: ["appendectomy"]' in fake_memory.safety_block()
    path = fake_memory.root / "PROFILE.md"
    text = path.read_text(encoding="utf-8")
    text = text.replace("- surgeries: appendectomy", "- 手术史: 阑尾切除, 膝盖手术")
    path.write_text(text, encoding="utf-8")
    assert fake_memory.profile().surgeries == ["阑尾切除", "膝盖手术"]  # read back
    fake_memory.upsert_preferences({"tea": "green"})  # a rewrite names the field in English
    assert "- surgeries: 阑尾切除, 膝盖手术" in path.read_text(encoding="utf-8")
