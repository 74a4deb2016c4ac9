"""``/admin`` in a real headless Chromium against a real ``langmem-ext serve`` process.

Debian's ``chromium`` (``/usr/bin/chromium``; ``.ci/run`` installs it) is driven by
Playwright's Python package with that system browser (Playwright's own browsers are
never downloaded). The workspace is seeded before the server starts; the test opens
the default scope without signing in, adds, edits, confirms a pending item, reads the
search's score stages, bulk-deletes (core skipped) and exports, checks that the pages
fit a 420 px wide phone screen, and saves a screenshot of each page under its tmp dir.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from langmem_ext import Memory, Settings
from langmem_ext.memory.profile import SAFETY_FIELDS

pytestmark = pytest.mark.slow

ENV = {"LANGMEM_EMBEDDINGS__PROVIDER": "fake", "LANGMEM_LIFECYCLE__DAILY_JOBS": "false"}


def find_chromium() -> str | None:
    """The system Chromium: ``$LANGMEM_CHROMIUM``, ``/usr/bin/chromium``, or on ``PATH``."""
    for candidate in (os.environ.get("LANGMEM_CHROMIUM"), "/usr/bin/chromium"):
        if candidate and Path(candidate).exists():
            return candidate
    return shutil.which("chromium") or shutil.which("chromium-browser")


def seed(workspace: Path) -> None:
    """A few memories of alice (one core), one pending save, one of bob's, one in the
    default scope (written as the Python API writes when no scope is named)."""
    settings = Settings(workspace=workspace)
    settings.embeddings.provider = "fake"
    with Memory(settings=settings) as m:
        m.add("Tea with the neighbours on Sundays")
        m.add_many(
            [
                "Alice likes green tea",
                "主人喜欢吃拉面",
                "Alice's sister Mei is vegetarian",
                "Alice works at a bakery in Hangzhou",
            ],
            scope="user_alice",
        )
        m.add("Always answer Alice in Chinese", scope="user_alice", category="core")
        m.save("Alice's cat is called Miso", scope="user_alice")
        m.add("Bob's private note", scope="user_bob")


@pytest.fixture
def browser() -> Iterator[Any]:
    playwright_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (the `test` extra)"
    )
    executable = find_chromium()
    if executable is None:
        pytest.skip("no Chromium found (apt-get install chromium, or set LANGMEM_CHROMIUM)")
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, headless=True)
        yield b
        b.close()


@pytest.fixture
def admin_server(tmp_path: Path) -> Iterator[str]:
    from _serve_helpers import langmem_serve

    seed(tmp_path / "ws")
    with langmem_serve(tmp_path, "--scripted", env=ENV) as (url, _log):
        yield url


def test_admin_in_a_real_browser(browser: Any, admin_server: str, tmp_path: Path) -> None:
    shots = tmp_path / "screenshots"
    shots.mkdir()
    page = browser.new_page(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    page.on("dialog", lambda dialog: dialog.accept())
    base = admin_server

    def shot(name: str) -> None:
        page.screenshot(path=str(shots / f"{name}.png"), full_page=True)

    def flash() -> str:
        return str(page.inner_text("#flash"))

    # who: no authentication on 127.0.0.1; not signed in, the default scope is shown
    page.goto(f"{base}/admin/")
    assert page.url.endswith("/admin/memories")
    assert page.inner_text("#who") == "this computer (not signed in)"
    assert page.input_value("#scope-select") == "main"
    texts = page.locator("#memories td.text").all_inner_texts()
    assert texts == ["Tea with the neighbours on Sundays"]
    # then a user id is chosen
    page.click("header >> text=Act as user")
    page.wait_for_url("**/admin/login")
    shot("login")
    page.fill("#user", "alice")
    page.keyboard.press("Enter")
    page.wait_for_url("**/admin/memories")
    assert page.inner_text("#who") == "alice"
    texts = page.locator("#memories td.text").all_inner_texts()
    assert "Alice likes green tea" in texts and "Bob's private note" not in texts
    shot("memories")
    # keyboard: the first Tab lands on the skip link
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip"

    # add with a category
    page.fill("#add-text", "Alice drinks oolong every morning")
    page.select_option("#add-category", "fact")
    page.click("#add-form button[type=submit]")
    assert flash() == "Memory added."
    assert (
        "Alice drinks oolong every morning" in page.locator("#memories td.text").all_inner_texts()
    )

    # edit a row: new text (a new version) and category; the history shows the chain
    page.locator("#memories tr", has_text="Alice likes green tea").locator("a.edit-link").click()
    page.fill("#edit-text", "Alice likes green tea, no sugar")
    page.select_option("#edit-category", "core")
    page.click("#edit-form button[type=submit]")
    assert flash() == "Saved."
    history = page.inner_text("#history")
    assert "superseded" in history and "Alice likes green tea" in history
    assert page.input_value("#edit-category") == "core"
    shot("memory-edit")

    # confirm a pending item
    page.click("nav >> text=Pending")
    row = page.locator("#pending-items tr", has_text="Alice's cat is called Miso")
    row.locator("button.confirm").click()
    assert flash() == "Confirmed 1 pending item(s)."
    shot("pending")
    page.goto(f"{base}/admin/memories?q=Miso")
    assert page.locator("#memories td.text").all_inner_texts() == ["Alice's cat is called Miso"]

    # search: every score stage of hit.debug is on the page
    page.click("nav >> text=Search")
    page.fill("#search-q", "拉面")
    page.keyboard.press("Enter")
    first = page.locator("#hits li.hit").first
    assert "主人喜欢吃拉面" in first.inner_text()
    reasons = first.locator(".why th").all_inner_texts()
    assert reasons and all(name.strip() for name in reasons), reasons
    first.locator("details summary").click()  # the numbers, folded under the reasons
    stages = dict(
        zip(
            first.locator(".stages th").all_inner_texts(),
            first.locator(".stages td").all_inner_texts(),
            strict=True,
        )
    )
    assert len(stages) >= 3 and all(float(v) == float(v) for v in stages.values()), stages
    shot("search")

    # bulk delete by ids: everything on the page selected; core memories are skipped
    page.goto(f"{base}/admin/memories")
    total = page.locator("#memories tbody tr").count()
    cores = page.locator("#memories tr.cat-core").count()
    assert cores == 2
    page.check("#select-all")
    page.click("#delete-selected")
    assert flash() == f"Deleted {total - cores} memories; skipped {cores} core/system memories."
    left = page.locator("#memories td.text").all_inner_texts()
    assert sorted(left) == ["Alice likes green tea, no sugar", "Always answer Alice in Chinese"]
    shot("memories-after-bulk-delete")

    # the other pages
    page.click("nav >> text=Profile")
    assert page.locator("#safety-fields tr.safety").count() == len(SAFETY_FIELDS)
    shot("profile")
    page.click("nav >> text=Maintenance")
    page.click("#run-maintenance")
    assert page.locator("#summary").is_visible()
    shot("maintenance")

    # stats and exports
    page.click("nav >> text=Statistics")
    assert page.locator("figure svg").count() == 2
    shot("stats")
    with page.expect_download() as dl:
        page.click("#export-json")
    exported = json.loads(Path(dl.value.path()).read_text(encoding="utf-8"))
    assert sorted(e["text"] for e in exported) == sorted(left)
    with page.expect_download() as dl:
        page.click("#export-md")
    md = Path(dl.value.path()).read_text(encoding="utf-8")
    assert "## Core" in md and "Always answer Alice in Chinese" in md

    # Chinese
    page.click("#lang-switch")
    assert page.locator("html").get_attribute("lang") == "zh-CN"
    assert "统计" in page.inner_text("h1")
    page.goto(f"{base}/admin/memories")
    assert page.locator("#memories td.category").all_inner_texts() == ["核心", "核心"]
    shot("memories-zh")

    # a phone: every page fits 420 px without scrolling sideways
    page.set_viewport_size({"width": 420, "height": 900})
    for lang in ("zh", "en"):
        for path in ("memories", "memories?scope=main", "pending", "profile", "stats"):
            page.goto(f"{base}/admin/{path}")
            width = page.evaluate("document.scrollingElement.scrollWidth")
            assert width <= 420, (lang, path, width)
        if lang == "zh":
            page.click("#lang-switch")
    page.goto(f"{base}/admin/memories")
    shot("memories-narrow")
    for name in ("login", "memories", "memory-edit", "pending", "search", "profile", "stats"):
        assert (shots / f"{name}.png").stat().st_size > 5000, name
