#!/usr/bin/env python
"""Machine instructions per participant flow, counted by Valgrind's callgrind: a figure that a
shared, noisy machine does not move.

CPU time per flow drifts by 20% and more between minutes on a shared machine (docs/benchmarks.md),
so two trees a few percent apart cannot be told apart by timing them. The number of machine
instructions a flow executes does not depend on the machine's load: run twice, it agrees to
0.2%. It is not time (a cache miss costs many instructions' time), so the comparison with the
original app stays the uWSGI run of ``bench/original_compare.py``; this script says whether a
change to this project's code path made it cheaper, and by how much.

What runs is ``bench/profile_wsgi.py``'s flow (the WSGI application in this process, ``DEBUG``
off, the demo study on a fresh SQLite file, every check of a flow, no typed drafts), under
``valgrind --tool=callgrind`` with the counting switched on (``callgrind_control -i on``) only
for the measured flows, after the set-up and 10 flows of warm-up. The driver's own work (parsing
the pages, filling the forms) is in the count too, the same in both trees.

Usage (needs Debian's ``valgrind`` package; takes about 90 s for 10 flows on a 2-CPU machine):

    .venv/bin/python bench/flow_instructions.py [--flows 10]

To compare two trees, run it in each (a ``git worktree`` of the other commit with the same venv).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

_UNDER_VALGRIND = "SPOTLIGHT_FLOW_INSTRUCTIONS_CHILD"


def _child(flows: int) -> None:
    """Inside valgrind: set up, warm up, then count ``flows`` flows."""
    from bench import profile_wsgi

    profile_wsgi._configure("sqlite")
    import django

    django.setup()
    from django.core.management import call_command

    from bench.load import DEFAULT_FIXTURE
    from spotlight_study.wsgi import application

    call_command("migrate", verbosity=0)
    call_command("import_study", str(DEFAULT_FIXTURE), verbosity=0)
    for _ in range(10):
        profile_wsgi.one_flow(application)
    pid = str(os.getpid())
    subprocess.run(["callgrind_control", "-i", "on", pid], check=True, capture_output=True)
    for _ in range(flows):
        profile_wsgi.one_flow(application)
    subprocess.run(["callgrind_control", "-i", "off", pid], check=True, capture_output=True)


def main() -> int:
    """Run the flows under callgrind; print the instructions per flow (millions)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--flows", type=int, default=10, help="counted flows (after 10 of warm-up)")
    args = ap.parse_args()
    if os.environ.get(_UNDER_VALGRIND):
        _child(args.flows)
        return 0
    if not shutil.which("valgrind") or not shutil.which("callgrind_control"):
        sys.exit("valgrind is not installed (Debian: apt-get install valgrind).")
    out = Path(tempfile.mkdtemp(prefix="spotlight-callgrind-")) / "callgrind.out"
    run = subprocess.run(
        ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
         sys.executable, __file__, "--flows", str(args.flows)],
        env={**os.environ, _UNDER_VALGRIND: "1"}, capture_output=True, text=True,
    )
    collected = re.search(r"Collected : (\d+)", run.stderr)
    if run.returncode != 0 or not collected:
        sys.exit(f"callgrind run failed ({run.returncode}):\n{run.stderr[-3000:]}")
    per_flow = int(collected.group(1)) / args.flows
    print(f"{per_flow / 1e6:.2f} M instructions per flow ({args.flows} flows, tree "
          f"{_tree()}, {sys.version.split()[0]}); profile data in {out}")
    return 0


def _tree() -> str:
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                           capture_output=True, text=True)
    return head.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")


if __name__ == "__main__":
    sys.exit(main())
