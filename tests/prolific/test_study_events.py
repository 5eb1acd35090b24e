"""Study-level webhook events (stored, shown) and ``manage.py prolific_webhooks`` against the fake."""
from __future__ import annotations

import time

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from spotlight_study.prolific.models import ProlificStudy, WebhookEvent

from .test_webhook import post, prolific_demo, secret  # noqa: F401  (fixtures)

WORKSPACE = "d" * 24


def _study_event(ps: ProlificStudy, status: str) -> dict:
    return {"event_type": "study.status.change", "resource_id": ps.prolific_id, "status": status}


def test_study_status_events_are_stored_and_shown(client, secret, prolific_demo, staff_client):
    """PAUSED then AWAITING REVIEW are stored on the study and shown on the study page."""
    now = time.time()
    r = post(client, _study_event(prolific_demo, "PAUSED"), event_id="s1", event_time=now - 60)
    assert r.status_code == 200 and r.json()["outcome"] == "applied"
    post(client, _study_event(prolific_demo, "awaiting_review"), event_id="s2", event_time=now)
    prolific_demo.refresh_from_db()
    assert prolific_demo.prolific_status == "AWAITING REVIEW" and prolific_demo.prolific_status_at is not None
    html = staff_client.get(f"/researcher/{prolific_demo.study.slug}/").content.decode()
    assert "awaiting review, since" in html
    assert WebhookEvent.objects.filter(event_type="study.status.change").count() == 2


def test_a_late_study_event_does_not_move_the_status_back(client, secret, prolific_demo):
    """COMPLETED observed later wins over an older PAUSED that arrives after it."""
    now = time.time()
    post(client, _study_event(prolific_demo, "COMPLETED"), event_id="a", event_time=now)
    late = post(client, _study_event(prolific_demo, "PAUSED"), event_id="b", event_time=now - 120)
    assert late.json()["outcome"] == "stale"
    prolific_demo.refresh_from_db()
    assert prolific_demo.prolific_status == "COMPLETED"


def test_unknown_and_unmatched_study_events_change_nothing(client, secret, prolific_demo):
    """An unknown status or a study not here is answered 200 and changes no study."""
    assert post(client, _study_event(prolific_demo, "EXPLODED"), event_id="u").json()["outcome"] == "unknown_status"
    other = {"event_type": "study.status.change", "resource_id": "e" * 24, "status": "PAUSED"}
    assert post(client, other, event_id="v").json()["outcome"] == "unmatched"
    prolific_demo.refresh_from_db()
    assert prolific_demo.prolific_status == ""


@pytest.fixture
def hooks_settings(prolific_settings):
    """An https base URL and the workspace id."""
    prolific_settings.PROLIFIC_STUDY_BASE_URL = "https://study.example.org"
    prolific_settings.PROLIFIC_WORKSPACE_ID = WORKSPACE
    return prolific_settings


def test_create_list_delete_subscriptions(linked, fake_prolific, hooks_settings, capsys):
    """create makes a secret and two confirmed subscriptions once; list shows them; delete removes them."""
    with pytest.raises(CommandError, match="--new-secret"):
        call_command("prolific_webhooks", linked.study.slug, "create")
    call_command("prolific_webhooks", linked.study.slug, "create", "--new-secret")
    out = capsys.readouterr().out
    secret = fake_prolific.hook_secrets[WORKSPACE]["value"]
    assert secret in out and "Created and confirmed 2 subscription(s)" in out
    subs = list(fake_prolific.hook_subscriptions.values())
    assert sorted(s["event_type"] for s in subs) == ["study.status.change", "submission.status.change"]
    assert all(s["is_enabled"] and s["target_url"] == "https://study.example.org/prolific/webhook/" for s in subs)
    hooks_settings.PROLIFIC_WEBHOOK_SECRET = secret
    call_command("prolific_webhooks", linked.study.slug, "create")
    assert len(fake_prolific.hook_subscriptions) == 2 and "Created" not in capsys.readouterr().out
    fake_prolific.fail("GET", "hooks/subscriptions/", 503)  # retried like the other reads
    call_command("prolific_webhooks", linked.study.slug, "list")
    assert "Subscriptions of workspace" in capsys.readouterr().out
    call_command("prolific_webhooks", linked.study.slug, "delete")
    assert fake_prolific.hook_subscriptions == {} and "Deleted 2" in capsys.readouterr().out


def test_without_an_https_base_url_nothing_is_sent(linked, fake_prolific, hooks_settings):
    """Prolific needs an https target: the command says so before any request."""
    hooks_settings.PROLIFIC_STUDY_BASE_URL = "http://localhost:8000"
    before = len(fake_prolific.calls)
    with pytest.raises(CommandError, match="https"):
        call_command("prolific_webhooks", linked.study.slug, "create", "--new-secret")
    assert len(fake_prolific.calls) == before
