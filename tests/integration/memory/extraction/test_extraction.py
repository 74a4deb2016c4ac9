"""Background extraction: structured actions from a model, slots without one."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from langmem_ext import Memory, PendingAlreadyResolvedError, Settings
from langmem_ext.chat_models.scripted import ScriptedChatModel, tool_call

T0 = datetime(2026, 2, 1, 9, tzinfo=UTC)


def _turn(text: str, reply: str = "OK.") -> list[BaseMessage]:
    return [HumanMessage(text), AIMessage(reply)]


def _plan_model(*actions: dict[str, object]) -> ScriptedChatModel:
    return ScriptedChatModel(
        policy=lambda _m: AIMessage(
            "", tool_calls=[tool_call("ExtractionPlan", actions=list(actions))]
        )
    )


@pytest.mark.parametrize(
    ("first", "second", "question", "old", "new"),
    [
        ("我住在上海", "我上个月搬到深圳了", "我住在哪", "上海", "深圳"),
        (
            "I live in Berlin.",
            "I moved to Munich last month.",
            "Where do I live?",
            "Berlin",
            "Munich",
        ),
    ],
)
def test_fallback_supersedes_by_slot(
    memory: Memory, first: str, second: str, question: str, old: str, new: str
) -> None:
    memory.settings.lifecycle.extract_mode = "direct"  # written at once
    memory.add("My brother lives in Rome")
    r1 = memory.extract(_turn(first), at=T0)
    assert r1.used_fallback and len(r1.added) == 1
    r2 = memory.extract(_turn(second), at=T0 + timedelta(days=30))
    assert r2.superseded == r1.added and len(r2.updated) == 1
    hits = memory.search(question, k=3)
    assert new in hits[0].text
    assert not any(old in h.text for h in hits)
    past = memory.search(question, k=3, as_of=T0 + timedelta(days=1))
    assert old in past[0].text
    entry = memory.get_entry(r2.updated[0])
    assert (entry.source, entry.verified, entry.supersedes) == ("extractor", False, r1.added[0])


def test_fallback_supersedes_a_memory_saved_without_a_slot(fake_memory: Memory) -> None:
    fake_memory.settings.lifecycle.extract_mode = "direct"
    eid = fake_memory.add("I live in Berlin")
    report = fake_memory.extract(_turn("I moved to Munich"), recalled=[(eid, "I live in Berlin")])
    assert report.superseded == [eid]
    assert [e.text for e in fake_memory.list()] == ["I moved to Munich"]


def test_saying_it_again_changes_nothing(fake_memory: Memory) -> None:
    fake_memory.extract(_turn("我叫李雷"))
    again = fake_memory.extract(_turn("我叫李雷"))
    assert again.added == again.updated == [] and len(fake_memory.list()) == 1


def test_model_actions_are_applied_and_foreign_ids_ignored(fake_memory: Memory) -> None:
    fake_memory.settings.lifecycle.extract_mode = "direct"
    mine = fake_memory.add("Alice likes tea", scope="alice")
    theirs = fake_memory.add("Bob likes coffee", scope="bob")
    model = _plan_model(
        {"op": "ADD", "text": "Alice has a cat named Mochi", "category": "fact"},
        {"op": "UPDATE", "id": mine, "text": "Alice likes green tea"},
        {"op": "DELETE", "id": theirs},
        {"op": "BOOST", "id": "m-madeup1234"},
    )
    report = fake_memory.extract(
        _turn("My cat is Mochi, and I like green tea now"), scope="alice", model=model,
        recalled=[(mine, "Alice likes tea")],
    )  # fmt: skip
    assert not report.used_fallback
    assert report.superseded == [mine] and len(report.added) == 1
    assert len(report.ignored) == 2 and report.deleted == []
    assert [e.text for e in fake_memory.list(scope="bob")] == ["Bob likes coffee"]
    texts = {e.text for e in fake_memory.list(scope="alice")}
    assert texts == {"Alice has a cat named Mochi", "Alice likes green tea"}


def test_a_turn_extracted_again_adds_nothing_twice(fake_memory: Memory) -> None:
    """A turn extracted a second time (its process died after the writes and before the
    turn's job was deleted) adds none of the model's facts again."""
    fake_memory.settings.lifecycle.extract_mode = "direct"
    model = _plan_model(
        {"op": "ADD", "text": "Alice has a cat named Mochi", "category": "fact"},
        {"op": "ADD", "text": "爱丽丝对猫毛过敏", "category": "core"},
    )
    turn = _turn("My cat is Mochi; 我对猫毛过敏")
    first = fake_memory.extract(turn, scope="alice", model=model)
    again = fake_memory.extract(turn, scope="alice", model=model)
    assert len(first.added) == 2 and again.added == []
    assert len(again.ignored) == 2 and all("stored before" in why for why in again.ignored)
    assert sorted(e.text for e in fake_memory.list(scope="alice")) == sorted(
        ["Alice has a cat named Mochi", "爱丽丝对猫毛过敏"]
    )
    other = fake_memory.extract(turn, scope="bob", model=model)  # another scope's own copy
    assert len(other.added) == 2


def test_invalid_model_answer_falls_back(fake_memory: Memory) -> None:
    fake_memory.settings.lifecycle.extract_mode = "direct"
    model = ScriptedChatModel(policy=lambda _m: AIMessage("I think you live in Paris"))
    report = fake_memory.extract(_turn("I live in Paris"), model=model)
    assert report.used_fallback and report.error and len(report.added) == 1


def test_core_memories_are_never_deleted_by_the_extractor(fake_memory: Memory) -> None:
    core = fake_memory.add("林伟对花生过敏", category="core")
    model = _plan_model({"op": "DELETE", "id": core})
    report = fake_memory.extract(_turn("算了"), model=model, recalled=[(core, "林伟对花生过敏")])
    assert report.deleted == [] and report.ignored
    assert [e.id for e in fake_memory.list()] == [core]


def test_pending_mode_queues_and_off_mode_writes_nothing(tmp_path) -> None:  # type: ignore[no-untyped-def]
    s = Settings(workspace=tmp_path / "ws")
    s.embeddings.provider = "fake"
    s.lifecycle.extract_mode = "pending"
    mem = Memory(settings=s)
    report = mem.extract(_turn("I'm allergic to peanuts"))
    assert len(report.pending) == 1  # long-term waits; the day's notes have it, unconfirmed
    assert [e.text for e in mem.list()] == ["[unconfirmed] I'm allergic to peanuts"]
    saves = [p.text for p in mem.list_pending() if p.target != "profile"]
    assert saves == ["I'm allergic to peanuts"]
    mem.settings.lifecycle.extract_mode = "off"
    assert mem.extract(_turn("I live in Oslo")).added == []
    mem.close()


def _pending_memory(tmp_path) -> Memory:  # type: ignore[no-untyped-def]
    s = Settings(workspace=tmp_path / "ws")
    s.embeddings.provider = "fake"
    s.lifecycle.extract_mode = "pending"
    return Memory(settings=s)


def test_pending_update_is_confirmed_as_a_new_version(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """In pending mode an UPDATE waits for the user; once confirmed it supersedes the
    old memory (closed, linked, struck through) instead of sitting beside it."""
    mem = _pending_memory(tmp_path)
    old = mem.add("I live in Berlin", category="core", importance=0.9, created_at=T0)
    report = mem.extract(_turn("I moved to Munich"), at=T0 + timedelta(days=30))
    [pid] = report.pending
    item = mem.list_pending()[0]
    assert (item.id, item.supersedes) == (pid, old)

    def long_term() -> list[str]:
        return [e.text for e in mem.list() if e.path == "MEMORY.md"]

    assert long_term() == ["I live in Berlin"]  # nothing changes before
    new = mem.confirm(pid)
    assert long_term() == ["I moved to Munich"]
    assert (new.supersedes, new.category, new.verified) == (old, "core", True)
    assert new.importance == pytest.approx(0.9)
    assert mem.get_entry(old).valid_to == T0 + timedelta(days=30)
    assert [h["op"] for h in mem.history(new.id)] == ["add", "superseded", "add"]
    assert "~~I live in Berlin~~" in mem.long_term_text()
    assert mem.search("Where do I live?", k=3)[0].text == "I moved to Munich"
    with pytest.raises(PendingAlreadyResolvedError):
        mem.confirm(pid)
    mem.close()


def test_pending_update_follows_the_chain_or_falls_back_to_a_new_memory(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from langmem_ext import EntryNotFoundError

    mem = _pending_memory(tmp_path)
    a = mem.add("I work at Acme")
    pending = mem.save("I work at Initech", supersedes=a)
    b = mem.update(a, "I work at Globex").id  # the chain moved on meanwhile
    c = mem.confirm(pending.id)
    assert c.supersedes == b and [e.text for e in mem.list()] == ["I work at Initech"]
    gone = mem.add("I play chess")
    later = mem.save("I play go", supersedes=gone)
    mem.delete(gone)
    assert mem.confirm(later.id).supersedes is None  # nothing left to replace: a new memory
    other = mem.add("Bob likes tea", scope="bob")
    with pytest.raises(EntryNotFoundError):
        mem.save("Bob likes coffee", supersedes=other)  # another scope's id
    with pytest.raises(EntryNotFoundError):
        mem.save("I like tea", supersedes="m-madeup1234")
    assert len(mem.list_pending()) == 0
    mem.close()


@pytest.mark.parametrize(
    "messages",
    [
        [("user", "我搬到广州了"), ("assistant", "好的")],
        [("human", "我搬到广州了"), ("ai", "好的")],
        [{"role": "user", "content": "我搬到广州了"}, {"role": "assistant", "content": "好的"}],
        [{"type": "human", "content": "我搬到广州了"}],
        ["我搬到广州了"],
        "我搬到广州了",
        [HumanMessage("我搬到广州了"), ("assistant", "好的")],
    ],
    ids=["tuples", "tuples-lc-roles", "role-dicts", "type-dicts", "strings", "one-string", "mixed"],
)
def test_extract_takes_every_form_langchain_takes(fake_memory: Memory, messages: object) -> None:
    fake_memory.settings.lifecycle.extract_mode = "direct"
    report = fake_memory.extract(messages, at=T0)  # type: ignore[arg-type]
    assert report.used_fallback and len(report.added) == 1
    assert [e.text for e in fake_memory.list()] == ["我搬到广州了"]


@pytest.mark.parametrize(
    "messages",
    [
        [42],
        [("narrator", "我搬到广州了")],
        [{"role": "user"}],
        None,
        [object()],
    ],
    ids=["number", "unknown-role", "dict-without-content", "none", "object"],
)
def test_extract_refuses_what_is_not_a_conversation(fake_memory: Memory, messages: object) -> None:
    from langmem_ext import InvalidMessagesError, LangmemError

    with pytest.raises(InvalidMessagesError) as err:
        fake_memory.extract(messages)  # type: ignore[arg-type]
    assert isinstance(err.value, LangmemError)
    assert "(role, text)" in str(err.value) and "BaseMessage" in str(err.value)
    assert fake_memory.list() == [] and fake_memory.list_pending() == []
