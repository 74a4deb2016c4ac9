"""``/admin`` at the HTTP level: pages, scoping (another user's ids refused), CSRF.

The app is :func:`~langmem_ext.server.app.create_app` in process (``TestClient``), on a
workspace with the hashing embedder; the browser tests are ``test_admin_browser.py``.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import Request
from fastapi.testclient import TestClient
from langchain_core.messages import AIMessage

from langmem_ext import Memory, Settings
from langmem_ext.chat_models.scripted import ScriptedChatModel
from langmem_ext.memory.scoping import scope_from_config
from langmem_ext.server.admin.charts import histogram_bars
from langmem_ext.server.app import create_app

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


def test_the_login_page_asks_who_you_are(client: TestClient) -> None:
    r = client.get("/admin/login")
    assert 'name="user"' in r.text and "127.0.0.1" in r.text


def rows(page: str) -> list[str]:
    return [html.unescape(r) for r in re.findall(r'<td class="text">(.*?)</td>', page)]


def error_message(page: str) -> str:
    found = re.search(r'<p id="error-message" role="alert">(.*?)</p>', page, re.S)
    assert found, page
    return html.unescape(found.group(1))


@pytest.mark.parametrize("default_scope", ["main", "home"])
def test_a_local_user_sees_what_the_python_api_wrote_in_its_default_scope(
    tmp_path: Path, default_scope: str
) -> None:
    settings = Settings(workspace=tmp_path / "ws", default_scope=default_scope)
    settings.embeddings.provider = "fake"
    with Memory(settings=settings) as m:  # the Python API, no scope named
        m.add("Likes jasmine tea")
        m.add("Alice's own note", scope="user_alice")
    app = create_app(settings=settings, model=MODEL)  # no authenticate=: a local user
    with TestClient(app, base_url="http://127.0.0.1") as c:
        r = c.get("/admin")
        assert r.status_code == 200 and r.url.path == "/admin/memories"
        assert rows(r.text) == ["Likes jasmine tea"]
        # which scope this is: in the heading and the scope switch, nobody signed in
        assert f"<small>({default_scope})</small>" in r.text
        assert f'<option value="{default_scope}" selected>' in r.text
        assert 'id="who">this computer (not signed in)<' in r.text
        # a chosen user id sees its own scope; the default one stays selectable
        login(c, "alice")
        r = c.get("/admin/memories")
        assert rows(r.text) == ["Alice's own note"]
        assert f'<option value="{default_scope}">' in r.text
        r = c.get("/admin/memories", params={"scope": default_scope})
        assert rows(r.text) == ["Likes jasmine tea"]
        # signing in with no user id goes back to the default scope
        page = c.get("/admin/login").text
        assert 'id="use-default"' in page
        found = re.search(r'name="token" value="([0-9a-f]+)"', page)
        assert found
        r = c.post("/admin/login", data={"user": "", "token": found.group(1)})
        assert r.url.path == "/admin/memories" and rows(r.text) == ["Likes jasmine tea"]
        assert "langmem_admin_user" not in c.cookies


@pytest.mark.parametrize("user", ["alice", "alice@example.com", "小明", 42])
def test_a_user_id_names_one_scope_in_the_python_api_and_the_admin(
    client: TestClient, memory: Memory, user: str | int
) -> None:
    # where the LangChain surfaces (tools, retriever, middleware) write for this user
    scope = scope_from_config({"configurable": {"user_id": user}})
    memory.add(f"A note of {user}", scope=scope)
    login(client, str(user))
    r = client.get("/admin/memories")
    assert rows(r.text) == [f"A note of {user}"]
    assert f"<small>({scope})</small>" in r.text


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


def test_a_profile_edit_with_a_line_break_is_refused(client: TestClient, memory: Memory) -> None:
    memory.upsert_facts({"allergies": ["花生"]}, scope="user_alice")
    login(client, "alice")
    csrf = token(client, "/admin/profile")
    for field, value in (("medications", "aspirin\n- allergies:"), ("name", "Ann\u2028x")):
        r = client.post("/admin/profile/field", data={"csrf": csrf, "field": field, "value": value})
        assert r.status_code == 400 and "one line" in r.text
    r = client.post(
        "/admin/profile/preference", data={"csrf": csrf, "key": "tea", "value": "a\x85b"}
    )
    assert r.status_code == 400
    assert memory.list_pending(scope="user_alice") == []
    p = memory.profile(scope="user_alice")
    assert p.allergies == ["花生"] and p.name is None and p.preferences == {}


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


def test_errors_are_html_pages_in_the_users_words(client: TestClient, memory: Memory) -> None:
    login(client, "alice")
    csrf = token(client)
    limit = memory.settings.max_text_chars
    cases = [
        (client.post("/admin/memories/add", data={"csrf": csrf, "text": "  "}),
         400, "The text is empty."),
        (client.post("/admin/memories/add", data={"csrf": csrf, "text": "x" * (limit + 1)}),
         400, f"This memory is longer than the limit of {limit} characters"),
        (client.post("/admin/pending/p-0000000000/confirm", data={"csrf": csrf}),
         404, "There is no pending item with this id in this scope."),
        (client.get("/admin/memories/m-0000000000"),
         404, "There is no memory with this id in this scope."),
        (client.get("/admin/memories", params={"page": "abc"}),
         400, "The page number must be a whole number."),
        (client.get("/admin/no-such-page"), 404, "There is no such page."),
        (client.post("/admin/no-such-form", data={"csrf": csrf}), 404, "There is no such page."),
        (client.get("/admin/memories", params={"scope": "user_bob"}),
         403, "You may not open the scope “user_bob”."),
        (client.get("/admin/memories", params={"scope": "no such scope!"}),
         400, "is not a scope name."),
        (client.post("/admin/memories/add", data={"csrf": "0" * 64, "text": "tea"}),
         403, "This form is out of date"),
    ]  # fmt: skip
    for r, status, words in cases:
        assert (r.status_code, r.headers["content-type"]) == (status, "text/html; charset=utf-8")
        message = error_message(r.text)
        assert words in message, (r.request.url, message)
        # no Python names, method calls or setting paths
        assert not re.search(r"\w\(\)|\w\[\d+\]|Settings\.|_\w+=|\{", message), message
    assert memory.list(scope="user_alice") == []
    # in Chinese too
    client.get("/admin/lang", params={"to": "zh", "next": "/admin/memories"})
    r = client.post("/admin/memories/add", data={"csrf": csrf, "text": " "})
    assert error_message(r.text) == "内容为空。"
    r = client.get("/admin/memories", params={"page": "abc"})
    assert error_message(r.text) == "页码必须是整数。" and 'lang="zh-CN"' in r.text


def test_bulk_delete_by_comma_separated_ids(client: TestClient, memory: Memory) -> None:
    login(client, "alice")
    ids = memory.add_many(["tea one", "tea two", "tea three", "coffee"], scope="user_alice")
    csrf = token(client)
    listed = f"{ids[0]}, {ids[1]}，{ids[2]}"  # ASCII and Chinese commas
    r = client.post("/admin/bulk-delete", data={"csrf": csrf, "mode": "ids", "id_list": listed})
    assert r.status_code == 200 and "Deleted 3 memories; skipped 0" in r.text
    assert [e.id for e in memory.list(scope="user_alice")] == [ids[3]]


def test_bulk_delete_says_what_it_could_not_do(client: TestClient, memory: Memory) -> None:
    login(client, "alice")
    ids = memory.add_many(["tea one", "tea two"], scope="user_alice")
    csrf = token(client)
    r = client.post("/admin/bulk-delete", data={"csrf": csrf, "mode": "all", "q": "tea"})
    assert r.status_code == 400 and "Deleted" not in r.text
    assert "Unknown kind of bulk delete “all”" in error_message(r.text)
    r = client.post("/admin/bulk-delete", data={"csrf": csrf, "mode": "ids", "id_list": " "})
    assert r.status_code == 400 and "No memory was chosen" in error_message(r.text)
    r = client.post(
        "/admin/bulk-delete", data={"csrf": csrf, "mode": "ids", "id_list": f"{ids[0]} m-nope"}
    )
    assert r.status_code == 404
    assert error_message(r.text) == "There is no memory m-nope in this scope. Nothing was deleted."
    assert [e.id for e in memory.list(scope="user_alice")] == ids


def test_an_old_version_links_to_the_current_one_and_cannot_be_changed(
    client: TestClient, memory: Memory
) -> None:
    login(client, "alice")
    old = memory.add("Lives in Berlin", scope="user_alice")
    new = memory.update(old, "Lives in Munich", scope="user_alice").id
    r = client.get(f"/admin/memories/{old}")
    assert r.status_code == 200
    assert 'id="edit-form"' not in r.text and 'id="delete-one"' not in r.text
    assert f'<a href="/admin/memories/{new}" id="current-version">' in r.text
    page = client.get(f"/admin/memories/{new}").text
    assert 'id="edit-form"' in page and 'id="delete-one"' in page
    csrf = token(client)
    edit = client.post(f"/admin/memories/{old}/edit", data={"csrf": csrf, "category": "core"})
    assert edit.status_code == 409 and "old version" in error_message(edit.text)
    assert post(client, f"/admin/memories/{old}/delete", {"csrf": csrf}) == 409
    [current] = memory.list(scope="user_alice")
    assert (current.id, current.category) == (new, "fact")
    kept = memory.get_entry(old, scope="user_alice")
    assert (kept.current, kept.category, kept.text) == (False, "fact", "Lives in Berlin")
    memory.delete(new, scope="user_alice")
    r = client.get(f"/admin/memories/{old}")
    assert "Its newest version was deleted." in r.text and 'id="current-version"' not in r.text


def test_a_profile_change_waits_shown_as_old_and_new_value(
    client: TestClient, memory: Memory
) -> None:
    login(client, "alice")
    memory.upsert_facts({"allergies": ["peanuts"]}, scope="user_alice", source="app")
    update = memory.upsert_facts({"allergies": ["penicillin"]}, scope="user_alice", source="agent")
    [item] = update.pending
    for page in ("/admin/pending", "/admin/profile"):
        text = client.get(page).text
        assert "profile: allergies" not in text, page
        assert (
            '<span class="change"><span class="field">Allergies</span>: '
            '<del class="before">peanuts</del> → <ins class="after">peanuts, penicillin</ins>'
        ) in text, page
    client.get("/admin/lang", params={"to": "zh", "next": "/admin/pending"})
    text = client.get("/admin/pending").text
    assert '<span class="field">过敏</span>' in text and "用户画像" in text
    assert post(client, f"/admin/pending/{item.id}/confirm", {"csrf": token(client)}) == 303
    assert memory.profile(scope="user_alice").allergies == ["peanuts", "penicillin"]


def test_the_importance_histogram_labels_each_bin_by_its_edges(
    client: TestClient, memory: Memory
) -> None:
    bars = histogram_bars(list(range(10)))
    assert [b[0] for b in bars][:2] == ["0.0–0.1", "0.1–0.2"] and bars[-1] == ("0.9–1.0", 9.0)
    login(client, "alice")
    memory.add("new memory", scope="user_alice")  # importance 1.0: the last bin
    memory.add("faded memory", scope="user_alice", importance=0.05)
    svg = client.get("/admin/stats").text
    assert "<title>0.9–1.0: 1</title>" in svg and "<title>0.0–0.1: 1</title>" in svg
    assert "<title>0.9: " not in svg


def test_chinese_pages_translate_values_not_only_headings(
    client: TestClient, memory: Memory
) -> None:
    login(client, "alice")
    memory.add("Alice likes green tea", scope="user_alice")
    memory.save("Alice's cat is called Miso", scope="user_alice")
    client.get("/admin/lang", params={"to": "zh", "next": "/admin/memories"})
    page = client.get("/admin/memories").text
    assert re.findall(r'<td class="category"[^>]*>(.*?)</td>', page) == ["事实"]
    assert re.findall(r'<td class="source"[^>]*>(.*?)</td>', page) == ["用户"]
    assert '<option value="episode">事件</option>' in page
    assert '<span id="page-of">第 1 / 1 页</span>' in page
    profile = client.get("/admin/profile").text
    assert '<th scope="row"><span class="badge">安全关键</span> 过敏</th>' in profile
    assert "emergency_contact<" not in profile and "紧急联系人" in profile
    pending = client.get("/admin/pending").text
    assert "<td>事实</td><td>长期记忆</td>" in pending
    stats = client.get("/admin/stats").text
    assert '<th scope="col">核心</th>' in stats
    csrf = token(client, "/admin/maintenance")
    report = client.post("/admin/maintenance", data={"csrf": csrf}).text
    assert '<tr data-key="decayed"><th scope="row">重要性衰减</th>' in report


def test_a_list_field_is_split_by_the_profiles_own_separators(
    client: TestClient, memory: Memory
) -> None:
    login(client, "alice")
    csrf = token(client, "/admin/profile")
    r = client.post(
        "/admin/profile/field",
        data={"csrf": csrf, "field": "allergies", "value": "花生、青霉素；乳糖"},
    )
    assert r.status_code == 200 and "confirm it in the pending queue" in r.text
    [item] = memory.list_pending(scope="user_alice")
    assert post(client, f"/admin/pending/{item.id}/confirm", {"csrf": csrf}) == 303
    assert memory.profile(scope="user_alice").allergies == ["花生", "青霉素", "乳糖"]
