"""Production configuration: `manage.py check --deploy` passes with production settings."""
import os
import secrets
import subprocess
import sys

from .conftest import REPO


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
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_check_deploy_warns_about_the_development_defaults():
    """Without production settings, check --deploy fails, so the test above can fail too."""
    env = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "HTTPS", "DEBUG"}}
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=REPO,
        env={**env, "DATABASE_URL": "sqlite:////tmp/spotlight-deploy-check.sqlite3"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0 and "security.W009" in result.stdout + result.stderr
