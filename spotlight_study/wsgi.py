"""WSGI entry point, used by gunicorn in production."""
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "spotlight_study.settings")
application = get_wsgi_application()

# The agreement statistics' libraries, once per server (before gunicorn forks, with --preload)
# rather than in the first request that computes an agreement (issue 11: 0.9 s).
from analysis.stats.agreement import import_libraries  # noqa: E402

import_libraries()
