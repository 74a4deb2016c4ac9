"""The Memory service on real parts: embedded Chroma, SQLite, the USE embedder."""

from __future__ import annotations

import shutil
import time
from datetime import datetime
from pathlib import Path

import pytest

from langmem_ext import (
    EmptyTextError,
    EntryNotFoundError,
    InvalidCategoryError,
    InvalidPathError,
    InvalidScopeError,
    LangmemError,
    Memory,
    PendingAlreadyResolvedError,
    PendingExpiredError,
    PendingNotFoundError,
    Settings,
    TextTooLongError,
)


def _texts(hits: list) -> list[str]:
    return [h.text for h in hits]


def test_save_confirm_search_chinese_and_english(memory: Memory) -> None:
    p1 = memory.save("主人喜欢吃拉面", category="fact")
    p2 = memory.save("I am allergic to peanuts", category="core")
    assert {p.id for p in memory.list_pending()} == {p1.id, p2.id}
    assert memory.search("拉面") == []  # nothing stored before confirmation
    e1 = memory.confirm(p1.id)
    e2 = memory.confirm(p2.id)
    # what is left: the allergy proposed for the profile (waits for the user)
    assert [p.text for p in memory.list_pending()] == ['profile: allergies += ["peanuts"]']
    text = (memory.root / "MEMORY.md").read_text()
    assert f"- 主人喜欢吃拉面 ^{e1.id}" in text and f"^{e2.id}" in text
    assert "## Core" in text and "## Facts" in text
    assert memory.search("拉面", k=1)[0].id == e1.id  # 2-character query, no spaces
    hit = memory.search("peanut allergy?", k=1)[0]
    assert hit.id == e2.id and hit.category == "core"
    assert hit.path == "MEMORY.md" and hit.line == e2.line
    assert hit.created_at.tzinfo is not None and hit.score > 0


def test_reject_writes_nothing(memory: Memory) -> None:
    p = memory.save("林伟今天心情不好", target="daily")
    rejected = memory.reject(p.id)
    assert rejected.status == "rejected"
    assert (
        not list((memory.root / "memory").glob("*.md"))
        if (memory.root / "memory").exists()
        else True
    )
    with pytest.raises(PendingAlreadyResolvedError):
        memory.confirm(p.id)


def test_daily_target_and_created_at_for_imports(memory: Memory) -> None:
    when = datetime(2024, 3, 5, 9, 30)
    [eid] = memory.add_many(["Met Anna at the climbing gym"], target="daily", created_at=[when])
    e = memory.get_entry(eid)
    assert e.path == "memory/2024-03-05.md"
    assert abs(e.created_at.timestamp() - when.timestamp()) < 1
    assert (memory.root / "memory" / "2024-03-05.md").read_text().startswith("# 2024-03-05")


def test_pending_ttl_expiry(tmp_path: Path) -> None:
    s = Settings(workspace=tmp_path / "ws")
    s.embeddings.provider = "fake"
    s.lifecycle.pending_ttl_hours = 0.5 / 3600  # half a second
    with Memory(settings=s) as mem:
        p = mem.save("short-lived fact")
        time.sleep(0.7)
        assert mem.list_pending() == []
        with pytest.raises(PendingExpiredError):
            mem.confirm(p.id)
        assert not (mem.root / "MEMORY.md").exists()


def test_other_scope_ids_look_exactly_like_unknown_ids(fake_memory: Memory) -> None:
    p = fake_memory.save("secret of alice", scope="alice")
    with pytest.raises(PendingNotFoundError) as other:
        fake_memory.confirm(p.id, scope="bob")
    with pytest.raises(PendingNotFoundError) as unknown:
        fake_memory.confirm("p-0000000000", scope="bob")
    assert str(other.value).replace(p.id, "X") == str(unknown.value).replace("p-0000000000", "X")
    e = fake_memory.confirm(p.id, scope="alice")
    with pytest.raises(EntryNotFoundError):
        fake_memory.update(e.id, "hijacked", scope="bob")
    with pytest.raises(EntryNotFoundError):
        fake_memory.delete(e.id, scope="bob")
    assert fake_memory.get_entry(e.id, scope="alice").text == "secret of alice"


def test_scope_isolation_search_list_pending_get(fake_memory: Memory) -> None:
    fake_memory.add("alice likes green tea", scope="alice")
    fake_memory.add("bob likes green tea", scope="bob")
    fake_memory.save("alice pending", scope="alice")
    assert _texts(fake_memory.search("green tea", scope="alice")) == ["alice likes green tea"]
    assert [e.text for e in fake_memory.list(scope="bob")] == ["bob likes green tea"]
    assert fake_memory.list_pending(scope="bob") == []
    assert fake_memory.get("LONG_TERM.md", scope="alice").lines[-1].startswith("- alice")
    with pytest.raises(InvalidPathError):
        fake_memory.get("memory/scopes/alice/LONG_TERM.md", scope="bob")
    with pytest.raises(InvalidPathError):
        fake_memory.get("memory/scopes/alice/LONG_TERM.md", scope="main")


@pytest.mark.parametrize(
    "bad",
    ["../state.db", "memory/../../etc/passwd", "/etc/passwd", "~/x.md", "state.db", "", "C:\\x.md"],
)
def test_get_refuses_unsafe_paths(fake_memory: Memory, bad: str) -> None:
    fake_memory.add("something")
    with pytest.raises(InvalidPathError):
        fake_memory.get(bad)


def test_get_refuses_symlinks_out_of_scope(fake_memory: Memory, tmp_path: Path) -> None:
    fake_memory.add("mine")
    outside = tmp_path / "outside.md"
    outside.write_text("- stolen\n")
    link = fake_memory.root / "memory" / "2020-01-01.md"
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(outside)
    with pytest.raises(InvalidPathError):
        fake_memory.get("memory/2020-01-01.md")


def test_get_pages_with_truncated_flag_and_path_line(fake_memory: Memory) -> None:
    fake_memory.add_many([f"fact number {i}" for i in range(100)])
    first = fake_memory.get("MEMORY.md")
    assert len(first.lines) == 40 and first.truncated and first.next_from == 41
    at = fake_memory.get("MEMORY.md:10", lines=5)
    assert at.from_line == 10 and len(at.lines) == 5
    big = fake_memory.get("MEMORY.md", lines=10_000)
    assert len(big.lines) == 100 + 3 and not big.truncated  # capped at 300, file is shorter
    hit = fake_memory.search("fact number 42", k=1)[0]
    assert fake_memory.get(hit.citation, lines=1).lines[0].startswith("- fact number 42 ")


def test_bad_input_is_typed_and_leaves_no_partial_state(fake_memory: Memory) -> None:
    for bad, err in [
        ("", EmptyTextError),
        ("   \n ", EmptyTextError),
        ("x" * 5000, TextTooLongError),
    ]:
        with pytest.raises(err):
            fake_memory.save(bad)
        with pytest.raises(err):
            fake_memory.add(bad)
    with pytest.raises(TextTooLongError):  # one bad text in a batch: nothing written
        fake_memory.add_many(["fine", "x" * 5000])
    with pytest.raises(InvalidCategoryError):
        fake_memory.save("ok text", category="gossip")
    with pytest.raises(InvalidScopeError):
        fake_memory.save("ok text", scope="../other")
    assert fake_memory.list() == [] and fake_memory.list_pending() == []
    assert not (fake_memory.root / "MEMORY.md").exists()
    with pytest.raises(LangmemError):
        fake_memory.confirm("nope")
    assert not issubclass(LangmemError, MemoryError)


def test_update_keeps_history_and_reembeds(memory: Memory) -> None:
    old = memory.add("I live in Berlin")
    eid = memory.update(old, "I moved to Munich in 2025").id
    assert memory.search("Munich", k=1)[0].id == eid
    hist = memory.history(eid)
    assert [h["op"] for h in hist] == ["add", "superseded", "add"]
    assert hist[1]["old_text"] == "I live in Berlin"
    memory.delete(eid)
    assert memory.search("Munich") == []
    assert "Munich" not in (memory.root / "MEMORY.md").read_text()
    with pytest.raises(EntryNotFoundError):
        memory.get_entry(eid)


def test_hand_edits_are_picked_up(memory: Memory) -> None:
    keep = memory.add("我喜欢喝乌龙茶")
    gone = memory.add("I drive a red bicycle")
    edit = memory.add("My dentist is Dr. Schmidt")
    path = memory.root / "MEMORY.md"
    text = path.read_text()
    text = text.replace(f"- I drive a red bicycle ^{gone}\n", "")
    text = text.replace(f"My dentist is Dr. Schmidt ^{edit}", f"My dentist is Dr. Weber ^{edit}")
    text += "- 周末常去爬山\n"  # typed by hand, no id
    time.sleep(0.01)
    path.write_text(text)
    hits = memory.search("爬山", k=1)  # search syncs first
    assert hits and hits[0].text == "周末常去爬山"
    assert hits[0].id.startswith("m-") and f"^{hits[0].id}" in path.read_text()
    assert memory.search("dentist", k=1)[0].text == "My dentist is Dr. Weber"
    assert gone not in {e.id for e in memory.list()}
    assert keep in {e.id for e in memory.list()}
    assert [h["op"] for h in memory.history(edit)] == ["add", "hand-edit"]


def test_deleting_index_loses_nothing(memory: Memory, settings: Settings) -> None:
    memory.add_many(
        [
            "主人喜欢吃拉面",
            "I am training for a half marathon",
            "妹妹是素食者",
            "Our billing service uses PostgreSQL",
        ]
    )
    queries = ["拉面", "marathon training", "素食", "which database for billing?"]
    memory.background.wait()  # the knowledge graph's triples (the graph stage reads them)
    before = {q: [(h.id, h.score) for h in memory.search(q, k=3)] for q in queries}
    memory.close()
    shutil.rmtree(settings.workspace / ".index")
    with Memory(settings=settings) as again:
        again.knowledge.ensure("main")  # the graph's vectors are made again, in the background
        again.background.wait()
        after = {q: [(h.id, h.score) for h in again.search(q, k=3)] for q in queries}
    assert {q: [i for i, _ in v] for q, v in after.items()} == {
        q: [i for i, _ in v] for q, v in before.items()
    }
    for q in queries:  # scores differ only by the clock (recency, decay)
        assert [s for _, s in after[q]] == pytest.approx([s for _, s in before[q]], abs=1e-4)


def test_reindex_gives_the_same_results(memory: Memory) -> None:
    memory.add_many(["主人喜欢吃拉面", "I am training for a half marathon"])
    memory.background.wait()  # the knowledge graph's triples (the graph stage reads them)
    before = [(h.id, h.score) for h in memory.search("拉面 marathon", k=2)]
    report = memory.reindex()
    assert report.embedded == 2
    after = [(h.id, h.score) for h in memory.search("拉面 marathon", k=2)]
    assert [i for i, _ in after] == [i for i, _ in before]
    assert [s for _, s in after] == pytest.approx([s for _, s in before], abs=1e-4)


def test_corrupted_index_is_rebuilt_not_fatal(memory: Memory, settings: Settings) -> None:
    eid = memory.add("主人喜欢吃拉面")
    memory.close()
    (settings.workspace / ".index" / "index.db").write_bytes(b"this is not a database" * 100)
    for wal in (settings.workspace / ".index").glob("index.db-*"):
        wal.unlink()
    with Memory(settings=settings) as again:
        assert again.search("拉面", k=1)[0].id == eid


@pytest.mark.asyncio
async def test_async_twins_share_the_implementation(memory: Memory) -> None:
    p = await memory.asave("Async facts are facts too")
    e = await memory.aconfirm(p.id)
    hits = await memory.asearch("async facts", k=1)
    assert hits[0].id == e.id
    got = await memory.aget(hits[0].citation, lines=1)
    assert "Async facts" in got.lines[0]


def test_noise_is_not_saved(fake_memory: Memory) -> None:
    from langmem_ext import NoiseTextError

    for noise in ["你好", "hello!", "HEARTBEAT", "I'm sorry, I can't help with that."]:
        with pytest.raises(NoiseTextError):
            fake_memory.save(noise)
    assert fake_memory.list_pending() == []


def test_boost_respects_cooldown_and_daily_cap(fake_memory: Memory) -> None:
    eid = fake_memory.add("Prefers window seats on long flights")
    t0 = 1_900_000_000.0
    assert fake_memory.boost(eid, now=t0) == pytest.approx(0.3)
    assert fake_memory.boost(eid, now=t0 + 600) == 0.0  # 2 h cooldown
    gains = [fake_memory.boost(eid, now=t0 + h * 3600) for h in (3, 6, 9, 12)]
    assert sum(gains) + 0.3 == pytest.approx(1.0)  # at most +1.0 a day
    assert fake_memory.get_entry(eid).importance == pytest.approx(2.0)
    assert fake_memory.boost(eid, now=t0 + 30 * 3600) == pytest.approx(0.3)  # a new day


def test_a_line_typed_below_the_last_bullet_continues_it(fake_memory: Memory) -> None:
    tea = fake_memory.add("I like oolong tea")
    path = fake_memory.root / "MEMORY.md"
    path.write_text(path.read_text().rstrip("\n") + "\n  especially Dong Ding, unsweetened\n")
    [entry] = fake_memory.list()
    assert entry.id == tea  # the id stays, and with it the history
    assert entry.text == "I like oolong tea\nespecially Dong Ding, unsweetened"
    assert [h["op"] for h in fake_memory.history(tea)] == ["add", "hand-edit"]
    fake_memory.update(tea, "I like oolong tea, especially Dong Ding")
    assert path.read_text().count("^m-") == 2  # the old version struck, the new one


def test_get_entry_by_anchor_and_the_scopes_files(fake_memory: Memory) -> None:
    entry = fake_memory.get_entry(fake_memory.add("User likes ramen", scope="u1"), scope="u1")
    assert fake_memory.get_entry(entry.anchor, scope="u1").id == entry.id
    with pytest.raises(EntryNotFoundError):
        fake_memory.get_entry(entry.anchor, scope="u2")  # another scope: unknown
    with pytest.raises(EntryNotFoundError):
        fake_memory.get_entry(f"MEMORY.md#^{entry.id}", scope="u1")  # not in that file
    assert fake_memory.files(scope="u1") == ["memory/scopes/u1/LONG_TERM.md"]
    fake_memory.upsert_facts({"name": "Ann"}, scope="u1")
    assert fake_memory.files(scope="u1")[-1] == "memory/scopes/u1/PROFILE.md"
    assert fake_memory.files(scope="u2") == []
