"""The HTTP server: the served app, its callers, the REST API, MCP and the admin."""
