"""The admin web UI at ``/admin``: see and correct what an agent remembers.

Served by :func:`langmem_ext.server.app.create_app` next to ``/agent`` and ``/memory``
(:func:`langmem_ext.server.admin.routes.mount_admin`). Server-rendered pages (Jinja2) in
English and Chinese, a small script and stylesheet shipped in the package (no CDN).
Every action goes through :class:`~langmem_ext.Memory`'s public API in the scope the
server decides for the caller (:func:`~langmem_ext.server.app.resolve_caller`); every
state-changing form carries a signed CSRF token.

Like the other surfaces it reaches storage only through :mod:`langmem_ext.memory`
and :mod:`langmem_ext.memory.scoping`. Importing this package loads nothing:
``routes`` (FastAPI, Jinja2) is imported by the app that serves it.
"""
