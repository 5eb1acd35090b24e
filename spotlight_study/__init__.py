"""The Spotlight study platform: a Django project whose apps live in this package."""
from .celery import app as celery_app

__all__ = ("celery_app",)
