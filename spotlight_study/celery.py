"""Celery application. Configuration comes from Django settings with the ``CELERY_`` prefix.

Task naming, one scheme for every app: each task is declared with an explicit
``@shared_task(name="<app>.<noun>_<verb>")``, where ``<app>`` is the Django app label and
``<noun>_<verb>`` is the name of the one service the task runs (the project's service naming),
so a worker log line points at the function to read. For example:

- ``stimuli.generation_job_run``, ``stimuli.mining_job_run`` (``stimuli/tasks.py``);
- ``annotation.machine_coding_job_run`` (``annotation/tasks.py``);
- ``prolific.submissions_sync`` (one study), ``prolific.submissions_sync_all`` (queues one per
  linked study), ``prolific.submission_entry_verify`` (``prolific/tasks.py``);
- ``participation.sessions_clear_expired`` (``participation/tasks.py``).

Never rely on Celery's default name (the module path): it changes whenever a module moves, and
a renamed task leaves the messages already queued under the old name unconsumed. The beat
schedule (``CELERY_BEAT_SCHEDULE`` in settings) refers to tasks by these names. The LLM jobs'
tasks share one retry schedule (``spotlight_study.stimuli.jobs.retry``), which the in-process
runners follow too.
"""
import os

from celery import Celery
from celery.signals import worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "spotlight_study.settings")

app = Celery("spotlight_study")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_ready.connect
def _resume_stale_jobs_on_start(sender=None, **_kwargs) -> None:
    """When a worker starts (after a crash, a deploy), resume at once the stimulus jobs whose
    runner died, instead of waiting for beat's next sweep (``stimuli.jobs_resume_stale``)."""
    sender.app.send_task("stimuli.jobs_resume_stale")
