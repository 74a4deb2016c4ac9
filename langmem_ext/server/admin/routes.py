"""The ``/admin`` routes: pages, forms, exports (see :mod:`langmem_ext.server.admin`).

Who and what:

* **The caller** is decided like ``/agent`` and ``/memory`` decide it: with
  ``authenticate=`` its result alone; without it the user id chosen on
  ``/admin/login`` (a cookie) is trusted, and only clients on a loopback address
  are answered (:func:`~langmem_ext.server.admin.refusal.refused_router` replaces the admin when the server
  listens elsewhere without authentication).
* **The scope** is :func:`~langmem_ext.server.app.resolve_caller`'s: the caller's own
  scope (``scope_for_user(user_id)``, as the server and the LangChain surfaces name
  it), or a shared scope the server lists (``?scope=``). Without ``authenticate=``
  and before a user id is chosen, the caller is the person at this computer and sees
  the scope the command line and the Python API use when none is named (the
  server's ``default_scope``, else ``settings.default_scope``: ``main``); that scope
  stays selectable after choosing a user id. Ids of another scope are unknown ids:
  ``404``, nothing changed.
* **CSRF**: every ``POST`` form carries ``csrf``, an HMAC of the caller under a key
  made when the app is created; a missing or wrong token gets ``403``.
* **Errors** are HTML pages in the reader's language and words
  (:class:`AdminProblem`: a label of ``labels.json``), never an exception's text;
  an unknown ``/admin`` address gets the admin's ``404`` page.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import inspect
import json
import logging
import re
import secrets
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import parse_qs, quote, unquote, urlencode

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import (
    FileResponse,
    HTMLResponse,
    RedirectResponse,
    Response,
)
from jinja2 import Environment, FileSystemLoader, select_autoescape

from langmem_ext.core.config import CATEGORIES
from langmem_ext.core.errors import (
    EmptyTextError,
    EntrySupersededError,
    InvalidCategoryError,
    InvalidInputError,
    InvalidScopeError,
    LangmemError,
    LineBreakError,
    NoiseTextError,
    NotFoundError,
    PendingAlreadyResolvedError,
    PendingExpiredError,
    PendingNotFoundError,
    PendingStateError,
    TextTooLongError,
)
from langmem_ext.memory import Memory, MemoryEntry, PendingItem
from langmem_ext.memory.profile import (
    IDENTITY_FIELDS,
    LIST_FIELDS,
    PREFERENCE_PREFIX,
    SAFETY_FIELDS,
    FieldOp,
    Profile,
)
from langmem_ext.memory.scoping import check_scope, scope_for_user
from langmem_ext.memory.types import PAGE_SORTS
from langmem_ext.server.admin.charts import bar_chart, histogram_bars
from langmem_ext.server.admin.i18n import LANGS, t, value
from langmem_ext.server.admin.refusal import refused_router

if TYPE_CHECKING:
    from langmem_ext.server.callers import Authenticate, Caller, ServingState

T = TypeVar("T")
logger = logging.getLogger(__name__)

PREFIX = "/admin"
USER_COOKIE = "langmem_admin_user"
LANG_COOKIE = "langmem_admin_lang"
LOGIN_COOKIE = "langmem_admin_login"
"""The sign-in form's nonce (its token is an HMAC of it)."""
PER_PAGE = 50
MAX_PER_PAGE = 500
PROTECTED = frozenset({"core", "system"})
"""Categories a bulk delete skips."""
_LOCAL_CLIENTS = {"127.0.0.1", "::1", "localhost", "testclient"}
"""Client hosts answered without ``authenticate=`` (``testclient``: Starlette's in-process client)."""
_HERE = Path(__file__).parent
_STATIC = {"admin.css": "text/css", "admin.js": "text/javascript"}
_ID_SEPARATORS = re.compile(r"[\s,，、;；]+")
"""What separates the ids of a pasted list (commas, spaces, new lines ...)."""
_REFUSALS: tuple[tuple[type[LangmemError], int, str], ...] = (
    (EmptyTextError, 400, "err_empty"),
    (TextTooLongError, 400, "err_too_long"),
    (NoiseTextError, 400, "err_noise"),
    (InvalidCategoryError, 400, "err_category"),
    (PendingNotFoundError, 404, "err_no_pending"),
    (NotFoundError, 404, "err_no_memory"),
    (EntrySupersededError, 409, "err_superseded"),
    (PendingExpiredError, 409, "err_expired"),
    (PendingAlreadyResolvedError, 409, "err_resolved"),
    (PendingStateError, 409, "err_resolved"),
    (LineBreakError, 400, "err_line_break"),
    (InvalidInputError, 400, "err_invalid"),
)
"""How the admin words the memory service's errors: ``(type, status, label)``, the
first matching type wins."""


class AdminProblem(Exception):
    """A request the admin refuses: an HTML page with ``status`` saying why in the
    reader's language (the label ``key`` of ``labels.json``, formatted with ``values``)."""

    def __init__(self, status: int, key: str, **values: object) -> None:
        super().__init__(t("en", key, **values))
        self.status = status
        self.key = key
        self.values = values


class _Admin:
    """What every route shares: the serving state, the trust rules, templates, the CSRF key."""

    def __init__(self, state: ServingState, authenticate: Authenticate | None) -> None:
        self.state = state
        self.authenticate = authenticate
        self.key = secrets.token_bytes(32)
        self.local_scope: str | None = None
        """Scope of the person at this computer before a user id is chosen (no
        ``authenticate=``): the one the command line and the Python API use."""
        self.shared = state.shared_scopes
        if authenticate is None:
            self.local_scope = state.default_scope or check_scope(
                state.memory.settings.default_scope
            )
            self.shared = state.shared_scopes | {self.local_scope}
        self.env = Environment(
            loader=FileSystemLoader(_HERE / "templates"),
            autoescape=select_autoescape(["html"]),
            trim_blocks=True,
            lstrip_blocks=True,
        )

    @property
    def memory(self) -> Memory:
        return self.state.memory

    async def user(self, request: Request) -> str | None:
        """The caller's user id (``None``: not chosen yet, without authentication)."""
        if self.authenticate is not None:
            found = self.authenticate(request)
            who = await found if inspect.isawaitable(found) else found
            if not who:
                raise AdminProblem(401, "err_not_signed_in")
            return str(who)
        host = request.client.host if request.client else ""
        if host not in _LOCAL_CLIENTS:
            raise AdminProblem(403, "err_loopback")
        return unquote(request.cookies.get(USER_COOKIE, "")) or None

    async def caller(self, request: Request) -> Caller:
        """The caller and its scope (``?scope=``: a shared scope), or a refusal."""
        from langmem_ext.server.callers import resolve_caller

        user = await self.user(request)
        wanted = request.query_params.get("scope") or None
        try:
            return resolve_caller(
                user, wanted, shared_scopes=self.shared, default_scope=self.local_scope
            )
        except PermissionError as e:
            if wanted is None:
                raise AdminProblem(401, "err_not_signed_in") from e
            raise AdminProblem(403, "err_scope_forbidden", scope=wanted) from e
        except InvalidScopeError as e:
            raise AdminProblem(400, "err_bad_scope", scope=wanted or user or "") from e

    def csrf(self, caller: Caller) -> str:
        """The CSRF token of a caller's forms (an HMAC of who it is)."""
        msg = f"csrf|{caller.user_id or ''}|{caller.owner}".encode()
        return hmac.new(self.key, msg, hashlib.sha256).hexdigest()

    def login_token(self, nonce: str) -> str:
        """The token of the sign-in form, bound to the browser's sign-in cookie."""
        return hmac.new(self.key, f"login|{nonce}".encode(), hashlib.sha256).hexdigest()

    async def form(self, request: Request, caller: Caller) -> dict[str, list[str]]:
        """The posted form (URL-encoded), after checking its CSRF token."""
        body = (await request.body()).decode("utf-8", errors="replace")
        data = parse_qs(body, keep_blank_values=True)
        sent = (data.get("csrf") or [""])[0]
        if not hmac.compare_digest(sent.encode(), self.csrf(caller).encode()):
            raise AdminProblem(403, "err_csrf")
        return data

    def scopes(self, caller: Caller) -> list[str]:
        """The scopes the caller may open: its own, then the shared ones."""
        own = scope_for_user(caller.user_id) if caller.user_id else caller.owner
        return [own, *sorted(s for s in self.shared if s != own)]

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """A ``Memory`` call in a worker thread; its errors as refusals in words."""
        try:
            return await asyncio.to_thread(fn, *args, **kwargs)
        except LangmemError as e:
            raise self.refusal(e) from e

    def refusal(self, error: LangmemError) -> AdminProblem:
        """The page saying why the memory service refused (see ``_REFUSALS``)."""
        for kind, status, key in _REFUSALS:
            if isinstance(error, kind):
                return AdminProblem(status, key, limit=self.memory.settings.max_text_chars)
        logger.warning("admin: the memory service refused: %s", error)
        return AdminProblem(500, "err_failed")

    def page(self, request: Request, caller: Caller | None, name: str, **ctx: Any) -> HTMLResponse:
        """Render a template with what every page shows."""
        lang = lang_of(request)
        scope = caller.scope if caller else ""

        def url(path: str, **params: Any) -> str:
            query = {k: v for k, v in params.items() if v not in (None, "")}
            if caller is not None and scope != caller.owner:
                query.setdefault("scope", scope)
            return PREFIX + path + ("?" + urlencode(query, doseq=True) if query else "")

        def tr(key: str, **values: object) -> str:
            return t(lang, key, **values)

        def words(kind: str, raw: str) -> str:
            return value(lang, kind, raw)

        def field_label(field: str) -> str:
            if field.startswith(PREFERENCE_PREFIX):
                return t(lang, "preference", name=field.removeprefix(PREFERENCE_PREFIX))
            return value(lang, "field", field)

        here = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        html = self.env.get_template(name).render(
            t=tr,
            v=words,
            field_label=field_label,
            url=url,
            lang=lang,
            other_lang="en" if lang == "zh" else "zh",
            here=here,
            caller=caller,
            scope=scope,
            scopes=self.scopes(caller) if caller else [],
            csrf=self.csrf(caller) if caller else "",
            categories=CATEGORIES,
            login=self.authenticate is None,
            local_scope=self.local_scope,
            done=dict(request.query_params),
            **ctx,
        )
        return HTMLResponse(html, status_code=ctx.get("status", 200))


def lang_of(request: Request) -> str:
    """The UI language: the cookie set by the switch, else the browser's first choice."""
    chosen = request.cookies.get(LANG_COOKIE)
    if chosen in LANGS:
        return chosen
    accept = request.headers.get("accept-language", "")
    return "zh" if accept.lower().startswith("zh") else "en"


def _one(form: Mapping[str, list[str]], key: str, default: str = "") -> str:
    values = form.get(key) or [default]
    return values[0].strip()


def _whole(raw: str, default: int, problem: str) -> int:
    """A whole number from a query parameter (``default`` when empty), else a refusal."""
    if not raw.strip():
        return default
    try:
        return int(raw)
    except ValueError:
        raise AdminProblem(400, problem) from None


def _changes(items: list[PendingItem], profile: Profile | None) -> dict[str, dict[str, Any]]:
    """What each pending profile change does: ``{pending id: {field, before, after}}``
    (``before``: the field now; ``after``: once confirmed)."""
    out: dict[str, dict[str, Any]] = {}
    for item in items:
        if item.target != "profile" or profile is None:
            continue
        try:
            op = FieldOp.from_pending(item.text)
        except ValueError:  # not a change this version reads (InvalidInputError): its text
            continue
        before, after = op.before_after(profile)
        out[item.id] = {"field": op.field, "before": before, "after": after}
    return out


def _back(path: str, caller: Caller, **params: Any) -> RedirectResponse:
    """``303`` to an admin page of the same scope, with what was done in the query."""
    query = {k: v for k, v in params.items() if v not in (None, "")}
    if caller.scope != caller.owner:
        query["scope"] = caller.scope
    return RedirectResponse(
        PREFIX + path + ("?" + urlencode(query) if query else ""), status_code=303
    )


def _markdown(entries: list[MemoryEntry], scope: str) -> str:
    """The export as Markdown: one section per category, one bullet per memory."""
    lines = [f"# Memories of {scope}", "", f"Exported {datetime.now(UTC):%Y-%m-%d %H:%M} UTC.", ""]
    for cat in CATEGORIES:
        rows = [e for e in entries if e.category == cat]
        if not rows:
            continue
        lines += [f"## {cat.capitalize()}", ""]
        lines += [
            f"- {e.text} ^{e.id} (importance {e.importance:.2f}, "
            f"{e.created_at:%Y-%m-%d}, {e.source}{', verified' if e.verified else ''})"
            for e in rows
        ]
        lines.append("")
    return "\n".join(lines)


def _charts(spread: dict[str, Any], lang: str) -> dict[str, str]:
    """The stats page's two scope charts: importance histogram, memories added per day
    (from :meth:`Memory.stats <langmem_ext.Memory.stats>`, counted without reading a
    memory)."""
    hist = histogram_bars(spread["importance_histogram"])
    daily = [
        (f"{date.fromisoformat(d):%m-%d}", float(n)) for d, n in spread["added_per_day"].items()
    ]
    return {
        "histogram": bar_chart(hist, title=t(lang, "histogram")),
        "per_day": bar_chart(daily, title=t(lang, "per_day"), label_every=5),
    }


def _counts(stats: dict[str, Any]) -> dict[str, Any]:
    """A scope's current memories per category, their total, and its open pending items."""
    return {
        "by_category": {c: stats["by_category"].get(c, 0) for c in CATEGORIES},
        "entries": stats["entries"],
        "pending": stats["pending"],
    }


def admin_router(state: ServingState, authenticate: Authenticate | None) -> APIRouter:
    """The ``/admin`` pages for a served memory (see the module docstring).

    Args:
        state: The app's serving state (memory, shared scopes, default scope).
        authenticate: The app's ``authenticate=`` (``None``: trust the chosen user id,
            loopback clients only).

    Returns:
        A router to include in the app; install its error pages with
        :func:`install_error_pages`.
    """
    admin = _Admin(state, authenticate)
    router = APIRouter(prefix=PREFIX, include_in_schema=False)

    @router.get("")
    @router.get("/")
    async def home() -> RedirectResponse:
        return RedirectResponse(PREFIX + "/memories", status_code=303)

    @router.get("/static/{name}")
    async def static(name: str) -> FileResponse:
        if name not in _STATIC:
            raise AdminProblem(404, "err_no_page")
        return FileResponse(_HERE / "static" / name, media_type=_STATIC[name])

    @router.get("/lang")
    async def switch_lang(to: str = "en", next: str = PREFIX) -> RedirectResponse:
        target = next if next.startswith(PREFIX) and "//" not in next else PREFIX
        response = RedirectResponse(target, status_code=303)
        response.set_cookie(LANG_COOKIE, to if to in LANGS else "en", samesite="strict")
        return response

    @router.get("/login", response_model=None)
    async def login_page(request: Request) -> Response:
        if authenticate is not None:
            return RedirectResponse(PREFIX + "/memories", status_code=303)
        await admin.user(request)  # loopback only
        nonce = request.cookies.get(LOGIN_COOKIE) or secrets.token_urlsafe(16)
        response = admin.page(request, None, "login.html", login_token=admin.login_token(nonce))
        response.set_cookie(LOGIN_COOKIE, nonce, samesite="strict", httponly=True)
        return response

    @router.post("/login", response_model=None)
    async def login(request: Request) -> Response:
        """Sign in as a user id (no ``authenticate=``, loopback only): a form posted from
        the login page, with the token that page gave (a GET never changes who is in)."""
        if authenticate is not None:
            return RedirectResponse(PREFIX + "/memories", status_code=303)
        await admin.user(request)  # loopback only
        body = (await request.body()).decode("utf-8", errors="replace")
        data = parse_qs(body, keep_blank_values=True)
        sent = (data.get("token") or [""])[0]
        nonce = request.cookies.get(LOGIN_COOKIE, "")
        if not nonce or not hmac.compare_digest(sent, admin.login_token(nonce)):
            raise AdminProblem(403, "err_csrf")
        user = (data.get("user") or [""])[0].strip()
        response = RedirectResponse(PREFIX + "/memories", status_code=303)
        if user:  # quoted: a cookie holds Latin-1 only, a user id may be 小明
            response.set_cookie(USER_COOKIE, quote(user, safe=""), samesite="strict", httponly=True)
        else:  # no user id: back to this computer's default scope
            response.delete_cookie(USER_COOKIE, samesite="strict", httponly=True)
        return response

    # -- memories ----------------------------------------------------------------------

    @router.get("/memories")
    async def memories(
        request: Request,
        category: str = "",
        q: str = "",
        sort: str = "created_at",
        order: str = "desc",
        page: str = "",
        per: str = "",
    ) -> HTMLResponse:
        caller = await admin.caller(request)
        size = min(max(_whole(per, PER_PAGE, "err_page_size"), 1), MAX_PER_PAGE)
        number = max(_whole(page, 1, "err_page_number"), 1)
        sort = sort if sort in PAGE_SORTS else "created_at"
        query = dict(
            scope=caller.scope,
            category=category if category in CATEGORIES else None,
            text=q or None,
            sort=sort,
            descending=order == "desc",
            limit=size,
        )
        result = await admin.run(admin.memory.list_page, offset=(number - 1) * size, **query)
        if number > 1 and not result.entries and result.total:  # past the end: the last page
            number = -(-result.total // size)
            result = await admin.run(admin.memory.list_page, offset=(number - 1) * size, **query)
        view = dict(result=result, category=category, q=q, sort=sort, order=order, per=size)
        view.update(page_no=number, pages=max(1, -(-result.total // size)), sorts=PAGE_SORTS)
        return admin.page(request, caller, "memories.html", **view)

    @router.get("/memories/{entry_id}")
    async def memory_page(request: Request, entry_id: str) -> HTMLResponse:
        caller = await admin.caller(request)
        entry = await admin.run(admin.memory.get_entry, entry_id, scope=caller.scope)
        history = await admin.run(admin.memory.history, entry_id, scope=caller.scope)
        current: str | None = entry.id
        if not entry.current:  # an old version: only a way to its current one
            newest = history[-1]["id"]  # the chain, oldest first
            try:
                found = await asyncio.to_thread(admin.memory.get_entry, newest, scope=caller.scope)
                current = found.id if found.current else None
            except NotFoundError:  # the newest version was deleted
                current = None
        return admin.page(
            request, caller, "memory.html", entry=entry, history=history, current_id=current
        )

    @router.post("/memories/add")
    async def add(request: Request) -> RedirectResponse:
        caller = await admin.caller(request)
        form = await admin.form(request, caller)
        category = _one(form, "category", "fact")
        new_id = await admin.run(
            admin.memory.add,
            _one(form, "text"),
            scope=caller.scope,
            category=category,
            source="user",
        )
        return _back("/memories", caller, done="added", id=new_id)

    @router.post("/memories/{entry_id}/edit")
    async def edit(request: Request, entry_id: str) -> RedirectResponse:
        caller = await admin.caller(request)
        form = await admin.form(request, caller)
        entry = await admin.run(admin.memory.get_entry, entry_id, scope=caller.scope)
        if not entry.current:
            raise AdminProblem(409, "err_superseded")
        text, category = _one(form, "text", entry.text), _one(form, "category", entry.category)
        current = entry.id
        if text != entry.text:
            current = (await admin.run(admin.memory.update, entry.id, text, scope=caller.scope)).id
        if category != entry.category:
            await admin.run(admin.memory.set_category, current, category, scope=caller.scope)
        return _back(f"/memories/{current}", caller, done="saved")

    @router.post("/memories/{entry_id}/delete")
    async def delete(request: Request, entry_id: str) -> RedirectResponse:
        caller = await admin.caller(request)
        await admin.form(request, caller)
        entry = await admin.run(admin.memory.get_entry, entry_id, scope=caller.scope)
        if not entry.current:
            raise AdminProblem(409, "err_superseded")
        await admin.run(admin.memory.delete, entry.id, scope=caller.scope)
        return _back("/memories", caller, done="deleted")

    @router.post("/bulk-delete")
    async def bulk_delete(request: Request) -> RedirectResponse:
        caller = await admin.caller(request)
        form = await admin.form(request, caller)
        mode = _one(form, "mode")
        if mode == "filter":
            category = _one(form, "category")
            picked = await admin.run(
                admin.memory.list_page,
                scope=caller.scope,
                category=category if category in CATEGORIES else None,
                text=_one(form, "q") or None,
                limit=None,
            )
            entries = picked.entries
        elif mode == "ids":
            listed = [*form.get("ids", []), *form.get("id_list", [])]
            ids = [i for text in listed for i in _ID_SEPARATORS.split(text) if i]
            if not ids:
                raise AdminProblem(400, "err_bulk_empty")
            entries = []  # every id is checked before anything is deleted: one bad id refuses all
            for i in dict.fromkeys(ids):
                try:
                    entry = await asyncio.to_thread(admin.memory.get_entry, i, scope=caller.scope)
                except NotFoundError:
                    raise AdminProblem(404, "err_bulk_unknown", id=i) from None
                if not entry.current:
                    raise AdminProblem(409, "err_bulk_old", id=i)
                entries.append(entry)
        else:
            raise AdminProblem(400, "err_bulk_mode", mode=mode)
        skipped = [e for e in entries if e.category in PROTECTED]
        doomed = [e for e in entries if e.category not in PROTECTED]
        for e in doomed:
            await admin.run(admin.memory.delete, e.id, scope=caller.scope)
        return _back("/memories", caller, done="bulk", deleted=len(doomed), skipped=len(skipped))

    # -- pending -----------------------------------------------------------------------

    @router.get("/pending")
    async def pending(request: Request) -> HTMLResponse:
        caller = await admin.caller(request)
        items = await admin.run(admin.memory.list_pending, scope=caller.scope)
        prof = None
        if any(i.target == "profile" for i in items):
            prof = await admin.run(admin.memory.profile, scope=caller.scope)
        changes = _changes(items, prof)
        return admin.page(request, caller, "pending.html", items=items, changes=changes)

    @router.post("/pending/all")
    async def pending_all(request: Request) -> RedirectResponse:
        caller = await admin.caller(request)
        form = await admin.form(request, caller)
        action = _one(form, "action")
        if action not in ("confirm", "reject"):
            raise AdminProblem(400, "err_pending_action")
        fn = admin.memory.confirm if action == "confirm" else admin.memory.reject
        items = await admin.run(admin.memory.list_pending, scope=caller.scope)
        for item in items:
            await admin.run(fn, item.id, scope=caller.scope)
        return _back("/pending", caller, done=f"{action}ed", n=len(items))

    @router.post("/pending/{pending_id}/{action}")
    async def pending_one(request: Request, pending_id: str, action: str) -> RedirectResponse:
        caller = await admin.caller(request)
        await admin.form(request, caller)
        if action not in ("confirm", "reject"):
            raise AdminProblem(404, "err_no_page")
        fn = admin.memory.confirm if action == "confirm" else admin.memory.reject
        await admin.run(fn, pending_id, scope=caller.scope)
        return _back("/pending", caller, done=f"{action}ed", n=1)

    # -- search, profile ---------------------------------------------------------------

    @router.get("/search")
    async def search(request: Request, q: str = "") -> HTMLResponse:
        caller = await admin.caller(request)
        hits = await admin.run(admin.memory.search, q, scope=caller.scope, k=20) if q else []
        return admin.page(request, caller, "search.html", q=q, hits=hits)

    @router.get("/profile")
    async def profile(request: Request) -> HTMLResponse:
        caller = await admin.caller(request)
        prof = await admin.run(admin.memory.profile, scope=caller.scope)
        items = await admin.run(admin.memory.list_pending, scope=caller.scope)
        proposals = [i for i in items if i.target == "profile"]
        return admin.page(
            request,
            caller,
            "profile.html",
            profile=prof,
            identity=IDENTITY_FIELDS,
            safety=SAFETY_FIELDS,
            list_fields=LIST_FIELDS,
            proposals=proposals,
            changes=_changes(proposals, prof),
        )

    @router.post("/profile/field")
    async def profile_field(request: Request) -> RedirectResponse:
        caller = await admin.caller(request)
        form = await admin.form(request, caller)
        field, value = _one(form, "field"), _one(form, "value")
        if field not in IDENTITY_FIELDS + SAFETY_FIELDS:
            raise AdminProblem(400, "err_unknown_field", field=field)
        safety = field in SAFETY_FIELDS
        # a list field's text is split into items by the profile's own separators
        data = value if field in LIST_FIELDS else value or None
        # a safety-critical change is proposed, as the model's are: it waits for confirmation
        update = await admin.run(
            admin.memory.upsert_facts,
            {field: data},
            scope=caller.scope,
            source="agent" if safety else "app",
            replace=True,
        )
        done = "proposed" if update.pending else "profile"
        return _back("/profile", caller, done=done, n=len(update.pending))

    @router.post("/profile/preference")
    async def profile_preference(request: Request) -> RedirectResponse:
        caller = await admin.caller(request)
        form = await admin.form(request, caller)
        key = _one(form, "key")
        if not key:
            raise AdminProblem(400, "err_pref_key")
        try:
            await asyncio.to_thread(
                admin.memory.upsert_preferences,
                {key: _one(form, "value") or None},
                scope=caller.scope,
            )
        except InvalidInputError as e:  # the key itself: the only value checked here
            raise AdminProblem(400, "err_pref_key") from e
        return _back("/profile", caller, done="profile")

    # -- stats, export, maintenance ----------------------------------------------------

    @router.get("/stats")
    async def stats(request: Request) -> HTMLResponse:
        caller = await admin.caller(request)
        stats = {
            s: (await admin.run(admin.memory.stats, scope=s))["scopes"][s]
            for s in admin.scopes(caller)
        }
        rows = {s: _counts(st) for s, st in stats.items()}
        own = stats[caller.scope]  # the caller's scope is one of its scopes
        charts = _charts(own, lang_of(request))
        return admin.page(
            request, caller, "stats.html", rows=rows, charts=charts, total=own["entries"]
        )

    @router.get("/export.{fmt}")
    async def export(request: Request, fmt: str) -> Response:
        caller = await admin.caller(request)
        if fmt == "json":
            data = await admin.run(admin.memory.export, scope=caller.scope)
            body, media = json.dumps(data, ensure_ascii=False, indent=1), "application/json"
        elif fmt == "md":
            entries = await admin.run(admin.memory.list, scope=caller.scope)
            body, media = _markdown(entries, caller.scope), "text/markdown; charset=utf-8"
        else:
            raise AdminProblem(404, "err_export_format")
        name = f"memories-{caller.scope}.{fmt}"
        disposition = {"Content-Disposition": f'attachment; filename="{name}"'}
        return Response(body, media_type=media, headers=disposition)

    @router.get("/maintenance")
    async def maintenance(request: Request) -> HTMLResponse:
        caller = await admin.caller(request)
        return admin.page(request, caller, "maintenance.html", report=None)

    @router.post("/maintenance")
    async def run_maintenance(request: Request) -> HTMLResponse:
        caller = await admin.caller(request)
        await admin.form(request, caller)
        report = await admin.run(admin.memory.maintain, scope=caller.scope)
        return admin.page(request, caller, "maintenance.html", report=report)

    @router.api_route("/{path:path}", methods=["GET", "POST"])
    async def unknown(path: str) -> None:
        """Any other ``/admin`` address: the admin's own ``404`` page."""
        raise AdminProblem(404, "err_no_page")

    router.admin = admin  # type: ignore[attr-defined]
    return router


def install_error_pages(app: FastAPI, router: APIRouter) -> None:
    """Answer the admin's refusals with HTML pages in the reader's language."""
    admin: _Admin = router.admin  # type: ignore[attr-defined]

    async def problem(request: Request, exc: Exception) -> HTMLResponse:
        assert isinstance(exc, AdminProblem)
        message = t(lang_of(request), exc.key, **exc.values)
        return admin.page(request, None, "error.html", status=exc.status, message=message)

    app.add_exception_handler(AdminProblem, problem)


def mount_admin(
    app: FastAPI,
    state: ServingState,
    authenticate: Authenticate | None,
    *,
    refused: str | None = None,
) -> None:
    """Serve ``/admin`` on ``app`` (or, when ``refused`` says why not, a ``403`` there)."""
    if refused is not None:
        app.include_router(refused_router(refused))
        return
    router = admin_router(state, authenticate)
    app.include_router(router)
    install_error_pages(app, router)


__all__ = [
    "PREFIX",
    "AdminProblem",
    "admin_router",
    "install_error_pages",
    "lang_of",
    "mount_admin",
]
