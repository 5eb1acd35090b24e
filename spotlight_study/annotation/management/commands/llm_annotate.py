"""``manage.py llm_annotate SLUG --model M [--label FIELD ...] [--sync]``: the machine coder.

Creates a machine-coding job that labels every saved answer of the study through the
OpenAI-compatible API at ``OPENAI_BASE_URL`` (key: ``OPENAI_API_KEY``). With
``STIMULI_JOB_RUNNER=celery`` the job goes to the worker and the command returns at once (watch
it with ``--status``); otherwise, or with ``--sync``, it runs here and prints the outcome.
``--resume JOB`` continues a failed, cancelled or stale job; ``--cancel JOB`` stops one.
"""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from spotlight_study.annotation.machine_coding import (
    MachineCodingError,
    machine_coding_job_cancel,
    machine_coding_job_create,
    machine_coding_job_resume,
    machine_coding_run_now,
)
from spotlight_study.annotation.models import COMPARED_FIELDS, MachineCodingJob, MachineLabel
from spotlight_study.commands import study_for_command


class Command(BaseCommand):
    """``llm_annotate``: see the module docstring."""

    help = "Label every saved answer of a study with an LLM (blinded like the human annotators)."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--model", help="The model name to ask the server for.")
        parser.add_argument(
            "--label", nargs="+", action="extend", metavar="FIELD",
            help=f"Label fields to code (default: all of them: {', '.join(COMPARED_FIELDS)}, or "
            "under a study's own codebook its field keys and exclusion).",
        )
        parser.add_argument("--sync", action="store_true", help="Run in this process and wait.")
        parser.add_argument("--resume", type=int, metavar="JOB", help="Continue job JOB.")
        parser.add_argument("--cancel", type=int, metavar="JOB", help="Cancel job JOB.")
        parser.add_argument("--status", type=int, metavar="JOB", help="Show job JOB's progress.")

    def handle(self, *args, slug, model, label, sync, resume, cancel, status, **options):
        study = study_for_command(slug)
        if sum(x is not None for x in (resume, cancel, status)) > 1:
            raise CommandError("Give at most one of --resume, --cancel, --status.")
        job_id = resume or cancel or status
        if job_id is not None and not MachineCodingJob.objects.filter(pk=job_id, study=study).exists():
            raise CommandError(f"No machine-coding job {job_id} in study '{slug}'.")
        inline = sync or settings.STIMULI_JOB_RUNNER != "celery"
        try:
            if status is not None:
                self._show(MachineCodingJob.objects.get(pk=status))
                return
            if cancel is not None:
                self._show(machine_coding_job_cancel(job_id=cancel))
                return
            if resume is not None:
                job = machine_coding_job_resume(job_id=resume, dispatch=not inline)
            else:
                if not model:
                    raise CommandError("--model is required to start a job.")
                job = machine_coding_job_create(
                    study=study, model=model, fields=label, dispatch=not inline
                )
        except MachineCodingError as exc:
            raise CommandError(str(exc)) from None
        except ValidationError as exc:
            raise CommandError("; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())) from None
        if inline:
            self.stdout.write(f"Machine-coding job {job.pk}: labelling with {job.model}...")
            machine_coding_run_now(job_id=job.pk)
            job.refresh_from_db()
        else:
            self.stdout.write(f"Machine-coding job {job.pk} queued for the Celery worker.")
        self._show(job)
        if job.status == "failed":
            raise CommandError(f"Job {job.pk} failed: {job.error}")

    def _show(self, job: MachineCodingJob) -> None:
        labels = MachineLabel.objects.filter(item__study_id=job.study_id, model=job.model)
        missing = labels.filter(status=MachineLabel.Status.MISSING).count()
        self.stdout.write(
            f"Job {job.pk} ({job.coder_name}): {job.status}, {job.done}/{job.total} items, "
            f"{missing} missing" + (f" ({job.error})" if job.error else "")
        )
