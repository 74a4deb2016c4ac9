"""The lifecycle of memories: decay, review, maintenance, versions and daily jobs."""
