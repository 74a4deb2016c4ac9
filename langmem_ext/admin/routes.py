"""The ``/admin`` routes: pages, forms, exports (see :mod:`langmem_ext.admin`).

Who and what:

* **The caller** is decided like ``/agent`` and ``/memory`` decide it: with
  ``authenticate=`` its result alone; without it the user id chosen on
  ``/admin/login`` (a cookie) is trusted, and only clients on a loopback address
  are answered (:func:`~langmem_ext.admin.refusal.refused_router` replaces the admin when the server
  listens elsewhere without authentication).
* **The scope** is :func:`~langmem_ext.serving.resolve_caller`'s: the caller's own
  scope, or a shared scope the server lists (``?scope=``). Ids of another scope are
  unknown ids: ``404``, nothing changed.
* **CSRF**: every ``POST`` form carries ``csrf``, an HMAC of the caller under a key
  made when the app is created; a missing or wrong token gets ``403``.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import inspect
import json
import secrets
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import parse_qs, urlencode

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import (
    FileResponse,
    HTMLResponse,
    RedirectResponse,
    Response,
)
from jinja2 import Environment, FileSystemLoader, select_autoescape

from langmem_ext._scoping import scope_for_user
from langmem_ext.admin.charts import bar_chart
from langmem_ext.admin.i18n import LANGS, t
from langmem_ext.admin.refusal import refused_router
from langmem_ext.config import CATEGORIES
from langmem_ext.errors import LangmemError, NotFoundError
from langmem_ext.memory import Memory, MemoryEntry
from langmem_ext.memory.models import PAGE_SORTS
from langmem_ext.memory.profile import IDENTITY_FIELDS, LIST_FIELDS, SAFETY_FIELDS

if TYPE_CHECKING:
    from langmem_ext._callers import Authenticate, Caller, ServingState

T = TypeVar("T")

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


class AdminProblem(Exception):
    """A request the admin refuses: shown as an HTML page with ``status``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class _Admin:
    """What every route shares: the serving state, the trust rules, templates, the CSRF key."""

    def __init__(self, state: ServingState, authenticate: Authenticate | None) -> None:
        self.state = state
        self.authenticate = authenticate
        self.key = secrets.token_bytes(32)
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
                raise AdminProblem(401, "Not authenticated.")
            return str(who)
        host = request.client.host if request.client else ""
        if host not in _LOCAL_CLIENTS:
            raise AdminProblem(
                403,
                "The admin answers only loopback clients when the server has no authenticate=.",
            )
        return request.cookies.get(USER_COOKIE) or None

    async def caller(self, request: Request) -> Caller:
        """The caller and its scope (``?scope=``: a shared scope), or a refusal."""
        from langmem_ext._callers import resolve_caller

        user = await self.user(request)
        try:
            return resolve_caller(
                user,
                request.query_params.get("scope") or None,
                shared_scopes=self.state.shared_scopes,
                default_scope=self.state.default_scope,
            )
        except PermissionError as e:
            if "no user" in str(e) and self.authenticate is None:
                raise _LoginNeeded from e
            raise AdminProblem(401 if "no user" in str(e) else 403, str(e)) from e
        except LangmemError as e:
            raise AdminProblem(422, str(e)) from e

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
            raise AdminProblem(403, "Missing or wrong CSRF token: reload the page and retry.")
        return data

    def scopes(self, caller: Caller) -> list[str]:
        """The scopes the caller may open: its own, then the shared ones."""
        own = scope_for_user(caller.user_id) if caller.user_id else caller.owner
        return [own, *sorted(s for s in self.state.shared_scopes if s != own)]

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """A ``Memory`` call in a worker thread; its errors as refusals."""
        try:
            return await asyncio.to_thread(fn, *args, **kwargs)
        except NotFoundError as e:
            raise AdminProblem(404, str(e)) from e
        except LangmemError as e:
            raise AdminProblem(400, str(e)) from e

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

        here = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        html = self.env.get_template(name).render(
            t=tr,
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
            done=dict(request.query_params),
            **ctx,
        )
        return HTMLResponse(html, status_code=ctx.get("status", 200))


class _LoginNeeded(Exception):
    """No user yet, without authentication: the login page answers."""


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
    tenths = spread["importance_histogram"]
    hist = [(f"{i / 10:.1f}", float(tenths[i])) for i in range(10)]
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
            raise AdminProblem(404, "No such file.")
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
            raise AdminProblem(403, "Missing or wrong sign-in token: reload the page and retry.")
        user = (data.get("user") or [""])[0].strip()
        if not user:
            return RedirectResponse(PREFIX + "/login", status_code=303)
        response = RedirectResponse(PREFIX + "/memories", status_code=303)
        response.set_cookie(USER_COOKIE, user, samesite="strict", httponly=True)
        return response

    # -- memories ----------------------------------------------------------------------

    @router.get("/memories")
    async def memories(
        request: Request,
        category: str = "",
        q: str = "",
        sort: str = "created_at",
        order: str = "desc",
        page: int = 1,
        per: int = PER_PAGE,
    ) -> HTMLResponse:
        caller = await admin.caller(request)
        per = min(max(per, 1), MAX_PER_PAGE)
        page = max(page, 1)
        sort = sort if sort in PAGE_SORTS else "created_at"
        query = dict(
            scope=caller.scope,
            category=category if category in CATEGORIES else None,
            text=q or None,
            sort=sort,
            descending=order == "desc",
            limit=per,
        )
        result = await admin.run(admin.memory.list_page, offset=(page - 1) * per, **query)
        if page > 1 and not result.entries and result.total:  # past the end: the last page
            page = -(-result.total // per)
            result = await admin.run(admin.memory.list_page, offset=(page - 1) * per, **query)
        view = dict(result=result, category=category, q=q, sort=sort, order=order, per=per)
        view.update(page_no=page, pages=max(1, -(-result.total // per)), sorts=PAGE_SORTS)
        return admin.page(request, caller, "memories.html", **view)

    @router.get("/memories/{entry_id}")
    async def memory_page(request: Request, entry_id: str) -> HTMLResponse:
        caller = await admin.caller(request)
        entry = await admin.run(admin.memory.get_entry, entry_id, scope=caller.scope)
        history = await admin.run(admin.memory.history, entry_id, scope=caller.scope)
        return admin.page(request, caller, "memory.html", entry=entry, history=history)

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
        await admin.run(admin.memory.delete, entry_id, scope=caller.scope)
        return _back("/memories", caller, done="deleted")

    @router.post("/bulk-delete")
    async def bulk_delete(request: Request) -> RedirectResponse:
        caller = await admin.caller(request)
        form = await admin.form(request, caller)
        if _one(form, "mode") == "filter":
            category = _one(form, "category")
            picked = await admin.run(
                admin.memory.list_page,
                scope=caller.scope,
                category=category if category in CATEGORIES else None,
                text=_one(form, "q") or None,
                limit=None,
            )
            entries = picked.entries
        else:
            ids = [i.strip() for i in form.get("ids", []) + _one(form, "id_list").split() if i]
            entries = [
                await admin.run(admin.memory.get_entry, i, scope=caller.scope)
                for i in dict.fromkeys(ids)
            ]  # every id is checked before anything is deleted: one unknown id refuses all
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
        return admin.page(request, caller, "pending.html", items=items)

    @router.post("/pending/all")
    async def pending_all(request: Request) -> RedirectResponse:
        caller = await admin.caller(request)
        form = await admin.form(request, caller)
        action = _one(form, "action")
        if action not in ("confirm", "reject"):
            raise AdminProblem(400, "action must be confirm or reject.")
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
            raise AdminProblem(404, "No such action.")
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
        return admin.page(
            request,
            caller,
            "profile.html",
            profile=prof,
            identity=IDENTITY_FIELDS,
            safety=SAFETY_FIELDS,
            list_fields=LIST_FIELDS,
            proposals=[i for i in items if i.target == "profile"],
        )

    @router.post("/profile/field")
    async def profile_field(request: Request) -> RedirectResponse:
        caller = await admin.caller(request)
        form = await admin.form(request, caller)
        field, value = _one(form, "field"), _one(form, "value")
        if field not in IDENTITY_FIELDS + SAFETY_FIELDS:
            raise AdminProblem(400, f"Unknown profile field {field!r}.")
        safety = field in SAFETY_FIELDS
        data: Any = [v for v in value.replace("，", ",").split(",") if v.strip()]
        if field not in LIST_FIELDS:
            data = value or None
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
            raise AdminProblem(400, "A preference needs a key.")
        await admin.run(
            admin.memory.upsert_preferences,
            {key: _one(form, "value") or None},
            scope=caller.scope,
        )
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
            raise AdminProblem(404, "Export formats: json, md.")
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

    router.admin = admin  # type: ignore[attr-defined]
    return router


def install_error_pages(app: FastAPI, router: APIRouter) -> None:
    """Answer the admin's refusals with HTML pages (and a missing user with the login page)."""
    admin: _Admin = router.admin  # type: ignore[attr-defined]

    async def problem(request: Request, exc: Exception) -> HTMLResponse:
        assert isinstance(exc, AdminProblem)
        return admin.page(request, None, "error.html", status=exc.status, message=exc.message)

    async def login(request: Request, exc: Exception) -> RedirectResponse:
        return RedirectResponse(PREFIX + "/login", status_code=303)

    app.add_exception_handler(AdminProblem, problem)
    app.add_exception_handler(_LoginNeeded, login)


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
