#!/usr/bin/env python
"""Summarize a py-spy ``--format raw`` profile of the uWSGI workers (CPU samples only).

    py-spy record --pid <uWSGI master> --subprocesses --rate 40 --duration 25 \\
        --format raw -o /tmp/pyspy.raw        # while bench/load.py is running
    .venv/bin/python bench/pyspy_summary.py /tmp/pyspy.raw [--top 40]

Prints the share of worker CPU samples spent inside each function (inclusive) for the functions
that matter to the participant flow, then the top frames of the project's own code and the top
leaf ("self") frames.
"""
from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

# (label, regex over one frame "function (file:line)"); a sample counts once per label.
BUCKETS = [
    ("whole request (WSGIHandler.__call__)", r"^WSGIHandler\.__call__ "),
    ("  views.entry", r"^entry \(spotlight_study/participation/views\.py"),
    ("  views.step", r"^step \(spotlight_study/participation/views\.py"),
    ("    views._post", r"^_post \(spotlight_study/participation/views\.py"),
    ("    steps.page", r"^page \(spotlight_study/participation/steps/machine\.py"),
    ("  study_get_with_settings (3 queries, every request)", r"^study_get_with_settings "),
    ("  participant_for_session", r"^participant_for_session "),
    ("  assignment.assignment_create", r"^assignment_create "),
    ("  steps.task.answer_save", r"^answer_save "),
    ("  steps.task.task_serve", r"^task_serve "),
    ("  steps.survey.survey_save", r"^survey_save "),
    ("  steps consent_save / instructions_save", r"^(consent_save|instructions_save) "),
    ("  session middleware (load + save)", r"^(SessionStore\.(load|save|create|_get_session|cycle_key|exists)|SessionMiddleware\.process_response) "),
    ("  messages middleware / storage", r"^(MessageMiddleware|CookieStorage|FallbackStorage|SessionStorage)\."),
    ("  CSRF middleware", r"^CsrfViewMiddleware\."),
    ("  template rendering (render_to_string)", r"^render_to_string "),
    ("    form widget rendering (BoundField.as_widget)", r"^BoundField\.as_widget "),
    ("  form validation (full_clean)", r"^BaseForm\.full_clean "),
    ("  ORM: SQL compilation (SQLCompiler.as_sql)", r"^SQLCompiler\.as_sql |^SQLInsertCompiler\.as_sql |^SQLUpdateCompiler\.as_sql "),
    ("  ORM: building querysets (filter/_filter_or_exclude/prefetch setup)", r"^QuerySet\._filter_or_exclude |^Query\.build_filter |^QuerySet\._clone "),
    ("  ORM: model instances (Model.from_db)", r"^Model\.from_db "),
    ("  DB driver: psycopg execute (send + wait)", r"^(Cursor|ClientCursor)\.execute "),
    ("  DB: transaction begin/commit", r"^(Atomic\.__enter__|Atomic\.__exit__|BaseDatabaseWrapper\.commit|BaseDatabaseWrapper\._commit) "),
    ("  DB: connection setup/health check", r"^(BaseDatabaseWrapper\.(connect|ensure_connection|close_if_unusable_or_obsolete|is_usable)|DatabaseWrapper\.is_usable) "),
    # uWSGI parses requests and writes responses in C: py-spy sees no Python frame of the server,
    # so this is 0 unless the profile was taken of a Python server (gunicorn's worker frames).
    ("outside the app (the server's own Python frames)", None),
]

_REQUEST_FRAMES = ("WSGIHandler.__call__ ", "SyncWorker.handle ", "ThreadWorker.handle")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("raw", type=Path)
    ap.add_argument("--top", type=int, default=30)
    args = ap.parse_args()

    samples: list[tuple[list[str], int]] = []
    for line in args.raw.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        frames = [f for f in stack.split(";") if not f.startswith("process ")]
        samples.append((frames, int(n)))
    # A request's samples: inside Django's handler (uWSGI) or a Python server's request handling.
    worker = [(f, n) for f, n in samples if any(x.startswith(_REQUEST_FRAMES) for x in f)]
    total = sum(n for _, n in worker)
    print(f"{sum(n for _, n in samples)} samples, {total} in request handling of the workers")
    compiled = [(label, re.compile(rx) if rx else None) for label, rx in BUCKETS]
    in_app = Counter()
    for frames, n in worker:
        hit = set()
        for label, rx in compiled:
            if rx is not None and any(rx.search(fr) for fr in frames):
                hit.add(label)
        for label in hit:
            in_app[label] += n
    outside = sum(n for f, n in worker if not any(x.startswith("WSGIHandler.__call__ ") for x in f))
    in_app["outside the app (the server's own Python frames)"] = outside
    print(f"\n{'share of worker CPU samples (inclusive)':<72} {'%':>6}")
    for label, _ in compiled:
        print(f"{label:<72} {in_app[label] / total * 100:6.1f}")

    own = Counter()
    leaf = Counter()
    for frames, n in worker:
        seen = set()
        for fr in frames:
            if "spotlight_study/" in fr and fr not in seen:
                key = re.sub(r":\d+\)$", ")", fr)
                if key not in seen:
                    own[key] += n
                    seen.add(key)
        if frames:
            leaf[re.sub(r":\d+\)$", ")", frames[-1])] += n
    print("\nproject functions (inclusive %):")
    for fr, n in own.most_common(args.top):
        print(f"  {n / total * 100:5.1f}  {fr}")
    print("\nleaf frames (self %):")
    for fr, n in leaf.most_common(args.top):
        print(f"  {n / total * 100:5.1f}  {fr}")


if __name__ == "__main__":
    main()
