"""WSGI entry point, used by uWSGI in production (uwsgi.ini)."""
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "spotlight_study.settings")
application = get_wsgi_application()
