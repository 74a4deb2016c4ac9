"""The engine-neutral part of the SQL repositories: what the SQLite and the
PostgreSQL engines share (statements that differ only in placeholders or a
function's name, and the Python around them)."""
