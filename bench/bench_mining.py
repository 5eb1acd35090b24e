#!/usr/bin/env python
"""Benchmark of token-pattern mining: 500 vs 500 real outputs, from tokenization to stored patterns.

The outputs are the Llama 3.1 stories about Dr. Smith (group 1) and Dr. Li (group 2) from
``../shared/data/llm-outputs/`` (Hedderich et al., ACL 2025, CC BY 4.0). The script imports them
into a throwaway SQLite database (in a temporary directory; migrating it is not timed), then runs
one mining job exactly as the background runners do (``job_run_now``) and prints the time per
stage as stored by the job (``tokenize``: spaCy ``blank("en")`` through ``nlp.pipe`` and storing
the tokens; ``mine``: Premise, or c-TF-IDF; ``store``: writing the patterns) and the total.

Usage (from the repository root):

    .venv/bin/python bench/bench_mining.py                  # Premise, 500 vs 500
    .venv/bin/python bench/bench_mining.py --method ctfidf --n 500

Target (issue 5): Premise on 500 vs 500 under 60 s on the project machine. This is a benchmark,
not a test: it prints its figures and exits 0 when under the target, 1 otherwise.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data" / "llm-outputs"
TARGET_S = 60.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=500, help="Outputs per group (at most 500).")
    parser.add_argument("--method", choices=["premise", "ctfidf"], default="premise")
    args = parser.parse_args()

    smith_file, li_file = DATA / "llama3_doctor_smith_500.json", DATA / "llama3_doctor_li_500.json"
    if not smith_file.exists() or not li_file.exists():
        print(f"The real outputs are absent: {DATA} (see ../shared/data/README.md).", file=sys.stderr)
        return 2

    workdir = tempfile.mkdtemp(prefix="bench-mining-")
    os.environ["DATABASE_URL"] = f"sqlite:///{workdir}/bench.sqlite3"
    os.environ["DJANGO_SETTINGS_MODULE"] = "spotlight_study.settings"
    os.environ["STIMULI_JOB_RUNNER"] = "manual"
    sys.path.insert(0, str(REPO))

    import django

    django.setup()
    from django.core.management import call_command

    from spotlight_study.stimuli.importers import ImportOptions, read_outputs
    from spotlight_study.stimuli.models import JobStatus
    from spotlight_study.stimuli.jobs.runner import job_run_now
    from spotlight_study.stimuli.services import mining_job_create, stimulus_set_import
    from spotlight_study.stimuli.tasks import MINING

    call_command("migrate", verbosity=0)

    start = time.perf_counter()
    groups = read_outputs(
        file1=(smith_file.name, smith_file.read_bytes()),
        file2=(li_file.name, li_file.read_bytes()),
        options=ImportOptions(),
    )
    groups.group1, groups.group2 = groups.group1[: args.n], groups.group2[: args.n]
    stimulus_set = stimulus_set_import(title="bench Smith vs Li", groups=groups)
    import_s = time.perf_counter() - start

    job = mining_job_create(stimulus_set=stimulus_set, method=args.method)
    start = time.perf_counter()
    job_run_now(MINING, job_id=job.pk)
    total_s = time.perf_counter() - start
    job.refresh_from_db()
    if job.status != JobStatus.SUCCEEDED:
        print(f"Mining failed: {job.error}", file=sys.stderr)
        return 1

    patterns = list(job.patterns.order_by("rank"))
    print(f"mining benchmark: {args.method}, {job.n_group1} vs {job.n_group2} outputs (Smith vs Li, Llama 3.1)")
    print(f"  import (read + store outputs, not part of the target): {import_s:6.2f} s")
    for stage in ("tokenize", "mine", "store"):
        print(f"  {stage:<9} {job.timings_ms.get(stage, 0) / 1000:6.2f} s")
    print(f"  total     {total_s:6.2f} s   (tokenization to stored patterns; target < {TARGET_S:.0f} s)")
    print(f"  patterns  {len(patterns)}")
    for p in patterns[:8]:
        print(f"    {p.label:<50} {p.count_group1:>4} vs {p.count_group2:>4}")
    summary = {"method": args.method, "n": args.n, "total_s": round(total_s, 2), "timings_ms": job.timings_ms}
    print(json.dumps({**summary, "patterns": len(patterns)}))
    return 0 if total_s < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
