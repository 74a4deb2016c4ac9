"""``/admin`` at the HTTP level: pages, scoping (another user's ids refused), CSRF.

The app is :func:`~langmem_ext.serving.create_app` in process (``TestClient``), on a
workspace with the hashing embedder; the browser tests are ``test_admin_browser.py``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from fastapi import Request
from fastapi.testclient import TestClient
from langchain_core.messages import AIMessage

from langmem_ext import Memory
from langmem_ext.scripted import ScriptedChatModel
from langmem_ext.serving import create_app

MODEL = ScriptedChatModel(policy=lambda messages: AIMessage("ok"))


@pytest.fixture
def memory(fake_memory: Memory) -> Memory:
    """The workspace the app serves (hashing embedder)."""
    return fake_memory


@pytest.fixture
def client(memory: Memory) -> Iterator[TestClient]:
    app = create_app(memory, MODEL, shared_scopes=("team",))
    with TestClient(app, base_url="http://127.0.0.1") as c:
        yield c


def login(client: TestClient, user: str) -> None:
    page = client.get("/admin/login").text
    found = re.search(r'name="token" value="([0-9a-f]+)"', page)
    assert found, page
    r = client.post("/admin/login", data={"user": user, "token": found.group(1)})
    assert r.status_code == 200 and r.url.path == "/admin/memories", r.text


def token(client: TestClient, page: str = "/admin/memories") -> str:
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', client.get(page).text)
    assert found, page
    return found.group(1)


def post(client: TestClient, path: str, data: dict[str, str | list[str]]) -> int:
    r = client.post(path, data=data, follow_redirects=False)
    return r.status_code


def test_without_a_user_the_admin_asks_who_you_are(client: TestClient) -> None:
    r = client.get("/admin/memories")
    assert r.url.path == "/admin/login"
    assert 'name="user"' in r.text and "127.0.0.1" in r.text


def test_every_page_renders_in_english_and_chinese(client: TestClient, memory: Memory) -> None:
    login(client, "alice")
    memory.add("Alice likes green tea", scope="user_alice")
    memory.save("Alice's cat is called Miso", scope="user_alice")
    pages = ["memories", "pending", "search?q=tea", "profile", "stats", "maintenance"]
    for page in pages:
        r = client.get(f"/admin/{page}")
        assert r.status_code == 200, (page, r.text)
        assert 'lang="en"' in r.text
    client.get("/admin/lang", params={"to": "zh", "next": "/admin/stats"})
    r = client.get("/admin/memories")
    assert 'lang="zh-CN"' in r.text and "记忆" in r.text and "Alice likes green tea" in r.text
    assert client.get("/admin/static/admin.js").status_code == 200
    assert client.get("/admin/static/../routes.py").status_code == 404


def test_table_filters_sorts_and_pages_on_the_server(client: TestClient, memory: Memory) -> None:
    login(client, "alice")
    memory.add_many([f"Note {i:03d} about tea" for i in range(120)], scope="user_alice")
    memory.add("A core rule", scope="user_alice", category="core")
    r = client.get("/admin/memories", params={"sort": "text", "order": "asc", "page": 2})
    rows = re.findall(r'<td class="text">(.*?)</td>', r.text)
    assert rows[0] == "Note 049 about tea" and len(rows) == 50
    assert "51–100 of 121" in r.text
    r = client.get("/admin/memories", params={"category": "core"})
    assert re.findall(r'<td class="text">(.*?)</td>', r.text) == ["A core rule"]
    r = client.get("/admin/memories", params={"q": "NOTE 11"})
    assert "1–10 of 10" in r.text
    r = client.get("/admin/memories", params={"page": 99})  # past the end: the last page
    assert "101–121 of 121" in r.text and "Page 3 / 3" in r.text


def test_add_edit_history_delete_through_memory(client: TestClient, memory: Memory) -> None:
    login(client, "alice")
    csrf = token(client)
    r = client.post(
        "/admin/memories/add", data={"csrf": csrf, "text": "Likes tea", "category": "fact"}
    )
    assert r.status_code == 200 and "Memory added." in r.text
    [entry] = memory.list(scope="user_alice")
    r = client.post(
        f"/admin/memories/{entry.id}/edit",
        data={"csrf": csrf, "text": "Likes oolong tea", "category": "core"},
    )
    [new] = memory.list(scope="user_alice")
    assert new.text == "Likes oolong tea" and new.category == "core" and new.supersedes == entry.id
    assert r.url.path == f"/admin/memories/{new.id}"
    assert "superseded" in r.text and "Likes tea" in r.text  # the version chain
    assert post(client, f"/admin/memories/{new.id}/delete", {"csrf": csrf}) == 303
    assert memory.list(scope="user_alice") == []


def test_bulk_delete_skips_core_and_system_and_says_how_many(
    client: TestClient, memory: Memory
) -> None:
    login(client, "alice")
    facts = memory.add_many(["tea one", "tea two", "coffee"], scope="user_alice")
    core = memory.add("tea is the user's core rule", scope="user_alice", category="core")
    system = memory.add("tea system note", scope="user_alice", category="system")
    csrf = token(client)
    r = client.post(
        "/admin/bulk-delete", data={"csrf": csrf, "mode": "ids", "ids": [facts[0], core]}
    )
    assert "Deleted 1 memories; skipped 1 core/system memories." in r.text
    r = client.post("/admin/bulk-delete", data={"csrf": csrf, "mode": "filter", "q": "tea"})
    assert "Deleted 1 memories; skipped 2 core/system memories." in r.text
    left = {e.id for e in memory.list(scope="user_alice")}
    assert left == {facts[2], core, system}
    pasted = f"{facts[2]}\n{system}"
    r = client.post("/admin/bulk-delete", data={"csrf": csrf, "mode": "ids", "id_list": pasted})
    assert "Deleted 1 memories; skipped 1 core/system memories." in r.text
    assert {e.id for e in memory.list(scope="user_alice")} == {core, system}


def test_pending_confirm_reject_one_and_all(client: TestClient, memory: Memory) -> None:
    login(client, "alice")
    items = [memory.save(f"Alice fact number {i}", scope="user_alice") for i in range(4)]
    csrf = token(client, "/admin/pending")
    assert post(client, f"/admin/pending/{items[0].id}/confirm", {"csrf": csrf}) == 303
    assert post(client, f"/admin/pending/{items[1].id}/reject", {"csrf": csrf}) == 303
    assert post(client, "/admin/pending/all", {"csrf": csrf, "action": "confirm"}) == 303
    assert memory.list_pending(scope="user_alice") == []
    assert len(memory.list(scope="user_alice")) == 3


def test_pending_update_names_the_memory_it_replaces(client: TestClient, memory: Memory) -> None:
    login(client, "alice")
    old = memory.add("Alice lives in Berlin", scope="user_alice")
    item = memory.save("Alice lives in Munich", scope="user_alice", supersedes=old)
    page = client.get("/admin/pending").text
    assert f"replaces {old}" in page
    csrf = token(client, "/admin/pending")
    assert post(client, f"/admin/pending/{item.id}/confirm", {"csrf": csrf}) == 303
    [current] = memory.list(scope="user_alice")
    assert (current.text, current.supersedes) == ("Alice lives in Munich", old)


def test_search_shows_each_score_stage(client: TestClient, memory: Memory) -> None:
    login(client, "alice")
    memory.add("Alice likes green tea", scope="user_alice")
    # both searches must see the same knowledge graph (its triples come in the background)
    assert memory.background.wait("user_alice", timeout=10)
    r = client.get("/admin/search", params={"q": "green tea"})
    [hit] = memory.search("green tea", scope="user_alice")
    assert "Alice likes green tea" in r.text
    for stage in hit.debug:
        assert f'<th scope="row">{stage}</th>' in r.text


def test_search_says_why_each_hit_ranked(client: TestClient, memory: Memory) -> None:
    login(client, "alice")
    memory.add("Alice is allergic to peanuts", scope="user_alice")
    memory.add("爱丽丝喜欢喝绿茶", scope="user_alice")
    assert memory.background.wait("user_alice", timeout=10)
    r = client.get("/admin/search", params={"q": "allergies"})
    assert "Why it ranked here" in r.text
    assert '<td class="reason">matched the words allergies' in r.text
    assert '<th scope="row">Score</th>' in r.text


def test_a_safety_field_edit_waits_for_confirmation(client: TestClient, memory: Memory) -> None:
    login(client, "alice")
    csrf = token(client, "/admin/profile")
    r = client.post(
        "/admin/profile/field", data={"csrf": csrf, "field": "allergies", "value": "花生, 青霉素"}
    )
    assert "confirm it in the pending queue" in r.text
    assert memory.profile(scope="user_alice").allergies == []
    [item] = memory.list_pending(scope="user_alice")
    assert item.target == "profile"
    assert post(client, f"/admin/pending/{item.id}/confirm", {"csrf": csrf}) == 303
    assert memory.profile(scope="user_alice").allergies == ["花生", "青霉素"]
    # identity fields are written at once
    client.post("/admin/profile/field", data={"csrf": csrf, "field": "name", "value": "小明"})
    assert memory.profile(scope="user_alice").name == "小明"
    r = client.get("/admin/profile")
    assert 'class="safety" data-field="allergies"' in r.text
    # the field links to the memories that state it
    entry_id = memory.add("我对花生过敏", scope="user_alice")
    r = client.get("/admin/profile")
    assert f'<a href="/admin/memories/{entry_id}">{entry_id}</a>' in r.text


def test_stats_draw_svg_and_exports(client: TestClient, memory: Memory) -> None:
    login(client, "alice")
    memory.add_many(["tea", "coffee"], scope="user_alice")
    memory.add("team rule", scope="team", category="core")
    r = client.get("/admin/stats")
    assert r.text.count("<svg") == 2 and '<th scope="row">team</th>' in r.text
    data = client.get("/admin/export.json").json()
    assert sorted(d["text"] for d in data) == ["coffee", "tea"]
    md = client.get("/admin/export.md")
    assert md.headers["content-type"].startswith("text/markdown")
    assert "## Fact" in md.text and "- tea ^m-" in md.text


def test_maintenance_runs_and_shows_its_report(client: TestClient) -> None:
    login(client, "alice")
    r = client.post("/admin/maintenance", data={"csrf": token(client, "/admin/maintenance")})
    assert r.status_code == 200 and 'id="summary"' in r.text and "decayed" in r.text


STATE_CHANGING = [
    "/admin/memories/add",
    "/admin/memories/{id}/edit",
    "/admin/memories/{id}/delete",
    "/admin/bulk-delete",
    "/admin/pending/all",
    "/admin/pending/{pid}/confirm",
    "/admin/pending/{pid}/reject",
    "/admin/profile/field",
    "/admin/profile/preference",
    "/admin/maintenance",
]


def test_every_state_changing_form_needs_the_csrf_token(client: TestClient, memory: Memory) -> None:
    login(client, "alice")
    eid = memory.add("Alice likes tea", scope="user_alice")
    pid = memory.save("Alice's cat is Miso", scope="user_alice").id
    good = token(client)
    for template in STATE_CHANGING:
        path = template.format(id=eid, pid=pid)
        data = {"text": "x y z", "category": "fact", "ids": eid, "action": "confirm",
                "field": "name", "value": "Bob", "key": "seat", "mode": "ids"}  # fmt: skip
        assert post(client, path, data) == 403, path
        assert post(client, path, {**data, "csrf": "0" * 64}) == 403, path
        # another user's token is wrong too
    login(client, "bob")
    assert post(client, "/admin/memories/add", {"csrf": good, "text": "bob's"}) == 403
    assert [e.text for e in memory.list(scope="user_alice")] == ["Alice likes tea"]
    assert [p.id for p in memory.list_pending(scope="user_alice")] == [pid]
    assert memory.profile(scope="user_alice").name is None
    assert memory.list(scope="user_bob") == []


def test_another_users_ids_are_refused(client: TestClient, memory: Memory) -> None:
    eid = memory.add("Alice's secret", scope="user_alice", category="fact")
    pid = memory.save("Alice's other secret", scope="user_alice").id
    login(client, "bob")
    csrf = token(client)
    assert client.get(f"/admin/memories/{eid}").status_code == 404
    for path, data in [
        (f"/admin/memories/{eid}/edit", {"text": "bob was here"}),
        (f"/admin/memories/{eid}/delete", {}),
        ("/admin/bulk-delete", {"mode": "ids", "ids": eid}),
        (f"/admin/pending/{pid}/confirm", {}),
        (f"/admin/pending/{pid}/reject", {}),
    ]:
        assert post(client, path, {**data, "csrf": csrf}) == 404, path
    assert [e.text for e in memory.list(scope="user_alice")] == ["Alice's secret"]
    assert [p.id for p in memory.list_pending(scope="user_alice")] == [pid]
    # scopes: a shared scope is allowed, another user's scope is not
    assert client.get("/admin/memories", params={"scope": "team"}).status_code == 200
    r = client.get("/admin/memories", params={"scope": "user_alice"})
    assert r.status_code == 403 and "Alice's secret" not in r.text
    assert client.get("/admin/export.json", params={"scope": "user_alice"}).status_code == 403


def test_authenticate_decides_the_user(memory: Memory) -> None:
    def authenticate(request: Request) -> str | None:
        return {"Bearer a": "alice", "Bearer b": "bob"}.get(
            request.headers.get("authorization", "")
        )

    memory.add("Alice likes tea", scope="user_alice")
    app = create_app(memory, MODEL, authenticate=authenticate, host="0.0.0.0")
    with TestClient(app, base_url="http://127.0.0.1", client=("10.1.2.3", 5000)) as c:
        assert c.get("/admin/memories").status_code == 401
        c.cookies.set("langmem_admin_user", "alice")  # ignored: authenticate decides
        r = c.get("/admin/memories", headers={"Authorization": "Bearer b"})
        assert r.status_code == 200 and "Alice likes tea" not in r.text
        r = c.get("/admin/memories", headers={"Authorization": "Bearer a"})
        assert "Alice likes tea" in r.text


def test_off_loopback_without_authenticate_the_admin_refuses(memory: Memory) -> None:
    app = create_app(memory, MODEL, host="0.0.0.0")
    with TestClient(app, base_url="http://127.0.0.1") as c:
        r = c.get("/admin/memories")
        assert r.status_code == 403 and "without authenticate=" in r.text
    app = create_app(memory, MODEL)  # run elsewhere by hand: remote clients refused
    with TestClient(app, base_url="http://127.0.0.1", client=("10.1.2.3", 5000)) as c:
        c.cookies.set("langmem_admin_user", "alice")
        assert c.get("/admin/memories").status_code == 403


def test_signing_in_needs_the_login_pages_token_and_a_post(client: TestClient) -> None:
    r = client.get("/admin/login", params={"user": "mallory"})  # a GET changes nothing
    assert r.status_code == 200 and "langmem_admin_user" not in client.cookies
    assert post(client, "/admin/login", {"user": "mallory", "token": "0" * 64}) == 403
    client.cookies.clear()
    assert post(client, "/admin/login", {"user": "mallory"}) == 403  # no sign-in cookie
    assert "langmem_admin_user" not in client.cookies
    login(client, "alice")
    assert client.cookies.get("langmem_admin_user") == "alice"
