"""A Python child process running this checkout's code, killed with SIGKILL after the
test's block (a process dying mid-work, as a crashed replica does)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def killed_after(code: str, *args: str) -> Iterator[str]:
    """Run ``python -c code args…`` and yield the first line it prints (what it
    reached); the process is SIGKILLed when the block ends, and waited for.

    Args:
        code: The child's program.
        args: Its command-line arguments.
    """
    env = {**os.environ, "PYTHONPATH": str(Path.cwd())}
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *args], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
