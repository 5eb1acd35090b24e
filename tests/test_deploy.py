"""Production configuration: `manage.py check --deploy` passes with production settings."""
import os
import secrets
import subprocess

import pytest

from .processes import run_python


def test_check_deploy_passes_with_production_settings():
    """With DEBUG off, HTTPS on and a real secret key, check --deploy reports no warning."""
    env = {
        **os.environ,
        "DEBUG": "false",
        "HTTPS": "true",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "study.example.org",
        "DATABASE_URL": "sqlite:////tmp/spotlight-deploy-check.sqlite3",
        "CELERY_BROKER_URL": "redis://127.0.0.1:6379/0",
        "STATICFILES_BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage",
    }
    result = run_python("manage.py", "check", "--deploy", "--fail-level", "WARNING", env=env, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_check_deploy_warns_about_the_development_defaults():
    """With DEBUG on and no key (the development defaults), check --deploy fails (W009, W018)."""
    env = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "HTTPS"}}
    result = run_python(
        "manage.py", "check", "--deploy", "--fail-level", "WARNING",
        env={
            **env,
            "DEBUG": "true",
            "SECRET_KEY_FILE": "/nonexistent/secret_key",
            "DATABASE_URL": "sqlite:////tmp/spotlight-deploy-check.sqlite3",
        },
        timeout=120,
    )
    output = result.stdout + result.stderr
    assert result.returncode != 0 and "security.W009" in output and "security.W018" in output


def _python_without_key(*args: str, **extra: str) -> subprocess.CompletedProcess:
    """This Python on ``args`` with no SECRET_KEY or DEBUG from this environment, a key file that
    does not exist, a scratch SQLite database, and ``extra`` on top."""
    env = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "DEBUG"}}
    env.update(
        {
            "SECRET_KEY_FILE": "/nonexistent/secret_key",
            "DATABASE_URL": "sqlite:////tmp/spotlight-deploy-check.sqlite3",
            **extra,
        }
    )
    return run_python(*args, env=env, timeout=120)


def test_server_refuses_to_start_without_a_secret_key_when_debug_is_off():
    """DEBUG off and no SECRET_KEY: the web server's app fails to load with ImproperlyConfigured."""
    result = _python_without_key(
        "-c", "import django; from spotlight_study.wsgi import application",
        DJANGO_SETTINGS_MODULE="spotlight_study.settings",
    )
    assert result.returncode != 0
    assert "ImproperlyConfigured: SECRET_KEY is not set and DEBUG is off" in result.stderr


def test_manage_py_refuses_the_public_default_key_too():
    """DEBUG off and no SECRET_KEY: manage.py stops with the same message, never the default key."""
    result = _python_without_key("manage.py", "check")
    assert result.returncode != 0 and "SECRET_KEY is not set and DEBUG is off" in result.stderr


def test_the_key_file_written_by_serve_sh_is_used(tmp_path):
    """A key in SECRET_KEY_FILE (what scripts/serve.sh writes) lets the server start with DEBUG off."""
    key = secrets.token_urlsafe(50)
    (tmp_path / "secret_key").write_text(key + "\n")
    result = _python_without_key(
        "-c", "from django.conf import settings; print(settings.SECRET_KEY)",
        DJANGO_SETTINGS_MODULE="spotlight_study.settings",
        SECRET_KEY_FILE=str(tmp_path / "secret_key"),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == key



@pytest.mark.parametrize("key", ["short-key", "a" * 49, "ab" * 40, "django-insecure-" + "x1y2z3" * 10])
def test_a_weak_secret_key_refuses_to_start_when_debug_is_off(key):
    """DEBUG off with a SECRET_KEY under 50 characters (or under 5 distinct, or django-insecure-): refused, naming the rule, not the key."""
    result = _python_without_key(
        "-c", "import django; from spotlight_study.wsgi import application",
        DJANGO_SETTINGS_MODULE="spotlight_study.settings", SECRET_KEY=key,
    )
    assert result.returncode != 0
    assert "ImproperlyConfigured: The SECRET_KEY from SECRET_KEY is too weak" in result.stderr
    assert "50 or more random characters" in result.stderr and key not in result.stderr


def test_a_weak_key_is_accepted_with_debug_on():
    """DEBUG=true: a short development key still starts."""
    result = _python_without_key(
        "-c", "import django; from spotlight_study.wsgi import application",
        DJANGO_SETTINGS_MODULE="spotlight_study.settings", SECRET_KEY="dev", DEBUG="true",
    )
    assert result.returncode == 0, result.stderr
