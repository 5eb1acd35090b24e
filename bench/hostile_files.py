#!/usr/bin/env python
"""Benchmark: how long refusing each hostile study file takes (``parse_study_file``, in process).

The cases are the test suite's (``tests/studies/hostile_files.py``: a billion-laughs file, deep
nesting, a 100,000-digit integer, a 500,000-character text within the size limit, a 10 MB file,
a recursive alias). ``tests/studies/test_hostile_files.py`` checks what the import does with
them (nothing built, the file read once, bounded memory), which holds on any machine; this
script measures the speed, which only means something on a quiet one.

Usage (from the repository root):

    .venv/bin/python bench/hostile_files.py            # best of 3 per file
    .venv/bin/python bench/hostile_files.py --repeat 5

Target (the limit the test suite asserted until issue 37): each file refused within 2 s on the project machine. This is a benchmark,
not a test: it prints the figures and exits 0 when every file is under the target, 1 otherwise.
"""
from __future__ import annotations

import argparse
import os
import secrets
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET_S = 2.0


def main(argv: list[str] | None = None) -> int:
    """Time the refusal of each case; print one line per file; 0 if all are under the target."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs per file; the best is reported")
    args = ap.parse_args(argv)

    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "spotlight_study.settings")
    os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
    import django

    django.setup()
    from spotlight_study.studies.errors import StudyFileError
    from spotlight_study.studies.schema import parse_study_file
    from tests.studies.hostile_files import CASES

    slowest = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for name, (make, problem) in CASES.items():
            path = Path(tmp) / name
            path.write_text(make())
            best = float("inf")
            for _ in range(args.repeat):
                started = time.perf_counter()
                try:
                    parse_study_file(path)
                    outcome = "NOT REFUSED"
                except StudyFileError as exc:
                    outcome = "refused" if problem in str(exc) else f"refused otherwise: {exc}"
                best = min(best, time.perf_counter() - started)
            slowest = max(slowest, best)
            print(f"{name:20} {path.stat().st_size:>12,} bytes  {best:7.3f} s  {outcome}")
    verdict = "under" if slowest < TARGET_S else "OVER"
    print(f"slowest {slowest:.3f} s: {verdict} the target of {TARGET_S:g} s per file")
    return 0 if slowest < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
