"""Django settings, read from the environment with django-environ.

Variables (see ``.env.example``):
``DATABASE_URL`` (default: SQLite file ``var/db.sqlite3``), ``SECRET_KEY``, ``DEBUG`` (default off),
``ALLOWED_HOSTS``, ``CELERY_BROKER_URL`` (default ``memory://``, i.e. no broker service),
``HTTPS`` (turn on HSTS, secure cookies and the TLS redirect behind a proxy).
"""
import os
from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False) if (BASE_DIR / ".env").exists() else None

DEBUG = env.bool("DEBUG", default=False)
SECRET_KEY = env(
    "SECRET_KEY",
    default="django-insecure-local-only-set-SECRET_KEY-in-production",
)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "spotlight_study.studies",
    "spotlight_study.participation",
    "spotlight_study.researcher",
    "spotlight_study.annotation",
    "spotlight_study.stimuli",
    "spotlight_study.prolific",
    "spotlight_study.api",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "spotlight_study.urls"
WSGI_APPLICATION = "spotlight_study.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}"),
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # IMMEDIATE makes every transaction take the write lock at BEGIN, so two arrivals can never
    # both read the same cell counts before either writes (SQLite has no row locks).
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "transaction_mode": "IMMEDIATE",
            "timeout": 30,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    )
    # A file (not the in-memory default) so that tests with several threads share one database;
    # per process, so that two test runs on one checkout do not collide.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test-db-{os.getpid()}.sqlite3")}
    VAR_DIR.mkdir(exist_ok=True)
else:
    DATABASES["default"]["TEST"] = {"NAME": f"test_{DATABASES['default']['NAME']}_{os.getpid()}"}
    DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("CONN_MAX_AGE", default=60))
    DATABASES["default"].setdefault("CONN_HEALTH_CHECKS", True)
DATABASES["default"]["ATOMIC_REQUESTS"] = False

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "researcher:study_list"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-gb"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        # Production sets whitenoise.storage.CompressedManifestStaticFilesStorage (after
        # collectstatic); the plain default lets tests and the demo run without collectstatic.
        "BACKEND": env(
            "STATICFILES_BACKEND",
            default="django.contrib.staticfiles.storage.StaticFilesStorage",
        )
    },
}
# Tests and the embedded server can run without collectstatic.
WHITENOISE_USE_FINDERS = env.bool("WHITENOISE_USE_FINDERS", default=True)

SESSION_COOKIE_AGE = 60 * 60 * 24 * 2
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_FAILURE_VIEW = "spotlight_study.participation.views.csrf_failure"
# Answers are capped at 5,000 characters; anything near this size is not a participant's answer.
DATA_UPLOAD_MAX_MEMORY_SIZE = 256 * 1024

HTTPS = env.bool("HTTPS", default=False)
if HTTPS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
    SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=60 * 60 * 24 * 365)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

CELERY_BROKER_URL = env("CELERY_BROKER_URL", default="memory://")
CELERY_RESULT_BACKEND = env("CELERY_RESULT_BACKEND", default=None)
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = TIME_ZONE
CELERY_BEAT_SCHEDULE = {
    "clear-expired-sessions": {
        "task": "spotlight_study.participation.tasks.sessions_clear_expired",
        "schedule": 60 * 60 * 6,
    },
    "prolific-sync-submissions": {
        "task": "spotlight_study.prolific.tasks.prolific_sync_all",
        "schedule": env.int("PROLIFIC_SYNC_INTERVAL_SECONDS", default=300),
    },
}

REST_FRAMEWORK = {
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAdminUser"],
    # The researcher API (docs/api.md): a token (`Authorization: Token <key>`) or the staff
    # session. Its one error shape comes from spotlight_study.api.exceptions.ErrorShapeMixin.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PAGINATION_CLASS": "spotlight_study.api.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_FILTER_BACKENDS": [
        "django_filters.rest_framework.DjangoFilterBackend",
        "rest_framework.filters.OrderingFilter",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Spotlight study platform: researcher API",
    "DESCRIPTION": "Staff-only REST API over studies, participants (pseudonymized), responses, "
    "annotation, analysis, stimulus jobs and Prolific submissions. See docs/api.md.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAdminUser"],
    "COMPONENT_SPLIT_REQUEST": True,
    "PREPROCESSING_HOOKS": ["spotlight_study.api.schema.only_researcher_api"],
    "PATH_CONVERTER_OVERRIDES": {
        "dbid": {"type": "integer", "minimum": 0, "maximum": 999_999_999_999_999_999}
    },
    # Swagger UI's JavaScript comes from this URL (a CDN by default; point it at a self-hosted
    # copy of swagger-ui-dist where browsers have no internet access).
    "SWAGGER_UI_DIST": env("SWAGGER_UI_DIST", default="https://cdn.jsdelivr.net/npm/swagger-ui-dist@5"),
    "SWAGGER_UI_FAVICON_HREF": env("SWAGGER_UI_FAVICON_HREF", default=""),
}

PROLIFIC_COMPLETE_URL = "https://app.prolific.com/submissions/complete"
# Prolific API (spotlight_study/prolific, docs/prolific.md). The token and the webhook secret are
# read from the environment only and never shown or logged.
PROLIFIC_API_TOKEN = env("PROLIFIC_API_TOKEN", default="")
PROLIFIC_API_BASE_URL = env("PROLIFIC_API_BASE_URL", default="https://api.prolific.com/api/v1/")
PROLIFIC_WEBHOOK_SECRET = env("PROLIFIC_WEBHOOK_SECRET", default="")
PROLIFIC_WEBHOOK_TOLERANCE_SECONDS = env.int("PROLIFIC_WEBHOOK_TOLERANCE_SECONDS", default=300)
PROLIFIC_TIMEOUT_SECONDS = env.float("PROLIFIC_TIMEOUT_SECONDS", default=30.0)
PROLIFIC_MAX_RETRIES = env.int("PROLIFIC_MAX_RETRIES", default=4)  # idempotent calls only
PROLIFIC_RETRY_BACKOFF_SECONDS = env.float("PROLIFIC_RETRY_BACKOFF_SECONDS", default=1.0)
PROLIFIC_SYNC_INTERVAL_SECONDS = env.int("PROLIFIC_SYNC_INTERVAL_SECONDS", default=300)
# A bonus above this (minor units, e.g. pence) is refused as a likely typo ("30" pays 30.00).
PROLIFIC_BONUS_MAX_MINOR_UNITS = env.int("PROLIFIC_BONUS_MAX_MINOR_UNITS", default=2000)
# The public https base URL of this server, used in the study URL sent to Prolific.
PROLIFIC_STUDY_BASE_URL = env("PROLIFIC_STUDY_BASE_URL", default="")
# The latest analysis report of each study (written by `manage.py analyze`).
ANALYSIS_ROOT = Path(env("ANALYSIS_ROOT", default=str(VAR_DIR / "analysis")))

# Stimulus preparation (spotlight_study/stimuli, docs/stimuli.md). Any OpenAI-compatible server;
# the key is read from the environment only and never shown or logged.
OPENAI_BASE_URL = env("OPENAI_BASE_URL", default="https://api.openai.com/v1")
OPENAI_API_KEY = env("OPENAI_API_KEY", default="")
OPENAI_MAX_RETRIES = env.int("OPENAI_MAX_RETRIES", default=5)  # the client's own 429/5xx retries
OPENAI_TIMEOUT_SECONDS = env.float("OPENAI_TIMEOUT_SECONDS", default=120.0)
STIMULI_GENERATION_CONCURRENCY = env.int("STIMULI_GENERATION_CONCURRENCY", default=4)
STIMULI_MAX_UPLOAD_BYTES = env.int("STIMULI_MAX_UPLOAD_BYTES", default=50 * 1024 * 1024)
# "celery" sends jobs to the broker; "thread" runs them in a background thread of the web process
# (the embedded default has no broker); "manual" leaves them to `manage.py run_stimulus_jobs`.
STIMULI_JOB_RUNNER = env(
    "STIMULI_JOB_RUNNER",
    default="thread" if CELERY_BROKER_URL.startswith("memory://") else "celery",
)
STIMULI_JOB_STALE_SECONDS = env.int("STIMULI_JOB_STALE_SECONDS", default=120)
# spaCy pipeline for tokenizing; empty means spacy.blank("en") (no download needed).
STIMULI_SPACY_PIPELINE = env("STIMULI_SPACY_PIPELINE", default="")
# Long jobs: a worker takes one task at a time, so others are not stuck behind it.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="WARNING")},
}
