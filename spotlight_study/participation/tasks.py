"""Periodic housekeeping run by Celery beat."""
from celery import shared_task
from django.core.management import call_command


@shared_task(name="participation.sessions_clear_expired")
def sessions_clear_expired() -> None:
    """Delete expired participant and staff sessions (Django's ``clearsessions``). Idempotent."""
    call_command("clearsessions")
