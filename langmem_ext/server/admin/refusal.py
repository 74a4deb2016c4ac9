"""``/admin`` when the admin may not run: every request answers ``403`` with the reason.

Kept apart from :mod:`langmem_ext.server.admin.routes` so it loads without Jinja2.
"""

from __future__ import annotations

from fastapi import APIRouter, HTTPException


def refused_router(reason: str) -> APIRouter:
    """A router answering every ``/admin`` request with ``403`` and ``reason``.

    Args:
        reason: Why the admin is off and how to turn it on.

    Returns:
        The router to include instead of the admin's.
    """
    router = APIRouter(prefix="/admin", include_in_schema=False)

    @router.api_route("", methods=["GET", "POST"])
    @router.api_route("/{path:path}", methods=["GET", "POST"])
    async def refused(path: str = "") -> None:
        raise HTTPException(403, reason)

    return router


__all__ = ["refused_router"]
