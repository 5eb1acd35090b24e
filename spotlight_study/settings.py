"""Django settings, read from the environment with django-environ.

Variables (see ``.env.example``):
``DATABASE_URL`` (default: SQLite file ``var/db.sqlite3``), ``SECRET_KEY``, ``DEBUG`` (default off),
``ALLOWED_HOSTS``, ``CELERY_BROKER_URL`` (default ``memory://``, i.e. no broker service),
``HTTPS`` (turn on HSTS, secure cookies and the TLS redirect behind a proxy).
The security settings (login lockout, CSP, log scrubbing, Sentry) are described in
docs/security.md.
"""
import os
import re
from datetime import timedelta
from pathlib import Path

import environ
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False) if (BASE_DIR / ".env").exists() else None

DEBUG = env.bool("DEBUG", default=False)


def _strong_enough(key: str, source: str) -> str:
    """``key``, unless DEBUG is off and it is weak by Django's own measure (``check --deploy``,
    security.W009): under 50 characters, under 5 distinct ones, or a ``django-insecure-`` key.

    Raises ImproperlyConfigured naming ``source`` (never the key).
    """
    if not DEBUG and (len(key) < 50 or len(set(key)) < 5 or key.startswith("django-insecure-")):
        raise ImproperlyConfigured(
            f"The SECRET_KEY from {source} is too weak ({len(key)} characters, {len(set(key))} "
            "distinct): with DEBUG off it must have 50 or more random characters (python -c "
            "\"import secrets; print(secrets.token_urlsafe(50))\")."
        )
    return key


def _secret_key() -> str:
    """``SECRET_KEY``, else the key file ``scripts/serve.sh`` writes, else (DEBUG only) a dev key.

    Raises ImproperlyConfigured with DEBUG off and no key, or a weak one (:func:`_strong_enough`):
    the public development key, or a short one, would let anyone forge sessions, CSRF tokens and
    signed participant tokens.
    """
    key = env("SECRET_KEY", default="")
    if key:
        return _strong_enough(key, "SECRET_KEY")
    key_file = Path(env("SECRET_KEY_FILE", default=str(VAR_DIR / "secret_key")))
    if key_file.is_file() and key_file.read_text().strip():
        return _strong_enough(key_file.read_text().strip(), str(key_file))
    if DEBUG:
        return "django-insecure-local-only-set-SECRET_KEY-in-production"
    raise ImproperlyConfigured(
        "SECRET_KEY is not set and DEBUG is off: refusing to start with a public default key. "
        "Set SECRET_KEY to 50 or more random characters (python -c \"import secrets; "
        "print(secrets.token_urlsafe(50))\"), or run scripts/serve.sh, which writes one to "
        f"{key_file}, or set DEBUG=true for local development only."
    )


SECRET_KEY = _secret_key()
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "spotlight_study.accounts.admin_apps.LabAdminConfig",
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
    "drf_spectacular_sidecar",
    "axes",
    "csp",
    "spotlight_study.audit",
    "spotlight_study.studies",
    "spotlight_study.participation",
    "spotlight_study.researcher",
    "spotlight_study.annotation",
    "spotlight_study.results",
    "spotlight_study.stimuli",
    "spotlight_study.prolific",
    "spotlight_study.api",
    "spotlight_study.privacy",
    "spotlight_study.prereg",
]

MIDDLEWARE = [
    # Imports the URLconf and compiles the participant templates when the handler is built (in
    # uWSGI's master, before the workers fork), then removes itself from the chain (middleware/warmup.py).
    "spotlight_study.middleware.warmup.WarmUpMiddleware",
    # /healthz and /readyz for probes, before the HTTPS redirect, the host check and sessions
    # (spotlight_study/health.py); every other request passes through after one set lookup.
    "spotlight_study.health.HealthCheckMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # django-csp with the site policy's header built once per process (middleware/csp.py).
    "spotlight_study.middleware.csp.CachedPolicyCSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Before anything reads a form: refuses bodies that are not UTF-8 with a 400 page.
    "spotlight_study.middleware.request_hygiene.RequestHygieneMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes requires: it turns a lockout into the lockout page.
    "axes.middleware.AxesMiddleware",
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
                "spotlight_study.navigation.nav_roles",
            ],
        },
    },
]

DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}"),
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Django's backend with each statement's placeholders converted once per process
    # (sqlite_backend/base.py).
    DATABASES["default"]["ENGINE"] = "spotlight_study.sqlite_backend"
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
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Django's backend with a health check that needs no SELECT 1 (postgres_backend/base.py).
    DATABASES["default"]["ENGINE"] = "spotlight_study.postgres_backend"
    # Prepared statements: psycopg prepares a statement once it has run it 5 times on
    # a connection, so PostgreSQL no longer parses and plans it per request (half of the
    # backend's CPU per participant flow, docs/performance.md part 4). Django switches them off
    # by default for the sake of connection poolers; a pooler in transaction mode needs
    # pgbouncer 1.21+ with max_prepared_statements set, or DATABASE_PREPARED_STATEMENTS=off.
    if env.bool("DATABASE_PREPARED_STATEMENTS", default=True):
        DATABASES["default"].setdefault("OPTIONS", {}).update(
            {"server_side_binding": True, "prepare_threshold": 5}
        )
# Persistent connections on both backends (docs/performance.md): on SQLite a new connection per
# request (opening the file, the PRAGMAs above) doubled a participant flow's CPU.
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
# Login protection (django-axes, docs/security.md): after AXES_FAILURE_LIMIT failed logins for
# one username from one address, that pair is refused, even with the right password, for
# AXES_COOLOFF_MINUTES; the site login and the admin login share the counter. The counts live
# in the database (axes' default handler), so the embedded SQLite default needs no cache service.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=10)
AXES_COOLOFF_TIME = timedelta(minutes=env.float("AXES_COOLOFF_MINUTES", default=15))
# Per account and address together: an attacker at one address cannot lock the real user out
# from elsewhere, and cannot go on guessing from the locked address.
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_LOCKOUT_CALLABLE = "spotlight_study.login_protection.lockout_response"
# Every refused attempt during the lockout starts the cool-off again, so the time the lockout
# page gives (now + cool-off) is exact and a client that keeps trying stays locked out.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = True
AXES_RESET_ON_SUCCESS = True
# The client address: REMOTE_ADDR, unless TRUSTED_PROXY_COUNT proxies (which set
# X-Forwarded-For) sit in front of the server. Trusting the header without a proxy would let a
# client pick a new address for every guess.
TRUSTED_PROXY_COUNT = env.int("TRUSTED_PROXY_COUNT", default=0)
# The same rule as the arrival rate limit (spotlight_study/client_address.py): django-axes alone
# would count REMOTE_ADDR, the proxy's address, since django-ipware is not installed.
AXES_CLIENT_IP_CALLABLE = "spotlight_study.login_protection.lockout_client_address"

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "researcher:study_list"
LOGOUT_REDIRECT_URL = "login"

# Staff pages are in English; a study's participant pages are in the study's ``language``,
# activated per request from the study, not from the browser (participation/language.py). The
# platform's translations live in locale/ (compiled .mo files committed, checked fresh by
# tests/participation/test_i18n.py; rebuild with ./scripts/messages.sh).
LANGUAGE_CODE = "en-gb"
TIME_ZONE = "UTC"
USE_I18N = True
LOCALE_PATHS = [BASE_DIR / "locale"]
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
# Answers are capped at 5,000 characters and flow.js sends about 10 KB of writing evidence, so
# anything near this size is not a participant's answer. 2 MB (Django's default is 2.5 MB) so
# that forged evidence up to 1 MB still lets the answer be saved: the evidence is then dropped
# (participation/forms.py, parse_telemetry), never the answer (issue 21).
DATA_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024

# Django's cache holds the arrival rate limit's counters. CACHE_URL (or REDIS_URL), e.g.
# redis://127.0.0.1:6379/1, names a cache shared by all server processes, which production's
# several uWSGI workers need; without it each process would count on its own (serve.sh sets a
# file cache in var/cache that its workers share).
_CACHE_URL = env("CACHE_URL", default="") or env("REDIS_URL", default="")
CACHES = {
    "default": env.cache_url_config(_CACHE_URL)
    if _CACHE_URL
    else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "spotlight"}
}
# A Redis cache fails soft (spotlight_study/cache_backend.py): while Redis cannot be reached the
# arrival limit and the API throttles let requests through, with one warning per
# CACHE_OUTAGE_WARNING_SECONDS; connecting and each command give up after a second.
if CACHES["default"]["BACKEND"] == "django.core.cache.backends.redis.RedisCache":
    CACHES["default"]["BACKEND"] = "spotlight_study.cache_backend.FailSoftRedisCache"
    CACHES["default"].setdefault("OPTIONS", {})
    CACHES["default"]["OPTIONS"].setdefault("socket_connect_timeout", 1.0)
    CACHES["default"]["OPTIONS"].setdefault("socket_timeout", 1.0)
# So does a file cache (serve.sh's filecache:// in var/cache): a full disk (ENOSPC) or a
# directory that cannot be written is a cache miss that keeps nothing, not a 500.
if CACHES["default"]["BACKEND"] == "django.core.cache.backends.filebased.FileBasedCache":
    CACHES["default"]["BACKEND"] = "spotlight_study.cache_backend.FailSoftFileBasedCache"
CACHE_OUTAGE_WARNING_SECONDS = env.int("CACHE_OUTAGE_WARNING_SECONDS", default=60)
# A database outage (PostgreSQL down or restarting, a full disk) is a 503 with this Retry-After
# (seconds) and one warning per outage, again at most every DATABASE_OUTAGE_WARNING_SECONDS while
# it lasts (spotlight_study/database_outage.py), not a 500 with a traceback per request.
DATABASE_OUTAGE_RETRY_AFTER_SECONDS = env.int("DATABASE_OUTAGE_RETRY_AFTER_SECONDS", default=5)
DATABASE_OUTAGE_WARNING_SECONDS = env.int("DATABASE_OUTAGE_WARNING_SECONDS", default=60)
# New participants per client address (participation/ratelimit.py): "N/s", "N/m", "N/h", "N/d"
# or "off". Over the limit an arrival gets a 429 page; resuming participants are not counted.
ENTRY_RATE_LIMIT = env("ENTRY_RATE_LIMIT", default="30/m").strip().lower()
if ENTRY_RATE_LIMIT != "off" and not re.fullmatch(r"[1-9][0-9]*/[smhd]", ENTRY_RATE_LIMIT):
    raise ImproperlyConfigured(
        f"ENTRY_RATE_LIMIT={ENTRY_RATE_LIMIT!r}: write a count per second, minute, hour or day "
        "(e.g. 30/m, 500/h) or off."
    )
# Typed drafts per participant (participation/ratelimit.py), in the same notation; over it a
# draft save gets 429 and nothing is stored. draft.js saves about once per second of typing.
DRAFT_RATE_LIMIT = env("DRAFT_RATE_LIMIT", default="120/m").strip().lower()
if DRAFT_RATE_LIMIT != "off" and not re.fullmatch(r"[1-9][0-9]*/[smhd]", DRAFT_RATE_LIMIT):
    raise ImproperlyConfigured(
        f"DRAFT_RATE_LIMIT={DRAFT_RATE_LIMIT!r}: write a count per second, minute, hour or day "
        "(e.g. 120/m) or off."
    )
# django-ratelimit: an unreachable cache lets arrivals through rather than turning them away.
RATELIMIT_FAIL_OPEN = True

HTTPS = env.bool("HTTPS", default=False)
if HTTPS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
    SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=60 * 60 * 24 * 365)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    # Opt-in: once browsers ship the preload list, leaving it takes months.
    SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=False)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    if not SECURE_HSTS_PRELOAD:
        # check --deploy warns (security.W021) whenever preload is off; off is our choice.
        SILENCED_SYSTEM_CHECKS = ["security.W021"]
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# Content-Security-Policy on every response (django-csp 4 format). No page has inline script or
# style, so none is allowed; data: images are Swagger UI's icons. Forms may also post to
# Prolific's origin, because the last step redirects there with the completion code.
_PROLIFIC_ORIGIN = "https://app.prolific.com"
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [NONE],
        "frame-ancestors": [NONE],
        "form-action": [SELF, _PROLIFIC_ORIGIN],
    },
}

CELERY_BROKER_URL = env("CELERY_BROKER_URL", default="memory://")
CELERY_RESULT_BACKEND = env("CELERY_RESULT_BACKEND", default=None)
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = TIME_ZONE
CELERY_BEAT_SCHEDULE = {
    "clear-expired-sessions": {
        "task": "participation.sessions_clear_expired",
        "schedule": 60 * 60 * 6,
    },
    # Stimulus jobs whose worker died resume by themselves (stimuli/services.py).
    "stimuli-jobs-resume-stale": {
        "task": "stimuli.jobs_resume_stale",
        "schedule": env.int("STIMULI_RESUME_SWEEP_SECONDS", default=60),
    },
    "prolific-sync-submissions": {
        "task": "prolific.submissions_sync_all",
        "schedule": env.int("PROLIFIC_SYNC_INTERVAL_SECONDS", default=300),
    },
}

REST_FRAMEWORK = {
    "DEFAULT_PERMISSION_CLASSES": ["spotlight_study.accounts.roles.IsStudyRunner"],
    # Both JSON APIs (the researcher API and the annotator API) answer errors in one shape.
    "EXCEPTION_HANDLER": "spotlight_study.api.exceptions.api_exception_handler",
    # JSON only, to browsers too: DRF's browsable API pages use inline styles and scripts that
    # the site's Content-Security-Policy blocks. Swagger UI (/api/docs/) is the page for people.
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    # JSON bodies, with JSON nested too deeply refused as a 400 (api/parsers.py). The researcher
    # API reads JSON only, as its schema says (a form or multipart body is 415), except the study
    # import's upload; the annotator API also reads forms (annotation/views.py).
    "DEFAULT_PARSER_CLASSES": ["spotlight_study.api.parsers.JSONParser"],
    # The researcher API (docs/api.md): a token (`Authorization: Token <key>`) or the staff
    # session.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "spotlight_study.api.authentication.ThrottledTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    # Bad tokens per client address (ThrottledTokenAuthentication) and requests per staff user.
    "DEFAULT_THROTTLE_CLASSES": ["rest_framework.throttling.UserRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {
        "token_failure": env("API_TOKEN_FAILURE_RATE", default="20/min"),
        "user": env("API_USER_RATE", default="1200/min"),
    },
    "NUM_PROXIES": TRUSTED_PROXY_COUNT,
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
    "SERVE_PERMISSIONS": ["spotlight_study.accounts.roles.IsStudyRunner"],
    "COMPONENT_SPLIT_REQUEST": True,
    "PREPROCESSING_HOOKS": ["spotlight_study.api.schema.only_researcher_api"],
    # Enums as drf-spectacular does by default, then the error responses of every operation.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "spotlight_study.api.schema.documented_errors",
        "spotlight_study.api.schema.strict_inputs",
    ],
    "PATH_CONVERTER_OVERRIDES": {
        "dbid": {"type": "integer", "minimum": 0, "maximum": 999_999_999_999_999_999}
    },
    # Swagger UI is served from our own static files (drf-spectacular-sidecar), never a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
}

PROLIFIC_COMPLETE_URL = "https://app.prolific.com/submissions/complete"
# Prolific API (spotlight_study/prolific, docs/prolific.md). The token and the webhook secret are
# read from the environment only and never shown or logged.
PROLIFIC_API_TOKEN = env("PROLIFIC_API_TOKEN", default="")
PROLIFIC_API_BASE_URL = env("PROLIFIC_API_BASE_URL", default="https://api.prolific.com/api/v1/")
PROLIFIC_WEBHOOK_SECRET = env("PROLIFIC_WEBHOOK_SECRET", default="")
# Keys that encrypt a study's own Prolific credentials at rest (prolific/credentials.py,
# docs/security.md "Per-study Prolific credentials"): comma-separated Fernet keys, the first
# encrypts, all decrypt (rotation). Unset: read from PROLIFIC_CREDENTIALS_KEYS_FILE (default
# var/credentials_key, which scripts/serve.sh writes for the embedded default), so manage.py
# commands find the same key as the server. Neither: per-study credentials are refused with a
# message and every study uses the two values above.
PROLIFIC_CREDENTIALS_KEYS = env.list("PROLIFIC_CREDENTIALS_KEYS", default=[])
if not PROLIFIC_CREDENTIALS_KEYS:
    _keys_file = Path(env("PROLIFIC_CREDENTIALS_KEYS_FILE", default=str(VAR_DIR / "credentials_key")))
    if _keys_file.is_file():
        PROLIFIC_CREDENTIALS_KEYS = [k.strip() for k in _keys_file.read_text().split(",") if k.strip()]
PROLIFIC_WEBHOOK_TOLERANCE_SECONDS = env.int("PROLIFIC_WEBHOOK_TOLERANCE_SECONDS", default=300)
PROLIFIC_TIMEOUT_SECONDS = env.float("PROLIFIC_TIMEOUT_SECONDS", default=30.0)
PROLIFIC_MAX_RETRIES = env.int("PROLIFIC_MAX_RETRIES", default=4)  # idempotent calls only
PROLIFIC_RETRY_BACKOFF_SECONDS = env.float("PROLIFIC_RETRY_BACKOFF_SECONDS", default=1.0)
PROLIFIC_SYNC_INTERVAL_SECONDS = env.int("PROLIFIC_SYNC_INTERVAL_SECONDS", default=300)
# A bonus above this (minor units, e.g. pence) is refused as a likely typo ("30" pays 30.00).
PROLIFIC_BONUS_MAX_MINOR_UNITS = env.int("PROLIFIC_BONUS_MAX_MINOR_UNITS", default=2000)
# The public https base URL of this server, used in the study URL sent to Prolific.
PROLIFIC_STUDY_BASE_URL = env("PROLIFIC_STUDY_BASE_URL", default="")
# The launch check's reward and balance checks (docs/prolific.md, "Reward and balance"): Prolific's
# minimum and recommended reward per hour in minor units (GBP: 6.00 and 9.00), its service fee as a
# share of the rewards, and the workspace whose balance is read (empty: the study's own).
PROLIFIC_MIN_REWARD_PER_HOUR_MINOR_UNITS = env.int("PROLIFIC_MIN_REWARD_PER_HOUR_MINOR_UNITS", default=600)
PROLIFIC_RECOMMENDED_REWARD_PER_HOUR_MINOR_UNITS = env.int(
    "PROLIFIC_RECOMMENDED_REWARD_PER_HOUR_MINOR_UNITS", default=900
)
PROLIFIC_FEE_RATE = env.float("PROLIFIC_FEE_RATE", default=0.333)
PROLIFIC_WORKSPACE_ID = env("PROLIFIC_WORKSPACE_ID", default="")
# Every output of an analysis run (report, figures, tables, results.json; researcher/models.py)
# goes through Django's storage API, the storage named "analysis". By default the file system
# under ANALYSIS_ROOT; with several servers an S3-compatible store every server reads
# (ANALYSIS_STORAGE=s3, django-storages; docs/scaling.md). Files are served only through the
# researcher views, never from a public URL.
ANALYSIS_ROOT = Path(env("ANALYSIS_ROOT", default=str(VAR_DIR / "analysis")))
ANALYSIS_STORAGE = env("ANALYSIS_STORAGE", default="filesystem")
if ANALYSIS_STORAGE == "s3":
    # Credentials as boto3 reads them (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the
    # environment, or an instance role); never in a setting.
    STORAGES["analysis"] = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": env("ANALYSIS_S3_BUCKET"),
            "endpoint_url": env("ANALYSIS_S3_ENDPOINT_URL", default="") or None,
            "region_name": env("ANALYSIS_S3_REGION", default="") or None,
            "location": env("ANALYSIS_S3_PREFIX", default=""),
            "default_acl": None,  # the bucket's own (private) policy
            "file_overwrite": True,
        },
    }
elif ANALYSIS_STORAGE == "filesystem":
    STORAGES["analysis"] = {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        # No URL serves this directory: the views read it after their role check.
        "OPTIONS": {"location": str(ANALYSIS_ROOT)},
    }
else:
    raise ImproperlyConfigured(f"ANALYSIS_STORAGE must be 'filesystem' or 's3', not '{ANALYSIS_STORAGE}'.")

# Stimulus preparation (spotlight_study/stimuli, docs/stimuli.md). Any OpenAI-compatible server;
# the key is read from the environment only and never shown or logged.
OPENAI_BASE_URL = env("OPENAI_BASE_URL", default="https://api.openai.com/v1")
OPENAI_API_KEY = env("OPENAI_API_KEY", default="")
OPENAI_MAX_RETRIES = env.int("OPENAI_MAX_RETRIES", default=5)  # the client's own 429/5xx retries
OPENAI_TIMEOUT_SECONDS = env.float("OPENAI_TIMEOUT_SECONDS", default=120.0)
STIMULI_GENERATION_CONCURRENCY = env.int("STIMULI_GENERATION_CONCURRENCY", default=4)
# Uploaded output files (docs/stimuli.md "Limits of an upload"): checked before anything is
# parsed; a file over either limit is refused with a message and nothing is stored. A file over
# STIMULI_INLINE_IMPORT_BYTES is read by a background import job, never inside the request
# (whose time uWSGI's harakiri, 30 s, cuts off).
STIMULI_MAX_UPLOAD_BYTES = env.int("STIMULI_MAX_UPLOAD_BYTES", default=20 * 1024 * 1024)
STIMULI_MAX_UPLOAD_LINES = env.int("STIMULI_MAX_UPLOAD_LINES", default=200_000)
STIMULI_INLINE_IMPORT_BYTES = env.int("STIMULI_INLINE_IMPORT_BYTES", default=256 * 1024)
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
# Redis redelivers an unacknowledged task (acks_late) after this many seconds. It must be longer
# than the longest job (a generation of a few thousand outputs takes well under an hour), or a
# running job's task would be delivered again meanwhile (harmless: the claim refuses it, but
# wasteful). A job whose worker died is not left to this: beat resumes it once its heartbeat is
# STIMULI_JOB_STALE_SECONDS old (docs/stimuli.md).
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT_SECONDS", default=6 * 60 * 60),
}

# Prolific IDs are personal data: every handler's formatter scrubs PROLIFIC_PID, STUDY_ID and
# SESSION_ID values (and bare 24-hex Prolific IDs) from what it writes, and runserver's request
# lines lose their query string (spotlight_study/log_scrubbing.py). uWSGI's access-log format
# is set without the query string in uwsgi.ini.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "scrubbed": {"()": "spotlight_study.log_scrubbing.ScrubbingFormatter"},
        "django.server": {
            "()": "spotlight_study.log_scrubbing.ServerScrubbingFormatter",
            "format": "[{server_time}] {message}",
            "style": "{",
        },
    },
    "filters": {
        # An expected 403 (a user without the role) is one warning line, not a traceback.
        "expected_forbidden": {"()": "spotlight_study.log_scrubbing.ExpectedForbiddenFilter"},
        # A refused Host header or a URL with too many parameters: one warning line, not a
        # traceback (django.security.*).
        "suspicious_request": {"()": "spotlight_study.log_scrubbing.SuspiciousRequestFilter"},
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "scrubbed", "filters": ["suspicious_request"]},
        "django.server": {"class": "logging.StreamHandler", "formatter": "django.server"},
    },
    "loggers": {
        "django.server": {"handlers": ["django.server"], "level": "INFO", "propagate": False},
        "django.request": {"filters": ["expected_forbidden"]},
        # One line per label sent to the annotator API: its body shape and field names
        # (annotation/apis.py), at INFO whatever LOG_LEVEL says.
        "spotlight_study.annotation.label_api": {"level": "INFO"},
    },
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="WARNING")},
}

# Optional error reporting: set SENTRY_DSN (and install the "sentry" extra). Events go through
# the same scrubbing as the logs, and Sentry's default PII collection stays off.
SENTRY_DSN = env("SENTRY_DSN", default="")
if SENTRY_DSN:
    from spotlight_study.log_scrubbing import sentry_init

    sentry_init(dsn=SENTRY_DSN, environment=env("SENTRY_ENVIRONMENT", default="production"))
