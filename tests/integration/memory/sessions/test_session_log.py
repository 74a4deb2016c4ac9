"""The session hot log: transcripts, ledger rows, TTL, recall search, scopes."""

from __future__ import annotations

import time
from datetime import date, datetime, timedelta
from pathlib import Path

import pytest

from langmem_ext import Memory
from langmem_ext.core.errors import EmptyTextError, InvalidInputError, InvalidScopeError
from langmem_ext.memory.sessions.log import NewEvent, SessionLog, event_tokens, query_focus

DAY = 86400.0

pytestmark = pytest.mark.usefixtures("fixed_clock")  # yesterday and earlier today: a fixed day


def _yesterday_noon() -> float:
    d = date.today() - timedelta(days=1)
    return datetime(d.year, d.month, d.day, 12).timestamp()


def _today(hour: int = 0, minute: int = 5) -> float:
    """A time earlier today (clamped so it never lies in the future)."""
    d = date.today()
    return min(time.time() - 1, datetime(d.year, d.month, d.day, hour, minute).timestamp())


# --- writes ---------------------------------------------------------------------------


def test_append_writes_transcript_line_and_ledger_row(fake_memory: Memory) -> None:
    log = SessionLog(fake_memory)
    at = _yesterday_noon()
    first = log.append("main", "t1", "user", "帮我查一下去杭州的高铁票", at=at)
    second = log.append("main", "t1", "assistant", "好的，明早8点有一班 G7311。", at=at + 5)
    day = datetime.fromtimestamp(at).date().isoformat()
    assert first.path == f"memory/transcripts/{day}.md"
    text = (fake_memory.root / first.path).read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[0].startswith(f"# Transcript {day}")
    assert "user: 帮我查一下去杭州的高铁票" in lines[first.line - 1]
    assert "assistant: 好的，明早8点有一班 G7311。" in lines[second.line - 1]
    assert second.line == first.line + 1
    # memory_get can quote the event by its citation
    got = fake_memory.get(first.citation, lines=1)
    assert "高铁票" in got.lines[0]
    rows = fake_memory.workspace.ledger.query(
        "SELECT role, text, path, line FROM session_events ORDER BY id"
    )
    assert rows == [
        ("user", "帮我查一下去杭州的高铁票", first.path, first.line),
        ("assistant", "好的，明早8点有一班 G7311。", second.path, second.line),
    ]


def test_other_scopes_write_under_their_folder(fake_memory: Memory) -> None:
    log = SessionLog(fake_memory)
    ev = log.append("group_team", "t1", "user", "multi\nline   message")
    assert ev.path.startswith("memory/scopes/group_team/transcripts/")
    line = (fake_memory.root / ev.path).read_text(encoding="utf-8").splitlines()[ev.line - 1]
    assert line.endswith("user: multi line message")  # one event, one line
    assert ev.text == "multi\nline   message"  # the ledger keeps the text as said


def test_line_numbers_survive_hand_edits_and_restarts(fake_memory: Memory, tmp_path: Path) -> None:
    log = SessionLog(fake_memory)
    ev = log.append("main", "t1", "user", "first message")
    path = fake_memory.root / ev.path
    with path.open("a", encoding="utf-8") as fh:
        fh.write("a note added by hand without newline")
    again = SessionLog(fake_memory).append("main", "t1", "user", "second message")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[again.line - 1].endswith("user: second message")
    assert lines[again.line - 2] == "a note added by hand without newline"


def test_append_many_and_validation(fake_memory: Memory) -> None:
    log = SessionLog(fake_memory)
    out = log.append_many(
        "main", "t1", [NewEvent("user", "question one"), NewEvent("assistant", "answer one")]
    )
    assert [e.role for e in out] == ["user", "assistant"]
    assert out[1].line == out[0].line + 1
    with pytest.raises(InvalidInputError, match="role"):
        log.append("main", "t1", "tool", "x")
    with pytest.raises(EmptyTextError):
        log.append("main", "t1", "user", "   ")
    with pytest.raises(InvalidScopeError):
        log.append("../evil", "t1", "user", "x")
    with pytest.raises(InvalidInputError, match="thread id"):
        log.append("main", "", "user", "x")
    # a bad event in a batch writes nothing
    with pytest.raises(EmptyTextError):
        log.append_many("main", "t1", [NewEvent("user", "fine"), NewEvent("user", "")])
    assert len(log.recent("main")) == 2


# --- reads ----------------------------------------------------------------------------


def test_recent_filters(fake_memory: Memory) -> None:
    log = SessionLog(fake_memory)
    now = time.time()
    log.append("main", "t1", "user", "old question", at=now - 3 * DAY)
    log.append("main", "t1", "assistant", "old answer", at=now - 3 * DAY + 1)
    log.append("main", "t2", "user", "new question", at=now - 60)
    log.append("main", "t2", "summary", "Goal:\n- plan a trip", at=now - 30)
    assert [e.text for e in log.recent("main")] == [
        "old question",
        "old answer",
        "new question",
        "Goal:\n- plan a trip",
    ]
    assert [e.text for e in log.recent("main", thread_id="t1")] == ["old question", "old answer"]
    assert [e.text for e in log.recent("main", role="user")] == ["old question", "new question"]
    assert [e.text for e in log.recent("main", since=now - DAY)] == [
        "new question",
        "Goal:\n- plan a trip",
    ]
    assert [e.text for e in log.recent("main", until=now - DAY)] == ["old question", "old answer"]
    assert [e.text for e in log.recent("main", limit=1)] == ["Goal:\n- plan a trip"]
    with pytest.raises(InvalidInputError):
        log.recent("main", role="robot")


def test_ttl_purge_deletes_old_rows_but_keeps_transcripts(fake_memory: Memory) -> None:
    log = SessionLog(fake_memory)
    now = time.time()
    log.append("main", "t1", "user", "said yesterday", at=now - DAY)  # runs the periodic purge
    old = log.append("main", "t1", "user", "said 31 days ago", at=now - 31 * DAY)
    # expired rows are invisible even before the purge runs
    assert [e.text for e in log.recent("main")] == ["said yesterday"]
    assert log.purge() == 1
    assert log.purge() == 0
    left = fake_memory.workspace.ledger.query("SELECT text FROM session_events")
    assert left == [("said yesterday",)]
    assert "said 31 days ago" in (fake_memory.root / old.path).read_text(encoding="utf-8")


def test_ttl_follows_settings(fake_memory: Memory) -> None:
    fake_memory.settings.short_term.session_event_ttl_days = 2
    log = SessionLog(fake_memory)
    log.append("main", "t1", "user", "one day old", at=time.time() - DAY)
    log.append("main", "t1", "user", "three days old", at=time.time() - 3 * DAY)
    assert log.purge() == 1


def test_append_purges_periodically(fake_memory: Memory) -> None:
    clock = [time.time()]
    log = SessionLog(fake_memory, clock=lambda: clock[0])
    log.append("main", "t1", "user", "ancient", at=clock[0] - 40 * DAY)  # first append purges
    log.append("main", "t1", "user", "ancient too", at=clock[0] - 40 * DAY)
    assert len(fake_memory.workspace.ledger.query("SELECT 1 FROM session_events")) == 1
    clock[0] += 601  # past the purge interval: the next append purges again
    log.append("main", "t1", "user", "fresh")
    assert fake_memory.workspace.ledger.query("SELECT text FROM session_events") == [("fresh",)]


# --- search source --------------------------------------------------------------------


def _seed_two_days(log: SessionLog) -> None:
    y = _yesterday_noon()
    log.append("main", "t1", "user", "帮我查一下明天去杭州的高铁票", at=y)
    log.append("main", "t1", "assistant", "好的，明早8点有一班G7311，二等座还有票。", at=y + 5)
    log.append("main", "t1", "user", "Also, how long does the train take to Hangzhou?", at=y + 60)
    log.append("main", "t1", "assistant", "About one hour by high-speed rail.", at=y + 65)
    log.append("main", "t2", "user", "今天我想做番茄炒蛋", at=_today())
    log.append("main", "t2", "assistant", "先炒蛋再炒番茄。", at=_today(0, 6))


def test_what_did_i_ask_yesterday_finds_it_through_memory_search(memory: Memory) -> None:
    """Real embedder, real hybrid search: the source is merged into memory.search."""
    log = SessionLog(memory)
    _seed_two_days(log)
    memory.add("主人喜欢吃拉面", scope="main")
    memory.add("The user is learning to cook Sichuan food", scope="main")
    memory.engine.add_source(log.search)

    hits = memory.search("what did I ask yesterday?", scope="main")
    session = [h for h in hits if h.source == "session"]
    assert hits[0].source == "session"
    assert {h.text for h in session} == {
        "User: 帮我查一下明天去杭州的高铁票",
        "User: Also, how long does the train take to Hangzhou?",
    }
    top = hits[0]
    assert top.category == "episode"
    assert top.path.startswith("memory/transcripts/")
    assert memory.get(top.citation, lines=1).lines[0].endswith(top.text.split(": ", 1)[1])

    zh = memory.search("我昨天问了什么？", scope="main")
    assert zh[0].source == "session" and zh[0].text.startswith("User: ")
    assert "番茄" not in " ".join(h.text for h in zh)  # today is outside the window

    said = memory.search("你昨天推荐的是哪一班？", scope="main")
    assert said[0].text == "Assistant: 好的，明早8点有一班G7311，二等座还有票。"


def test_recall_without_window_uses_topic_over_the_whole_ttl(fake_memory: Memory) -> None:
    log = SessionLog(fake_memory)
    fake_memory.engine.add_source(log.search)
    now = time.time()
    log.append("main", "t0", "user", "我的护照号码是E48213957。", at=now - 20 * DAY)
    for i in range(300):  # many newer events: the old one must still be found
        log.append("main", "t1", "user", f"filler message number {i} about gardening")
    hits = fake_memory.search("之前我说过我的护照号码是多少？", scope="main")
    assert hits[0].source == "session"
    assert "E48213957" in hits[0].text
    # "last time" with no topic: the latest events
    last = log.search("上次我们聊了什么？", "main", 5, None)
    assert last and all("gardening" in h.text for h in last)


def test_topic_overlap_ranks_first_within_the_window(fake_memory: Memory) -> None:
    log = SessionLog(fake_memory)
    _seed_two_days(log)
    hits = log.search("What did we discuss about the train yesterday?", "main", 5, None)
    assert hits[0].text in {
        "User: Also, how long does the train take to Hangzhou?",
    }
    assert hits[0].debug["overlap"] == 1.0 and hits[0].debug["window"] == 1.0


def _fts_rows(memory: Memory) -> list[tuple[int, str]]:
    return [
        (int(r[0]), str(r[1]))
        for r in memory.workspace.ledger.query(
            "SELECT rowid, tokens FROM session_events_fts ORDER BY rowid"
        )
    ]


def test_topic_lookup_goes_through_the_token_index(fake_memory: Memory) -> None:
    log = SessionLog(fake_memory)
    now = time.time()
    ev = log.append("main", "t0", "user", "We compared two cities for the move.", at=now - 9 * DAY)
    log.append("main", "t0", "user", "我对花生过敏", at=now - 8 * DAY)
    log.append("other_user", "t9", "user", "My favourite cities are Rome and Kyoto", at=now)
    assert (ev.id, event_tokens(ev.text)) in _fts_rows(fake_memory)
    # A stemmed token matches ("city" ~ "cities", which a substring scan missed); CJK
    # bigrams match; other scopes' events never come back.
    [hit] = log.search("Previously, which city did I mention?", "main", 5, None)
    assert hit.id == f"ev-{ev.id}" and hit.debug["overlap"] == 1.0
    assert "花生" in log.search("我之前说过对什么过敏？", "main", 5, None)[0].text
    assert log.search("之前我说过什么关于护照的事？", "main", 5, None) == []


def test_purge_drops_the_token_rows_and_older_logs_are_indexed_on_start(
    fake_memory: Memory,
) -> None:
    log = SessionLog(fake_memory)
    now = time.time()
    kept = log.append("main", "t1", "user", "said yesterday about the garden", at=now - DAY)
    log.append("main", "t1", "user", "said 31 days ago about the garden", at=now - 31 * DAY)
    assert log.purge() == 1
    assert [r for r, _ in _fts_rows(fake_memory)] == [kept.id]
    # A log written before the token index existed is indexed by the next SessionLog.
    with fake_memory.workspace.ledger.transaction() as conn:
        conn.execute("DELETE FROM session_events_fts")
    assert log.search("what did I say about the garden earlier?", "main", 5, None) == []
    again = SessionLog(fake_memory)
    assert _fts_rows(fake_memory) == [(kept.id, event_tokens(kept.text))]
    assert again.search("what did I say about the garden earlier?", "main", 5, None)


def test_ordinary_queries_never_read_the_log(
    fake_memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = SessionLog(fake_memory)
    _seed_two_days(log)
    reads: list[str] = []
    original = log._candidates
    monkeypatch.setattr(log, "_candidates", lambda *a: reads.append("read") or original(*a))
    for q in ("how do I cook tomato and eggs", "推荐一个好吃的川菜", "what should I cook today?"):
        assert log.search(q, "main", 5, None) == []
    assert reads == []
    assert log.search("what did I ask today?", "main", 5, None)  # a recall question does
    assert reads == ["read"]


def test_scopes_are_isolated(fake_memory: Memory) -> None:
    log = SessionLog(fake_memory)
    y = _yesterday_noon()
    log.append("alice", "t1", "user", "alice's secret plan for the surprise party", at=y)
    log.append("bob", "t1", "user", "bob asks about the weather", at=y)
    fake_memory.engine.add_source(log.search)
    for q in ("what did I ask yesterday?", "之前我说过 surprise party 吗？"):
        texts = " ".join(h.text for h in fake_memory.search(q, scope="bob"))
        assert "alice" not in texts
    assert [e.text for e in log.recent("bob")] == ["bob asks about the weather"]
    assert all(h.scope == "alice" for h in log.search("what did I ask yesterday", "alice", 5, None))


def test_the_memory_searches_its_own_log_once_however_many_logs_exist(
    fake_memory: Memory,
) -> None:
    other = SessionLog(fake_memory)  # another view of the same rows, not searched twice
    SessionLog(fake_memory)
    other.append("main", "t1", "user", "我昨天说要买牛奶", at=_yesterday_noon())
    hits = fake_memory.search("我昨天说了什么？", scope="main")
    assert [h.text for h in hits if h.source == "session"] == ["User: 我昨天说要买牛奶"]


def test_max_results_caps_session_hits(fake_memory: Memory) -> None:
    log = SessionLog(fake_memory, max_results=3)
    y = _yesterday_noon()
    for i in range(10):
        log.append("main", "t1", "user", f"question {i} about train tickets", at=y + i)
    assert len(log.search("what did I ask yesterday?", "main", 10, None)) == 3


@pytest.mark.parametrize(
    ("query", "role", "tokens"),
    [
        ("what did I ask yesterday?", "user", ()),
        ("我昨天问了什么？", "user", ()),
        ("What did you recommend for the garden last week?", "assistant", ("garden",)),
        ("你上次推荐的餐厅叫什么？", "assistant", ("餐厅", "厅叫")),
        ("之前我说过我的护照号码是多少？", "user", ("护照", "照号", "号码")),
        ("上次我们聊了高铁吗", None, ("高铁",)),
        ("What did we talk about on 2024-03-05?", None, ()),
        ("3月5日我们聊了什么", None, ()),
    ],
)
def test_query_focus(query: str, role: str | None, tokens: tuple[str, ...]) -> None:
    focus = query_focus(query)
    assert focus.role == role
    assert focus.tokens == tokens


async def test_async_twins(fake_memory: Memory) -> None:
    log = SessionLog(fake_memory)
    ev = await log.aappend("main", "t1", "user", "async hello there")
    assert [e.id for e in await log.arecent("main")] == [ev.id]
    assert await log.apurge() == 0
