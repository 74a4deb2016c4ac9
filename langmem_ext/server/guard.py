"""What the server accepts from a browser: no cross-site writes, no rebound host names.

:class:`RequestGuard` is an ASGI middleware in front of every route of
:func:`~langmem_ext.server.app.create_app`:

- **Cross-site writes.** A state-changing request (``POST``, ``PUT``, ``PATCH``,
  ``DELETE``) is refused (``403``) when the browser says it comes from another site
  (``Sec-Fetch-Site: cross-site``) or its ``Origin`` is not the server's own. Outside
  ``/admin`` (whose forms carry a CSRF token) its body must be
  ``application/json`` (``415`` otherwise): a page of another site can send
  ``text/plain`` or a form without a CORS preflight, never JSON.
- **DNS rebinding.** Without ``authenticate=`` the server trusts the user id a
  client sends, so it answers only requests whose ``Host`` is a loopback name or a
  name the operator allowed (``allowed_hosts``); a page whose name was rebound to
  127.0.0.1 gets ``421``.
- **Sizes.** A request body larger than ``max_body_bytes`` (``max_form_bytes`` for
  the admin's forms) is refused with ``413`` before the application reads any of
  it: the declared ``Content-Length`` is checked first, and a body sent without one
  is counted as it arrives.
- **Headers.** Every response says ``X-Content-Type-Options: nosniff``,
  ``Referrer-Policy: same-origin`` (a same-origin form still sends its ``Origin``)
  and a ``Content-Security-Policy`` that allows the package's own files only (no
  inline script, no framing).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Collection, MutableMapping
from html import escape
from typing import Any
from urllib.parse import urlsplit

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

logger = logging.getLogger(__name__)

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})
"""Host names that always reach this machine only."""
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
"""Methods that change state."""
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        b"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    ),
)
"""Headers every response carries."""


def _host_name(value: str) -> str:
    """The name part of a ``Host`` header (``[::1]:8000`` -> ``[::1]``), lower case."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[: value.find("]") + 1] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class RequestGuard:
    """ASGI middleware refusing cross-site writes and, without authentication, unknown
    host names; adds the security headers to every response.

    Args:
        app: The application to guard.
        check_host: Refuse requests whose ``Host`` is neither loopback nor in
            ``allowed_hosts`` (the server trusts what clients say about themselves).
        allowed_hosts: Extra host names to answer (e.g. the name of this machine).
        json_only_outside: Path prefixes whose writes may use other content types
            (HTML forms with their own CSRF tokens).
        max_body_bytes: Largest body of a request outside those prefixes.
        max_form_bytes: Largest body of a request under them.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        check_host: bool,
        allowed_hosts: Collection[str] = (),
        json_only_outside: Collection[str] = ("/admin",),
        max_body_bytes: int = 1_048_576,
        max_form_bytes: int = 262_144,
    ) -> None:
        self.app = app
        self.max_body = max_body_bytes
        self.max_form = max_form_bytes
        self.check_host = check_host
        self.allowed = LOOPBACK_NAMES | {_host_name(h) for h in allowed_hosts}
        self.forms = tuple(json_only_outside)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        refusal = self._refusal(scope, headers)
        if refusal is not None:
            status, detail = refusal
            await _error(send, status, detail, html=self._wants_html(scope, headers))
            return

        limit = self.max_form if self._is_form_path(scope) else self.max_body
        declared = headers.get("content-length", "").strip()
        html = self._wants_html(scope, headers)
        if declared.isdigit() and int(declared) > limit:
            await _error(send, 413, _too_large(limit), html=html)
            return
        if scope.get("method", "GET").upper() in WRITE_METHODS:
            body = await _read_body(receive, limit)
            if body is None:
                await _error(send, 413, _too_large(limit), html=html)
                return
            receive = _replay(body, receive)

        progress = {"started": False, "ended": False}

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.body" and not message.get("more_body"):
                progress["ended"] = True
            if message["type"] == "http.response.start":
                progress["started"] = True
                names = {k.lower() for k, _ in message.get("headers", [])}
                extra = [(k, v) for k, v in SECURITY_HEADERS if k not in names]
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        except Exception:
            if not progress["started"] or progress["ended"]:
                raise
            # A stream failed after its first bytes (LangServe has sent its error
            # event): end the response instead of breaking the connection.
            logger.exception("%s %s failed while streaming", scope.get("method"), scope["path"])
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    def _refusal(self, scope: Scope, headers: dict[str, str]) -> tuple[int, str] | None:
        host = headers.get("host", "")
        if self.check_host and _host_name(host) not in self.allowed:
            return 421, (
                f"This server answers only {', '.join(sorted(self.allowed))} as its host name "
                f"(got {host[:100]!r}). Add the name to the allowed hosts, or pass "
                "authenticate= so that callers are checked."
            )
        if scope.get("method", "GET").upper() not in WRITE_METHODS:
            return None
        if headers.get("sec-fetch-site", "").lower() == "cross-site":
            return 403, "Cross-site requests cannot change this server's state."
        origin = headers.get("origin")
        if origin is not None and not self._same_origin(origin, host):
            return 403, f"Requests from {origin[:100]!r} cannot change this server's state."
        if not self._is_form_path(scope):
            kind = headers.get("content-type", "").split(";", 1)[0].strip().lower()
            # A DELETE without a body is safe: browsers preflight every cross-origin
            # DELETE, and this server answers no preflight.
            bodiless_delete = (
                scope.get("method", "").upper() == "DELETE"
                and not kind
                and headers.get("content-length", "0").strip() in ("", "0")
                and "transfer-encoding" not in headers
            )
            if kind != "application/json" and not bodiless_delete:
                return 415, (
                    f"Send the request body as JSON (Content-Type: application/json), "
                    f"got {kind or 'no Content-Type'!r}."
                )
        return None

    def _wants_html(self, scope: Scope, headers: dict[str, str]) -> bool:
        """Whether the refusal should be a page (a browser on the admin's paths)."""
        return self._is_form_path(scope) and "text/html" in headers.get("accept", "")

    def _is_form_path(self, scope: Scope) -> bool:
        """Whether the request goes to a path whose writes are HTML forms."""
        path = str(scope.get("path", ""))
        return any(path == p or path.startswith(p + "/") for p in self.forms)

    @staticmethod
    def _same_origin(origin: str, host: str) -> bool:
        """Whether ``Origin`` names this server (the ``Host`` the request was sent to)."""
        if origin.strip().lower() == "null":
            return False
        parts = urlsplit(origin.strip())
        return bool(parts.netloc) and parts.netloc.lower() == host.strip().lower()


def _too_large(limit: int) -> str:
    return (
        f"The request body is larger than this server accepts ({limit:,} bytes); "
        "send less, or raise the server's limit (server.max_body_bytes / "
        "server.max_form_bytes)."
    )


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    """The whole request body, or ``None`` as soon as it passes ``limit`` bytes."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":  # the client went away
            return b"".join(chunks)
        chunk = bytes(message.get("body", b""))
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives ``body`` once, then waits on the real one (disconnects)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _error(send: Send, status: int, detail: str, *, html: bool = False) -> None:
    """Answer ``status`` with ``detail``: JSON, or a small page for a browser."""
    if html:
        body = (
            "<!doctype html><html><head><meta charset=utf-8><title>Refused</title></head>"
            f"<body><h1>{status}</h1><p>{escape(detail)}</p></body></html>"
        ).encode()
        kind = b"text/html; charset=utf-8"
    else:
        body = json.dumps({"detail": detail}).encode("utf-8")
        kind = b"application/json"
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", kind),
                (b"content-length", str(len(body)).encode()),
                *SECURITY_HEADERS,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


__all__ = ["LOOPBACK_NAMES", "SECURITY_HEADERS", "RequestGuard"]
