"""The ``/v1`` REST API end to end, against a real ``langmem-ext serve`` process.

One server (real embedder, real Chroma, real SQLite) for the module; each test uses
its own users, so tests do not see each other's memories.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from _serve_helpers import served

pytestmark = pytest.mark.slow
README = Path(__file__).resolve().parents[3] / "README.md"


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("rest")
    with served(root / "ws", root / "serve.log") as base:
        yield base


def client(url: str, user: str | None, **headers: str) -> httpx.Client:
    """A client of ``/v1`` as ``user``; every write is JSON (bodiless ones too: the
    server refuses writes of other content types)."""
    sent = {"X-User-Id": user} if user is not None else {}
    json = {"content-type": "application/json"}
    return httpx.Client(base_url=f"{url}/v1", headers={**json, **sent, **headers}, timeout=120)


def ok(r: httpx.Response, status: int = 200) -> Any:
    assert r.status_code == status, (r.status_code, r.text)
    return r.json()


def test_openapi_renders_offline_and_lists_every_route(url: str) -> None:
    spec = ok(httpx.get(f"{url}/openapi.json", timeout=30))
    paths = spec["paths"]
    for path in (
        "/v1/memories", "/v1/memories/{entry_id}", "/v1/memories/{entry_id}/history",
        "/v1/memories/by-anchor", "/v1/pending", "/v1/pending/{pending_id}/confirm",
        "/v1/pending/{pending_id}/reject", "/v1/search", "/v1/files", "/v1/files/read",
        "/v1/profile", "/v1/profile/facts", "/v1/profile/preferences", "/v1/triples",
        "/v1/export", "/v1/stats", "/v1/sync", "/v1/maintain", "/v1/sessions/context",
        "/v1/sessions/turns", "/v1/sessions/checkpoint", "/v1/sessions/finalize",
    ):  # fmt: skip
        assert path in paths, path
    search = paths["/v1/search"]["post"]
    assert {"X-User-Id", "X-Scope"} <= {p["name"] for p in search["parameters"]}


def test_memories_add_get_list_update_history_delete(url: str) -> None:
    with client(url, "ann") as c:
        a = ok(c.post("/memories", json={"text": "Ann lives in Lyon"}), 201)
        b = ok(c.post("/memories", json={"text": "Ann likes green tea", "category": "core"}), 201)
        assert a["scope"] == "user_ann" and a["verified"] is True
        assert ok(c.get(f"/memories/{a['id']}"))["text"] == "Ann lives in Lyon"
        assert ok(c.get("/memories/by-anchor", params={"anchor": b["anchor"]}))["id"] == b["id"]
        page = ok(c.get("/memories", params={"limit": 1, "offset": 1}))
        assert page["total"] == 2 and [e["id"] for e in page["entries"]] == [b["id"]]
        core = ok(c.get("/memories", params={"category": "core"}))
        assert [e["id"] for e in core["entries"]] == [b["id"]]
        before = datetime.fromisoformat(a["created_at"]) + timedelta(milliseconds=1)
        new = ok(c.patch(f"/memories/{a['id']}", json={"text": "Ann lives in Paris"}))
        assert new["id"] != a["id"] and new["supersedes"] == a["id"]
        assert [h["op"] for h in ok(c.get(f"/memories/{new['id']}/history"))][:1] == ["add"]
        now = ok(c.post("/search", json={"query": "where does Ann live"}))["hits"]
        assert now[0]["text"] == "Ann lives in Paris" and now[0]["debug"] == {}
        then = ok(
            c.post(
                "/search",
                json={"query": "where does Ann live", "as_of": before.isoformat(), "explain": True},
            )
        )["hits"]
        assert then[0]["text"] == "Ann lives in Lyon" and "final" in then[0]["debug"]
        every = ok(c.post("/search", json={"query": "Ann live", "include_superseded": True}))
        assert {"Ann lives in Lyon", "Ann lives in Paris"} <= {h["text"] for h in every["hits"]}
        assert ok(c.delete(f"/memories/{b['id']}")) == {"id": b["id"], "deleted": True}
        gone = c.get(f"/memories/{b['id']}")
        assert gone.status_code == 404 and gone.json()["error"] == "EntryNotFoundError"
        assert [e["text"] for e in ok(c.get("/export"))] == ["Ann lives in Paris"]


def test_pending_save_confirm_reject(url: str) -> None:
    with client(url, "pia") as c:
        kept = ok(c.post("/pending", json={"text": "Pia is allergic to peanuts"}), 201)
        dropped = ok(c.post("/pending", json={"text": "Pia hates jazz", "target": "daily"}), 201)
        assert {p["id"] for p in ok(c.get("/pending"))} == {kept["id"], dropped["id"]}
        entry = ok(c.post(f"/pending/{kept['id']}/confirm"))
        assert entry["id"] == kept["entry_id"] and entry["text"] == "Pia is allergic to peanuts"
        assert ok(c.post(f"/pending/{dropped['id']}/reject"))["status"] == "rejected"
        again = c.post(f"/pending/{kept['id']}/confirm")
        assert again.status_code == 409 and again.json()["error"] == "PendingAlreadyResolvedError"
        assert ok(c.get("/pending")) == []
        hits = ok(c.post("/search", json={"query": "peanuts"}))["hits"]
        assert [h["id"] for h in hits][:1] == [entry["id"]]


def test_files_profile_graph_stats_sync_maintain(url: str) -> None:
    with client(url, "lin") as c:
        entry = ok(c.post("/memories", json={"text": "Lin Wei likes oolong tea"}), 201)
        files = ok(c.get("/files"))["files"]
        assert files == ["memory/scopes/user_lin/LONG_TERM.md"]
        lines = ok(c.get("/files/read", params={"path": entry["anchor"]}))
        assert lines["lines"] == [f"- Lin Wei likes oolong tea ^{entry['id']}"]
        update = ok(c.post("/profile/facts", json={"facts": {"allergies": ["shellfish"]}}))
        assert update["profile"]["allergies"] == ["shellfish"] and update["pending"] == []
        ok(c.post("/profile/preferences", json={"preferences": {"seat": "window"}}))
        profile = ok(c.get("/profile"))
        assert profile["allergies"] == ["shellfish"] and profile["preferences"] == {
            "seat": "window"
        }
        assert [h["field"] for h in ok(c.get("/profile/history"))] == [
            "allergies", "preferences.seat",
        ]  # fmt: skip
        assert "memory/scopes/user_lin/PROFILE.md" in ok(c.get("/files"))["files"]
        triples = ok(c.get("/triples", params={"entity": "Lin Wei"}))
        assert [(t["predicate"], t["object"], t["support"]) for t in triples] == [
            ("likes", "oolong tea", [entry["id"]])
        ]
        stats = ok(c.get("/stats"))
        assert list(stats["scopes"]) == ["user_lin"] and stats["scopes"]["user_lin"]["entries"] == 1
        assert ok(c.post("/sync", json={}))["scopes"] in ([], ["user_lin"])
        report = ok(c.post("/maintain", json={}))
        assert report["scopes"] == ["user_lin"] and report["errors"] == []


def test_the_session_engine_with_a_caller_supplied_summary(url: str) -> None:
    with client(url, "sam") as c:
        for i in range(3):
            turn = ok(
                c.post(
                    "/sessions/turns",
                    json={
                        "thread_id": "t1",
                        "human": f"question {i} about tea",
                        "ai": f"answer {i}",
                    },
                )
            )
            assert turn["stored"] and turn["last_seq"] == 2 * (i + 1)
        ctx = ok(c.post("/sessions/context", json={"thread_id": "t1"}))
        assert ctx["mode"] == "FULL_HISTORY" and len(ctx["history"]) == 6
        assert ctx["history"][0] == {**ctx["history"][0], "type": "human"}
        assert ctx["history"][0]["data"]["content"] == "question 0 about tea"
        summary = "Sam asked three questions about tea."
        cp = ok(
            c.post(
                "/sessions/checkpoint",
                json={"thread_id": "t1", "summary": summary, "keep_last_turns": 1, "force": True},
            )
        )
        assert cp["made"] and cp["summary"] == summary and cp["compacted"] == 4, cp
        ctx = ok(c.post("/sessions/context", json={"thread_id": "t1"}))
        assert ctx["mode"] == "SUMMARY_N" and ctx["summary"] == summary
        assert len(ctx["full_history"]) == 6
        assert summary in str(ctx["history"][0]["data"]["content"])
        assert ctx["history"][-1]["data"]["content"] == "answer 2"
        done = ok(c.post("/sessions/finalize", json={"thread_id": "t1", "summary": "Tea talk."}))
        assert done["summary"] == "Tea talk." and done["episode_id"]
        episode = ok(c.get(f"/memories/{done['episode_id']}"))
        assert episode["category"] == "episode" and "Tea talk." in episode["text"]
        assert ok(c.post("/sessions/finalize", json={"thread_id": "t1"}))["episode_id"] is None
    with client(url, "tom") as c:  # another user's t1 is another conversation
        assert ok(c.post("/sessions/context", json={"thread_id": "t1"}))["history"] == []


def test_a_turn_with_tool_calls_is_stored_in_order(url: str) -> None:
    call = {"name": "memory_search", "args": {"query": "tea"}, "id": "c1"}
    tools = [
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "content": "nothing found", "tool_call_id": "c1"},
    ]
    with client(url, "tia") as c:
        body = {"thread_id": "t1", "human": "what tea do I like?", "ai": "I don't know."}
        done = ok(c.post("/sessions/turns", json={**body, "tool_messages": tools}))
        assert (done["first_seq"], done["last_seq"]) == (1, 4)
        types = [
            m["type"] for m in ok(c.post("/sessions/context", json={"thread_id": "t1"}))["history"]
        ]
        assert types == ["human", "ai", "tool", "ai"]
        orphan = c.post("/sessions/turns", json={**body, "tool_messages": tools[:1]})
        assert orphan.status_code == 422, orphan.text  # a tool call without its result
        human = c.post(
            "/sessions/turns", json={**body, "tool_messages": [{"role": "user", "content": "x"}]}
        )
        assert human.status_code == 422 and "tool_messages" in human.json()["detail"]
        ctx = ok(c.post("/sessions/context", json={"thread_id": "t1"}))
        assert len(ctx["history"]) == 4  # nothing of the refused turns was written


def test_another_users_ids_are_unknown_on_every_route(url: str) -> None:
    with client(url, "amy") as amy:
        entry = ok(amy.post("/memories", json={"text": "Amy's locker code is 4512"}), 201)
        pending = ok(amy.post("/pending", json={"text": "Amy plays the cello"}), 201)
        ok(
            amy.post(
                "/sessions/turns", json={"thread_id": "t1", "human": "hi, I am Amy", "ai": "hi"}
            )
        )
    with client(url, "eve") as eve:
        eid, pid = entry["id"], pending["id"]
        refused = [
            eve.get(f"/memories/{eid}"),
            eve.get("/memories/by-anchor", params={"anchor": entry["anchor"]}),
            eve.patch(f"/memories/{eid}", json={"text": "changed by eve"}),
            eve.delete(f"/memories/{eid}"),
            eve.get(f"/memories/{eid}/history"),
            eve.post(f"/pending/{pid}/confirm"),
            eve.post(f"/pending/{pid}/reject"),
        ]
        for r in refused:
            assert r.status_code == 404, (r.request.method, r.request.url, r.text)
            assert "4512" not in r.text and "cello" not in r.text
        unknown = eve.get("/files/read", params={"path": "memory/scopes/user_nobody/LONG_TERM.md"})
        theirs = eve.get("/files/read", params={"path": entry["path"]})
        assert theirs.status_code == unknown.status_code == 422
        assert theirs.json()["detail"].replace(entry["path"], "P") == unknown.json()[
            "detail"
        ].replace("memory/scopes/user_nobody/LONG_TERM.md", "P")
        assert ok(eve.post("/search", json={"query": "locker code"}))["hits"] == []
        assert ok(eve.get("/pending")) == [] and ok(eve.get("/export")) == []
        assert ok(eve.get("/files"))["files"] == []
        assert ok(eve.get("/triples", params={"entity": "Amy"})) == []
        ctx = ok(eve.post("/sessions/context", json={"thread_id": "t1"}))
        assert ctx["history"] == [] and ctx["full_history"] == []
        assert eve.get("/memories", headers={"X-Scope": "user_amy"}).status_code == 403
    with client(url, "amy") as amy:  # nothing of amy's changed
        assert ok(amy.get(f"/memories/{entry['id']}"))["text"] == "Amy's locker code is 4512"
        assert [p["id"] for p in ok(amy.get("/pending"))] == [pending["id"]]


def test_requests_without_a_user_or_with_bad_input_get_typed_errors(url: str) -> None:
    with client(url, None) as anonymous:
        r = anonymous.get("/memories")
        assert r.status_code == 401 and "X-User-Id" in r.json()["detail"]
    with client(url, "zed") as c:
        r = c.post("/pending", json={"text": "hello"})
        assert r.status_code == 422 and r.json()["error"] == "NoiseTextError"
        assert c.post("/memories", json={"text": ""}).status_code == 422
        assert (
            c.post("/memories", json={"text": "Zed likes tea", "colour": "red"}).status_code == 422
        )
        assert c.post("/search", json={"query": "tea", "mode": "fuzzy"}).status_code == 422
        assert c.get("/memories", params={"sort": "nonsense"}).status_code == 422
        assert c.get("/triples", params={"entity": "x", "hops": 3}).status_code == 422
        r = c.post(
            "/memories", content=b'{"text": "\xff"}', headers={"content-type": "application/json"}
        )
        assert r.status_code in (400, 422), r.text
        r = c.post("/memories", content="text=x", headers={"content-type": "text/plain"})
        assert r.status_code == 415
        assert ok(c.get("/memories"))["total"] == 0  # nothing written by any of them
        assert ok(c.get("/pending")) == []


def test_written_through_rest_is_recalled_by_the_langserve_retriever(url: str) -> None:
    with client(url, "rob") as c:
        ok(c.post("/memories", json={"text": "Rob keeps bees on his roof"}), 201)
    r = httpx.post(
        f"{url}/memory/invoke",
        json={"input": "bees", "config": {"configurable": {"user_id": "rob"}}},
        timeout=60,
    )
    assert "Rob keeps bees on his roof" in [d["page_content"] for d in ok(r)["output"]]


def test_the_readmes_curls_and_client_snippet_work(url: str) -> None:
    text = README.read_text()
    curls = re.findall(
        r"^curl -X POST localhost:8000(/v1/\S+) (.*?)-d '([^']+)'$",
        text.replace("\\\n  ", ""),
        re.M,
    )
    assert [path for path, _, _ in curls] == ["/v1/memories", "/v1/search"]
    for path, flags, body in curls:
        words = shlex.split(flags)
        headers = dict(w.split(": ", 1) for w in words[1::2])
        r = httpx.post(f"{url}{path}", content=body, headers=headers, timeout=120)
        assert r.status_code in (200, 201), r.text
    assert r.json()["hits"][0]["text"] == "Alice is allergic to peanuts"
    assert "final" in r.json()["hits"][0]["debug"]
    [snippet] = re.findall(
        r"```python\n(from langmem_ext.client import MemoryClient\n.*?)```", text, re.S
    )
    printed: list[str] = []
    exec(  # the README's snippet, against this server
        snippet.replace('"http://127.0.0.1:8000"', repr(url)), {"print": printed.append}
    )
    assert printed == ["Alice likes oolong tea"]
