"""Celery application. Configuration comes from Django settings with the ``CELERY_`` prefix."""
import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "spotlight_study.settings")

app = Celery("spotlight_study")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
