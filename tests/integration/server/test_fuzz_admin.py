"""Fuzz every admin form: whatever a signed-in user types, the answer is a page or a
redirect (never a 500, never JSON or a traceback), and pages keep working after."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage

from langmem_ext import Memory
from langmem_ext.chat_models.scripted import ScriptedChatModel
from langmem_ext.server.app import create_app

FIELDS = ("text", "category", "mode", "ids", "id_list", "q", "action", "field", "value", "key")
"""Names the admin's forms read (and some they do not)."""

# What people type: any text UTF-8 can carry (no lone surrogates: a browser cannot
# send them), with line breaks, controls, other scripts, long runs and look-alike ids.
TEXTS = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=60),
    st.sampled_from(
        [
            "",
            " ",
            "core",
            "fact",
            "ids",
            "filter",
            "confirm",
            "reject",
            "allergies",
            "m-00000000",
            "../etc",
            "a\u2028b",
            "x\ny",
            "9" * 40,
            "花生, 青霉素",
        ]
    ),
    st.text(st.characters(blacklist_categories=("Cs",)), min_size=3000, max_size=5000),
)
FORMS = st.dictionaries(st.sampled_from(FIELDS), TEXTS, max_size=5)


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, str]]:
    from langmem_ext.core.config import Settings

    s = Settings(workspace=tmp_path_factory.mktemp("admin-fuzz") / "ws")
    s.embeddings.provider = "fake"
    memory = Memory(settings=s)
    entry = memory.add("Alice likes green tea", scope="user_alice")
    memory.save("Alice is allergic to peanuts", scope="user_alice")
    app = create_app(memory, ScriptedChatModel(policy=lambda messages: AIMessage("ok")))
    with TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as c:
        page = c.get("/admin/login").text
        found = re.search(r'name="token" value="([0-9a-f]+)"', page)
        assert found
        c.post("/admin/login", data={"user": "alice", "token": found.group(1)})
        yield c, entry
    memory.close()


def _form_paths(client: TestClient, entry: str) -> list[str]:
    paths = []
    routes = list(client.app.routes)  # type: ignore[attr-defined]
    for route in list(routes):  # included routers (newer FastAPI keeps them whole)
        routes += getattr(getattr(route, "original_router", None), "routes", [])
    for route in routes:
        if isinstance(route, APIRoute) and "POST" in route.methods:
            path = route.path
            if path.startswith("/admin") and path != "/admin/login":
                path = path.replace("{entry_id}", entry).replace("{pending_id}", "p-1")
                paths.append(path.replace("{action}", "confirm"))
    return paths


def test_every_admin_form_answers_a_page_whatever_is_typed(client: tuple[TestClient, str]) -> None:
    c, entry = client
    csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', c.get("/admin/memories").text)
    assert csrf
    paths = _form_paths(c, entry)
    assert len(paths) >= 8, paths
    problems: list[str] = []

    @settings(
        max_examples=60,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(path=st.sampled_from(paths), form=FORMS, keep_csrf=st.booleans())
    def run(path: str, form: dict[str, str], keep_csrf: bool) -> None:
        data = {**form, **({"csrf": csrf.group(1)} if keep_csrf else {})}
        r = c.post(path, data=data, follow_redirects=False)
        kind = r.headers.get("content-type", "")
        if r.status_code >= 500 or (r.status_code != 303 and not kind.startswith("text/html")):
            problems.append(f"POST {path} {data!r:.200} -> {r.status_code} {kind}: {r.text[:200]}")

    run()
    assert not problems, "\n".join(problems[:5])
    for page in ("/admin/memories", "/admin/pending", "/admin/profile", "/admin/stats"):
        assert c.get(page).status_code == 200, page
