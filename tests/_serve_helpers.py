"""A real ``langmem-ext serve`` process running this checkout's code, for API tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from test_serve_shutdown import _healthy, _port

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-c", "import sys; from langmem_ext.cli.app import main; sys.exit(main())"]
"""``langmem-ext`` of this checkout (the console script may belong to another one)."""


def checkout_env(**extra: str) -> dict[str, str]:
    """The environment of a subprocess running this checkout's ``langmem_ext``."""
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "ANONYMIZED_TELEMETRY": "False",
        "LANGMEM_LIFECYCLE__DAILY_JOBS": "false",
        **extra,
    }


@contextmanager
def served(workspace: Path, log: Path, *args: str, **env: str) -> Iterator[str]:
    """Run ``langmem-ext --workspace W serve --port N --scripted *args`` until the block
    ends; yields its URL once ``/healthz`` answers. Stopped with SIGTERM: it must
    exit 0 without a traceback."""
    port = _port()
    with log.open("w") as out:
        proc = subprocess.Popen(
            [*CLI, "--workspace", str(workspace), "serve", "--port", str(port), "--scripted",
             *args],
            stdout=out, stderr=subprocess.STDOUT, env=checkout_env(**env), cwd=workspace.parent,
        )  # fmt: skip
        try:
            url = f"http://127.0.0.1:{port}"
            _healthy(url, proc, log)
            yield url
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
            code = proc.wait(timeout=120)
    output = log.read_text()
    assert code == 0, output
    assert "Traceback" not in output, output
