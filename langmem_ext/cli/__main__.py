"""``python -m langmem_ext.cli``: the ``langmem-ext`` command."""

from langmem_ext.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
