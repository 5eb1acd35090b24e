"""``manage.py run_stimulus_jobs [--job KIND:ID] [--wait]``: run stimulus jobs in this process.

Without ``--job`` it runs every job that waits for a runner (queued, or running but stale:
its runner stopped reporting), oldest first, and exits; ``--wait`` keeps looking every few
seconds (a small worker for ``STIMULI_JOB_RUNNER=manual``). With ``--job generation:12`` it runs
that job. A job held by another live runner is left alone. Jobs continue where they stopped.
"""
from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandError

from spotlight_study.stimuli.jobs.runner import job_run_now
from spotlight_study.stimuli.tasks import KINDS
from spotlight_study.stimuli.selectors import job_get, job_progress, jobs_to_run


class Command(BaseCommand):
    """``run_stimulus_jobs``: see the module docstring."""

    help = "Run queued or stale stimulus jobs (generation, mining) in this process."

    def add_arguments(self, parser):
        parser.add_argument("--job", help="KIND:ID, e.g. generation:12 or mining:3.")
        parser.add_argument("--wait", action="store_true", help="Keep running; look for new jobs every 2 s.")

    def handle(self, *args, **opts):
        if opts["job"]:
            kind, _, raw_id = opts["job"].partition(":")
            if kind not in KINDS or not raw_id.isdigit():
                raise CommandError("--job must look like generation:12 or mining:3.")
            self._run(kind, int(raw_id))
            return
        while True:
            for kind, job_id in jobs_to_run():
                self._run(kind, job_id)
            if not opts["wait"]:
                return
            time.sleep(2)

    def _run(self, kind: str, job_id: int) -> None:
        self.stdout.write(f"Running {kind} job {job_id}...")
        job_run_now(KINDS[kind], job_id=job_id)
        try:
            progress = job_progress(job_get(kind=kind, job_id=job_id), kind=kind)
        except Exception as exc:
            raise CommandError(f"No {kind} job {job_id}.") from exc
        self.stdout.write(
            f"{kind} job {job_id}: {progress['status']}, {progress['done']}/{progress['total']}"
            + (f" ({progress['error']})" if progress["error"] else "")
        )
