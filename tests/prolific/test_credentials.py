"""Per-study Prolific credentials (issue 40, section 2): two studies in two Prolific workspaces on
one instance, against the fake Prolific server (a real HTTP server on 127.0.0.1).

Each workspace has its own API token and webhook secret; the fake answers 404 to a token asking
about another workspace's study, so a call made with the wrong token fails here as on Prolific.
"""
from __future__ import annotations

import os
from io import StringIO

import pytest
from cryptography.fernet import Fernet
from django.core.management import CommandError, call_command
from django.db import connection

from spotlight_study.audit.models import AuditEntry
from spotlight_study.prolific import credentials
from spotlight_study.prolific.errors import ProlificError
from spotlight_study.prolific.models import ProlificCredentials, ProlificStudy, Submission, WebhookEvent
from spotlight_study.prolific.services import review, submissions
from spotlight_study.prolific.services.credentials import (
    credentials_clear,
    credentials_rotate,
    credentials_save,
)
from spotlight_study.prolific.tasks import prolific_sync_all
from spotlight_study.studies.selectors import study_get_with_settings
from spotlight_study.studies.services import study_import

from .conftest import arrive
from .test_webhook import post, status_event

SECRET_A = "whsec-study-a-0123456789abcdef"
SECRET_B = "whsec-study-b-fedcba9876543210"


@pytest.fixture
def key(settings) -> str:
    """A fresh Fernet key as PROLIFIC_CREDENTIALS_KEYS."""
    value = Fernet.generate_key().decode()
    settings.PROLIFIC_CREDENTIALS_KEYS = [value]
    return value


@pytest.fixture
def two(demo_study, demo_data, fake_prolific, prolific_settings, key):
    """Study A (the demo study) and study B (a copy), each linked to a study in its own workspace
    of the fake Prolific, each with its own token and webhook secret. The instance's
    PROLIFIC_API_TOKEN is the fake's default token, which sees neither workspace."""
    demo_data["slug"] = "second-workspace"
    study_import(data=demo_data)
    study_b = study_get_with_settings(slug="second-workspace")
    out = {}
    for name, study, secret in (("a", demo_study, SECRET_A), ("b", study_b, SECRET_B)):
        workspace, token = fake_prolific.add_workspace()
        prolific_id = fake_prolific.add_study(workspace=workspace)
        ps = ProlificStudy.objects.create(study=study, prolific_id=prolific_id, description="d",
                                          reward_minor_units=200)
        credentials_save(study=study, api_token=token, webhook_secret=secret, via="test")
        out[name] = {"study": study, "ps": ps, "token": token, "secret": secret, "workspace": workspace}
    return out


def _paths(fake, token: str) -> set[str]:
    return {c.path for c in fake.calls_with(token)}


def test_credentials_are_encrypted_at_rest_and_shown_only_as_set(two, staff_client):
    """The database holds Fernet tokens, not the values; the study page says "set" and never
    shows either value or its ciphertext."""
    a = two["a"]
    with connection.cursor() as cursor:
        cursor.execute("SELECT api_token_encrypted, webhook_secret_encrypted FROM prolific_prolificcredentials")
        stored = " ".join(" ".join(row) for row in cursor.fetchall())
    for name in ("a", "b"):
        assert two[name]["token"] not in stored and two[name]["secret"] not in stored
    assert credentials.study_credentials(a["study"].pk).api_token == a["token"]
    page = staff_client.get(f"/researcher/{a['study'].slug}/").content.decode()
    assert "set for this study" in page and 'id="prolific-credentials"' in page
    row = ProlificCredentials.objects.get(study=a["study"])
    for text in (a["token"], a["secret"], row.api_token_encrypted, row.webhook_secret_encrypted):
        assert text not in page
    assert a["token"] not in repr(credentials.study_credentials(a["study"].pk))
    assert a["token"] not in str(row)


def test_sync_calls_prolific_with_each_studys_token(two, fake_prolific):
    """Each study's sync uses its own token and sees its own submissions; the instance's token
    is not used."""
    for name in ("a", "b"):
        fake_prolific.add_submission(two[name]["ps"].prolific_id, status="AWAITING REVIEW")
    for name in ("a", "b"):
        report = submissions.submissions_sync(prolific_study_id=two[name]["ps"].pk)
        assert report.fetched == 1
    for name, other in (("a", "b"), ("b", "a")):
        paths = _paths(fake_prolific, two[name]["token"])
        assert f"studies/{two[name]['ps'].prolific_id}/submissions/" in paths
        assert not any(two[other]["ps"].prolific_id in p for p in paths)
        assert Submission.objects.filter(prolific_study=two[name]["ps"]).count() == 1
    assert fake_prolific.calls_with(fake_prolific.token) == []


def test_the_sync_task_queues_studies_with_their_own_token_when_the_instance_has_none(two, settings):
    """Without PROLIFIC_API_TOKEN the periodic sync still covers the studies with a token."""
    settings.PROLIFIC_API_TOKEN = ""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    assert prolific_sync_all() == 2


def test_review_approves_with_the_studys_token(two, fake_prolific):
    """Bulk approval of study B goes out with B's token only; A's token is not used for it."""
    b = two["b"]
    _, p = arrive(b["study"].slug, complete=True)
    fake_prolific.add_submission(b["ps"].prolific_id, participant_id=p.prolific_pid,
                                 submission_id=p.prolific_session_id, status="AWAITING REVIEW")
    submissions.submissions_sync(prolific_study_id=b["ps"].pk)
    before = len(fake_prolific.calls_with(two["a"]["token"]))
    report = review.submissions_approve_completed(prolific_study_id=b["ps"].pk)
    assert (report.selected, report.done) == (1, 1)
    approve = [c for c in fake_prolific.calls if c.path == "submissions/bulk-approve/"]
    assert [c.authorization for c in approve] == [f"Token {b['token']}"]
    assert fake_prolific.submissions[p.prolific_session_id]["status"] == "APPROVED"
    assert len(fake_prolific.calls_with(two["a"]["token"])) == before


def test_a_wrong_token_fails_as_on_prolific(two, fake_prolific):
    """The fake is strict: study A's Prolific study asked with B's token is a 404, so the tests
    above could not pass with one shared token."""
    credentials_save(study=two["a"]["study"], api_token=two["b"]["token"], via="test")
    with pytest.raises(ProlificError):
        submissions.submissions_sync(prolific_study_id=two["a"]["ps"].pk)


def test_a_study_without_its_own_credentials_falls_back_to_the_environment(
    demo_study, fake_prolific, prolific_settings, key, settings
):
    """A study with no credentials of its own uses PROLIFIC_API_TOKEN and
    PROLIFIC_WEBHOOK_SECRET, as before; clearing a study's own token falls back too."""
    ps = ProlificStudy.objects.create(study=demo_study, prolific_id=fake_prolific.add_study(),
                                      description="d", reward_minor_units=200)
    settings.PROLIFIC_WEBHOOK_SECRET = "whsec-instance"
    fake_prolific.add_submission(ps.prolific_id)
    assert submissions.submissions_sync(prolific_study_id=ps.pk).fetched == 1
    assert {c.authorization for c in fake_prolific.calls} == {f"Token {fake_prolific.token}"}
    found = credentials.study_credentials(demo_study.pk)
    assert (found.token_source, found.secret_source) == ("environment", "environment")
    assert found.webhook_secret == "whsec-instance"
    _, token = fake_prolific.add_workspace()
    credentials_save(study=demo_study, api_token=token, via="test")
    assert credentials.study_api_token(demo_study.pk) == token
    credentials_clear(study=demo_study, api_token=True, via="test")
    assert credentials.study_api_token(demo_study.pk) == fake_prolific.token
    assert not ProlificCredentials.objects.filter(study=demo_study).exists()


def test_a_webhook_signed_for_study_a_cannot_change_study_b(two, client):
    """A's secret on A's URL changes A; A's secret on B's URL is a 401; an event about B's
    submission on A's URL (signed by A) changes nothing of B; the instance's URL, verified with
    the instance's secret, reaches neither study (both have their own)."""
    a, b = two["a"], two["b"]
    _, pa = arrive(a["study"].slug)
    _, pb = arrive(b["study"].slug)
    url = "/prolific/webhook/{}/"
    # A's secret on B's URL: refused before anything is read.
    response = post(client, status_event(pb, "RETURNED"), event_id="e-1", secret=a["secret"],
                    url=url.format(b["study"].slug))
    assert response.status_code == 401
    # B's participant's event, signed with A's secret, on A's URL: nothing of B changes.
    response = post(client, status_event(pb, "RETURNED"), event_id="e-2", secret=a["secret"],
                    url=url.format(a["study"].slug))
    assert response.status_code == 200 and response.json()["outcome"] == "unmatched"
    assert not Submission.objects.filter(submission_id=pb.prolific_session_id).exists()
    status_before = pb.status
    pb.refresh_from_db()
    assert pb.status == status_before
    # The instance's URL with the instance's secret: B has its own secret, so it is out of reach.
    from django.conf import settings as live

    live.PROLIFIC_WEBHOOK_SECRET = "whsec-instance"
    try:
        response = post(client, status_event(pb, "RETURNED"), event_id="e-3", secret="whsec-instance")
    finally:
        live.PROLIFIC_WEBHOOK_SECRET = ""
    assert response.status_code == 200 and response.json()["outcome"] == "unmatched"
    # The same event on B's URL with B's secret is applied, although A's URL saw its id.
    response = post(client, status_event(pb, "RETURNED"), event_id="e-2", secret=b["secret"],
                    url=url.format(b["study"].slug))
    assert response.status_code == 200 and response.json() == {
        "event": "e-2", "duplicate": False, "outcome": "applied"}
    assert Submission.objects.get(submission_id=pb.prolific_session_id).status == "RETURNED"
    # And A's own event on A's URL is applied to A.
    response = post(client, status_event(pa, "RETURNED"), event_id="e-4", secret=a["secret"],
                    url=url.format(a["study"].slug))
    assert response.json()["outcome"] == "applied"
    assert Submission.objects.get(submission_id=pa.prolific_session_id).prolific_study == a["ps"]
    assert set(WebhookEvent.objects.values_list("event_id", "scope_study__slug")) == {
        ("e-2", a["study"].slug), ("e-3", None), ("e-2", b["study"].slug), ("e-4", a["study"].slug)}


def test_a_study_status_event_reaches_only_its_own_study(two, client):
    """A study.status.change naming B's Prolific study, signed by A, leaves B's status alone."""
    a, b = two["a"], two["b"]
    event = {"event_type": "study.status.change", "resource_id": b["ps"].prolific_id, "status": "PAUSED"}
    response = post(client, event, event_id="s-1", secret=a["secret"], url=f"/prolific/webhook/{a['study'].slug}/")
    assert response.json()["outcome"] == "unmatched"
    b["ps"].refresh_from_db()
    assert b["ps"].prolific_status == ""
    response = post(client, event, event_id="s-1", secret=b["secret"], url=f"/prolific/webhook/{b['study'].slug}/")
    assert response.json()["outcome"] == "applied"


def test_a_credential_no_key_opens_stops_the_study_and_never_falls_back(two, settings, client):
    """After the key is changed, A's calls stop with a message and its webhook answers 503;
    the instance's token is not used in its place."""
    settings.PROLIFIC_CREDENTIALS_KEYS = [Fernet.generate_key().decode()]
    with pytest.raises(credentials.CredentialsUnreadable, match="cannot be decrypted"):
        submissions.submissions_sync(prolific_study_id=two["a"]["ps"].pk)
    response = post(client, {"event_type": "x"}, event_id="k-1", secret=SECRET_A,
                    url=f"/prolific/webhook/{two['a']['study'].slug}/")
    assert response.status_code == 503
    settings.PROLIFIC_CREDENTIALS_KEYS = []
    with pytest.raises(credentials.CredentialsUnreadable, match="not set"):
        credentials.study_api_token(two["a"]["study"].pk)


def test_key_rotation_reencrypts_with_the_new_key(two, settings, key):
    """New key first, old second: everything still opens; --rotate re-encrypts; then the old
    key can go."""
    new = Fernet.generate_key().decode()
    settings.PROLIFIC_CREDENTIALS_KEYS = [new, key]
    out = StringIO()
    call_command("study_prolific_credentials", "--rotate", stdout=out)
    assert "Re-encrypted 4 credential(s)" in out.getvalue()
    settings.PROLIFIC_CREDENTIALS_KEYS = [new]
    assert credentials.study_api_token(two["b"]["study"].pk) == two["b"]["token"]


def test_without_a_key_saving_is_refused_with_a_message(demo_study, settings, staff_client):
    """No PROLIFIC_CREDENTIALS_KEYS: the page says per-study credentials are off and the
    service refuses, changing nothing."""
    settings.PROLIFIC_CREDENTIALS_KEYS = []
    page = staff_client.get(f"/researcher/{demo_study.slug}/").content.decode()
    assert "Per-study credentials are off on this server" in page
    with pytest.raises(credentials.CredentialsEncryptionOff, match="PROLIFIC_CREDENTIALS_KEYS"):
        credentials_save(study=demo_study, api_token="tok-123", via="test")
    response = staff_client.post(f"/prolific/{demo_study.slug}/credentials/", {"api_token": "tok-123"}, follow=True)
    assert response.status_code == 200 and "Nothing was saved" in response.content.decode()
    assert not ProlificCredentials.objects.exists()


def test_the_page_form_saves_replaces_and_clears_with_an_audit_row(demo_study, key, staff_client):
    """Save both, replace the token, clear the secret: each change is in the audit trail,
    which names the credential and never its value."""
    url = f"/prolific/{demo_study.slug}/credentials/"
    response = staff_client.post(url, {"api_token": "tok-first", "webhook_secret": "sec-first"}, follow=True)
    page = response.content.decode()
    assert "saved API token and webhook secret" in page and "tok-first" not in page
    staff_client.post(url, {"api_token": "tok-second"})
    staff_client.post(url, {"clear_webhook_secret": "on"})
    found = credentials.study_credentials(demo_study.pk)
    assert (found.api_token, found.secret_source) == ("tok-second", "none")
    entries = list(AuditEntry.objects.filter(study_id=demo_study.pk).order_by("pk"))
    assert [e.action for e in entries] == ["credentials.set", "credentials.set", "credentials.clear"]
    assert entries[2].detail["credentials"] == ["webhook_secret"] and entries[0].actor is not None
    text = repr([(e.summary, e.detail) for e in entries])
    assert "tok-" not in text and "sec-first" not in text
    # Bad input: a clear message, nothing changed.
    response = staff_client.post(url, {"api_token": "has space", "clear_api_token": ""}, follow=True)
    assert "visible ASCII" in response.content.decode()
    response = staff_client.post(url, {"api_token": "x", "clear_api_token": "on"}, follow=True)
    assert "not both" in response.content.decode()
    assert credentials.study_api_token(demo_study.pk) == "tok-second"


def test_the_command_reads_values_from_the_environment_only(demo_study, key, monkeypatch):
    """--token-from-env names a variable; the value never appears in the output; --clear
    removes both; an unset variable changes nothing."""
    monkeypatch.setenv("STUDY_TOKEN", "tok-from-env")
    monkeypatch.setenv("STUDY_SECRET", "sec-from-env")
    out = StringIO()
    call_command("study_prolific_credentials", demo_study.slug, "--token-from-env", "STUDY_TOKEN",
                 "--webhook-secret-from-env", "STUDY_SECRET", stdout=out)
    assert "tok-from-env" not in out.getvalue() and "API token: set for this study." in out.getvalue()
    assert credentials.study_credentials(demo_study.pk).webhook_secret == "sec-from-env"
    with pytest.raises(CommandError, match="NOT_THERE is not set"):
        call_command("study_prolific_credentials", demo_study.slug, "--token-from-env", "NOT_THERE")
    out = StringIO()
    call_command("study_prolific_credentials", demo_study.slug, "--clear", stdout=out)
    assert "Cleared: API token, webhook secret." in out.getvalue()
    assert [e.detail["via"] for e in AuditEntry.objects.order_by("pk")] == ["command", "command"]
    assert os.environ["STUDY_TOKEN"] == "tok-from-env"


def test_export_study_and_the_download_hold_no_credential(two, staff_client, tmp_path):
    """The study file and the researcher's ZIP download carry neither value nor ciphertext."""
    a = two["a"]
    row = ProlificCredentials.objects.get(study=a["study"])
    secrets_ = [a["token"], a["secret"], row.api_token_encrypted, row.webhook_secret_encrypted]
    out = tmp_path / "study.yaml"
    call_command("export_study", a["study"].slug, "--out", str(out))
    text = out.read_text()
    assert a["study"].slug in text
    assert not [s for s in secrets_ if s in text] and "credential" not in text.lower()
    response = staff_client.get(f"/researcher/{a['study'].slug}/export.zip")
    assert response.status_code == 200
    body = b"".join(response.streaming_content) if response.streaming else response.content
    import io
    import zipfile

    with zipfile.ZipFile(io.BytesIO(body)) as archive:
        everything = b"".join(archive.read(n) for n in archive.namelist())
    assert not [s for s in secrets_ if s.encode() in everything]


def test_no_credential_reaches_the_logs(two, fake_prolific, caplog, key, settings):
    """Saving, syncing (with a retried 429 that logs a warning), rotating and a failed decryption
    log nothing of the values, at DEBUG level, httpx included."""
    import logging

    caplog.set_level(logging.DEBUG)
    a = two["a"]
    fake_prolific.fail("GET", f"studies/{a['ps'].prolific_id}/submissions/", 429)
    submissions.submissions_sync(prolific_study_id=a["ps"].pk)
    credentials_save(study=a["study"], api_token=a["token"] + "x", via="test")
    settings.PROLIFIC_CREDENTIALS_KEYS = [Fernet.generate_key().decode(), key]
    credentials_rotate()
    settings.PROLIFIC_CREDENTIALS_KEYS = [Fernet.generate_key().decode()]
    with pytest.raises(credentials.CredentialsUnreadable) as raised:
        submissions.submissions_sync(prolific_study_id=a["ps"].pk)
    logged = caplog.text + str(raised.value)
    assert "retrying" in caplog.text  # the warning was logged, so the check below means something
    for name in ("a", "b"):
        assert two[name]["token"] not in logged and two[name]["secret"] not in logged


def test_subscribing_a_study_with_its_own_token_uses_its_url_and_saves_its_secret(
    demo_study, fake_prolific, prolific_settings, key, capsys, client
):
    """`prolific_webhooks SLUG create --new-secret` for a study with its own token subscribes
    the study's own URL in its workspace and saves the new secret with the study, unprinted."""
    workspace, token = fake_prolific.add_workspace()
    ps = ProlificStudy.objects.create(study=demo_study, prolific_id=fake_prolific.add_study(workspace=workspace),
                                      description="d", reward_minor_units=200)
    credentials_save(study=demo_study, api_token=token, via="test")
    call_command("prolific_webhooks", demo_study.slug, "create", "--new-secret")
    out = capsys.readouterr().out
    secret = fake_prolific.hook_secrets[workspace]["value"]
    assert secret not in out and "saved, encrypted, as the study's own webhook secret" in out
    assert {s["target_url"] for s in fake_prolific.hook_subscriptions.values()} == {
        f"https://study.example.org/prolific/webhook/{demo_study.slug}/"}
    assert {c.authorization for c in fake_prolific.calls} == {f"Token {token}"}
    assert credentials.study_webhook_secret(demo_study.pk) == secret
    assert AuditEntry.objects.filter(action="credentials.set", detail__via="prolific_webhooks").count() == 1
    event = {"event_type": "study.status.change", "resource_id": ps.prolific_id, "status": "PAUSED"}
    response = post(client, event, event_id="w-1", secret=secret, url=f"/prolific/webhook/{demo_study.slug}/")
    assert response.json()["outcome"] == "applied"


def test_the_key_file_serves_when_the_variable_is_unset(tmp_path):
    """Settings read PROLIFIC_CREDENTIALS_KEYS_FILE (serve.sh's var/credentials_key) when
    PROLIFIC_CREDENTIALS_KEYS is unset, so manage.py commands use the server's key; the
    variable wins when set."""
    import subprocess
    import sys

    key_file = tmp_path / "credentials_key"
    first, second = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    key_file.write_text(f"{first},{second}\n")
    code = "from django.conf import settings; print(len(settings.PROLIFIC_CREDENTIALS_KEYS), settings.PROLIFIC_CREDENTIALS_KEYS[0][:6])"
    env = {k: v for k, v in os.environ.items() if k != "PROLIFIC_CREDENTIALS_KEYS"}
    env.update(DJANGO_SETTINGS_MODULE="spotlight_study.settings", PROLIFIC_CREDENTIALS_KEYS_FILE=str(key_file))
    out = subprocess.run([sys.executable, "-c", "import django; django.setup(); " + code],
                         env=env, capture_output=True, text=True, check=True).stdout.split()
    assert out == ["2", first[:6]]
    env["PROLIFIC_CREDENTIALS_KEYS"] = second
    out = subprocess.run([sys.executable, "-c", "import django; django.setup(); " + code],
                         env=env, capture_output=True, text=True, check=True).stdout.split()
    assert out == ["1", second[:6]]
