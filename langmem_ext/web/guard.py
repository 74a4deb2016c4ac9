"""What the server accepts from a browser: no cross-site writes, no rebound host names.

:class:`RequestGuard` is an ASGI middleware in front of every route of
:func:`~langmem_ext.serving.create_app`:

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
- **Headers.** Every response says ``X-Content-Type-Options: nosniff``,
  ``Referrer-Policy: same-origin`` (a same-origin form still sends its ``Origin``)
  and a ``Content-Security-Policy`` that allows the package's own files only (no
  inline script, no framing).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Collection, MutableMapping
from typing import Any
from urllib.parse import urlsplit

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

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
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        check_host: bool,
        allowed_hosts: Collection[str] = (),
        json_only_outside: Collection[str] = ("/admin",),
    ) -> None:
        self.app = app
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
            await _json_error(send, status, detail)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {k.lower() for k, _ in message.get("headers", [])}
                extra = [(k, v) for k, v in SECURITY_HEADERS if k not in names]
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, receive, send_with_headers)

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
        path = str(scope.get("path", ""))
        if not any(path == p or path.startswith(p + "/") for p in self.forms):
            kind = headers.get("content-type", "").split(";", 1)[0].strip().lower()
            if kind != "application/json":
                return 415, (
                    f"Send the request body as JSON (Content-Type: application/json), "
                    f"got {kind or 'no Content-Type'!r}."
                )
        return None

    @staticmethod
    def _same_origin(origin: str, host: str) -> bool:
        """Whether ``Origin`` names this server (the ``Host`` the request was sent to)."""
        if origin.strip().lower() == "null":
            return False
        parts = urlsplit(origin.strip())
        return bool(parts.netloc) and parts.netloc.lower() == host.strip().lower()


async def _json_error(send: Send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *SECURITY_HEADERS,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


__all__ = ["LOOPBACK_NAMES", "SECURITY_HEADERS", "RequestGuard"]
