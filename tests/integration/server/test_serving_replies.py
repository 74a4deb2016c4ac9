"""The README's curl example against a ``serve --scripted`` app, over real HTTP, with
unrelated saves pending: the request confirms nothing it does not answer."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx

from langmem_ext import Memory
from langmem_ext.chat_models.scripted import ScriptedChatModel, offline_policy
from langmem_ext.server.app import create_app, serve_in_thread

ROOT = Path(__file__).resolve().parents[3]
SCOPE = "user_alice"


def readme_curl_body() -> dict[str, Any]:
    readme = (ROOT / "README.md").read_text()
    [body] = re.findall(r"curl -X POST localhost:8000/agent/invoke .*?-d '([^']+)'", readme, re.S)
    parsed: dict[str, Any] = json.loads(body)
    return parsed


def test_the_readme_curl_example_confirms_nothing_unrelated(memory: Memory) -> None:
    body = readme_curl_body()
    assert body["input"]["messages"] == ["我喜欢吃拉面，请记住"]
    assert body["config"]["configurable"] == {"thread_id": "t1", "user_id": "alice"}
    # Saves pending before the request: another conversation's, one made outside any
    # conversation, and a profile change the extractor proposed elsewhere.
    tea = memory.save("主人喜欢喝茶", scope=SCOPE, thread_id="t0")
    dentist = memory.save("主人周五下午三点看牙医", scope=SCOPE)
    [allergy] = memory.upsert_facts(
        {"allergies": ["花生"]}, scope=SCOPE, source="extractor", thread_id="t0"
    ).pending
    unrelated = {tea.id, dentist.id, allergy.id}
    app = create_app(memory, ScriptedChatModel(policy=offline_policy))  # `serve --scripted`
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=120) as client:
        r = client.post("/agent/invoke", json=body)
        assert r.status_code == 200, r.text
        out = r.json()["output"]
        answer = str(out["messages"][-1]["content"])
        assert answer.startswith("要我记住这条吗：我喜欢吃拉面？"), answer
        assert memory.list(scope=SCOPE) == [] and memory.profile(scope=SCOPE).allergies == []
        waiting = {p.id: p for p in memory.list_pending(scope=SCOPE)}
        assert unrelated < set(waiting)
        [ramen] = [p for p in waiting.values() if p.id not in unrelated]
        assert ramen.text == "我喜欢吃拉面"
        assert ramen.thread_id == "user_alice/t1"  # the server's thread of alice's "t1"
        assert out["proposed"] == [ramen.id]
        # The user's "好的" in t1 answers t1's question: the ramen save only.
        again = {**body, "input": {"messages": ["好的"]}}
        r = client.post("/agent/invoke", json=again)
        assert r.status_code == 200, r.text
    assert [e.text for e in memory.list(scope=SCOPE)] == ["我喜欢吃拉面"]
    assert {p.id for p in memory.list_pending(scope=SCOPE)} == unrelated
    assert memory.profile(scope=SCOPE).allergies == []
