"""The command line: ``langmem-ext`` commands, the chat loop and the demo."""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``langmem-ext`` command (the console script's entry point).

    Args:
        argv: The arguments after the program name; ``None`` reads ``sys.argv``.

    Returns:
        The process exit code.
    """
    from langmem_ext.cli.app import main as run

    return run(argv)


__all__ = ["main"]
