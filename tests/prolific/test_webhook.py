"""The webhook at /prolific/webhook/: signature, staleness, deduplication and ordering."""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time

import pytest

from spotlight_study.participation.models import Participant
from spotlight_study.participation.selectors import cell_counts
from spotlight_study.prolific.models import ProlificStudy, Submission, WebhookEvent
from spotlight_study.studies.selectors import study_cells

from .conftest import arrive

SECRET = "whsec-test-0123456789"
URL = "/prolific/webhook/"


@pytest.fixture
def secret(settings) -> str:
    """The workspace secret the webhook verifies with."""
    settings.PROLIFIC_WEBHOOK_SECRET = SECRET
    return SECRET


@pytest.fixture
def prolific_demo(demo_study) -> ProlificStudy:
    """The demo study linked to a Prolific study."""
    return ProlificStudy.objects.create(study=demo_study, prolific_id="c" * 24, description="d", reward_minor_units=1)


def post(client, payload: dict, *, event_id: str, sent: float | None = None, secret: str = SECRET,
         signature: str | None = None, event_time: float | None = None, url: str = URL):
    """POST a webhook as Prolific signs it (base64 HMAC-SHA256 over timestamp + body) to ``url``."""
    body = json.dumps(payload, separators=(",", ":")).encode()
    timestamp = str(int(sent if sent is not None else time.time()))
    if signature is None:
        signature = base64.b64encode(hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()).decode()
    headers = {
        "HTTP_X_PROLIFIC_REQUEST_SIGNATURE": signature,
        "HTTP_X_PROLIFIC_REQUEST_TIMESTAMP": timestamp,
        "HTTP_X_EVENT_ID": event_id,
    }
    if event_time is not None:
        headers["HTTP_X_TIMESTAMP"] = str(int(event_time))
    return client.post(url, body, content_type="application/json", **headers)


def status_event(participant: Participant, status: str) -> dict:
    """A submission.status.change payload for the participant's submission."""
    return {
        "resource_id": participant.prolific_session_id,
        "event_type": "submission.status.change",
        "participant_id": participant.prolific_pid,
        "status": status,
    }


def test_valid_event_is_applied(client, secret, prolific_demo):
    """A correctly signed RETURNED event ends the participant and records the submission."""
    _, p = arrive(prolific_demo.study.slug)
    response = post(client, status_event(p, "RETURNED"), event_id="evt-1")
    assert response.status_code == 200
    assert response.json() == {"event": "evt-1", "duplicate": False, "outcome": "applied"}
    p.refresh_from_db()
    assert p.status == Participant.Status.RETURNED
    assert Submission.objects.get(submission_id=p.prolific_session_id).status == "RETURNED"


def test_invalid_signature_is_refused_and_changes_nothing(client, secret, prolific_demo):
    """A wrong signature (or a wrong secret) gets 401; nothing is stored or applied."""
    _, p = arrive(prolific_demo.study.slug)
    assert post(client, status_event(p, "RETURNED"), event_id="e", signature="bm90IGl0").status_code == 401
    assert post(client, status_event(p, "RETURNED"), event_id="e", secret="other").status_code == 401
    assert client.post(URL, b"{}", content_type="application/json").status_code == 401
    p.refresh_from_db()
    assert p.status == Participant.Status.IN_PROGRESS and WebhookEvent.objects.count() == 0


def test_prolifics_documented_signing_form_is_accepted(client, secret, prolific_demo):
    """The signature over json.dumps of the body (Prolific's Python example) also verifies."""
    _, p = arrive(prolific_demo.study.slug)
    payload = status_event(p, "AWAITING REVIEW")
    body = json.dumps(payload, separators=(",", ":")).encode()
    timestamp = str(int(time.time()))
    signature = base64.b64encode(
        hmac.new(SECRET.encode(), (timestamp + json.dumps(payload)).encode(), hashlib.sha256).digest()
    ).decode()
    response = client.post(
        URL, body, content_type="application/json",
        HTTP_X_PROLIFIC_REQUEST_SIGNATURE=signature, HTTP_X_PROLIFIC_REQUEST_TIMESTAMP=timestamp, HTTP_X_EVENT_ID="e2",
    )
    assert response.status_code == 200 and response.json()["outcome"] == "applied"


def test_stale_timestamp_is_refused(client, secret, prolific_demo, settings):
    """A request signed more than the tolerance ago (or ahead) gets 400 and is not stored."""
    _, p = arrive(prolific_demo.study.slug)
    old = time.time() - settings.PROLIFIC_WEBHOOK_TOLERANCE_SECONDS - 60
    assert post(client, status_event(p, "RETURNED"), event_id="old", sent=old).status_code == 400
    future = time.time() + settings.PROLIFIC_WEBHOOK_TOLERANCE_SECONDS + 60
    assert post(client, status_event(p, "RETURNED"), event_id="new", sent=future).status_code == 400
    assert WebhookEvent.objects.count() == 0
    p.refresh_from_db()
    assert p.status == Participant.Status.IN_PROGRESS


def test_duplicate_event_id_is_applied_once(client, secret, prolific_demo):
    """A redelivery with the same X-Event-ID answers 200 as a duplicate and applies nothing."""
    _, p = arrive(prolific_demo.study.slug)
    assert post(client, status_event(p, "AWAITING REVIEW"), event_id="evt-7").json()["duplicate"] is False
    again = post(client, status_event(p, "REJECTED"), event_id="evt-7")  # same id, altered body
    assert again.status_code == 200 and again.json()["duplicate"] is True
    assert WebhookEvent.objects.filter(event_id="evt-7").count() == 1
    assert Submission.objects.get(submission_id=p.prolific_session_id).status == "AWAITING REVIEW"
    p.refresh_from_db()
    assert p.status == Participant.Status.IN_PROGRESS


def test_out_of_order_events_never_move_a_submission_backwards(client, secret, prolific_demo):
    """APPROVED, then a late ACTIVE and AWAITING REVIEW: the submission stays APPROVED."""
    _, p = arrive(prolific_demo.study.slug, complete=True)
    now = time.time()
    assert post(client, status_event(p, "APPROVED"), event_id="a", event_time=now - 1).json()["outcome"] == "applied"
    late = post(client, status_event(p, "AWAITING REVIEW"), event_id="b", event_time=now - 30)
    assert late.json()["outcome"] == "stale"
    assert post(client, status_event(p, "ACTIVE"), event_id="c", event_time=now).json()["outcome"] == "stale"
    assert Submission.objects.get(submission_id=p.prolific_session_id).status == "APPROVED"
    p.refresh_from_db()
    assert p.status == Participant.Status.COMPLETED


def test_a_later_final_status_wins_over_an_earlier_one(client, secret, prolific_demo):
    """Between two final statuses the one sent later is kept, whatever the arrival order."""
    _, p = arrive(prolific_demo.study.slug, complete=True)
    now = time.time()
    post(client, status_event(p, "REJECTED"), event_id="later", event_time=now)
    assert post(client, status_event(p, "APPROVED"), event_id="earlier", event_time=now - 60).json()["outcome"] == "stale"
    assert Submission.objects.get(submission_id=p.prolific_session_id).status == "REJECTED"


def test_a_returned_participant_frees_a_slot_that_the_next_arrival_takes(client, secret, prolific_demo):
    """Four arrivals fill the cells; a RETURNED webhook frees one; the next arrival takes it."""
    study = prolific_demo.study
    arrivals = [arrive(study.slug)[1] for _ in range(4)]
    gone = arrivals[1]
    assert post(client, status_event(gone, "RETURNED"), event_id="ret").json()["outcome"] == "applied"
    assert cell_counts(study=study, n_cells=len(study_cells(study)))[gone.cell_index] == 0
    _, newcomer = arrive(study.slug)
    assert newcomer.cell_index == gone.cell_index


def test_events_for_unknown_submissions_and_other_types_are_kept(client, secret, prolific_demo):
    """An unknown submission is stored as unmatched; other event types are ignored."""
    unknown = {"resource_id": "d" * 24, "event_type": "submission.status.change",
               "participant_id": "e" * 24, "status": "RETURNED"}
    assert post(client, unknown, event_id="u").json()["outcome"] == "unmatched"
    # study.status.change is applied since issue 22 (test_study_events.py); another type is not.
    other = {"resource_id": "c" * 24, "event_type": "study.progress.change", "status": "COMPLETED"}
    assert post(client, other, event_id="s").json()["outcome"] == "ignored"
    assert Submission.objects.count() == 0


def test_without_a_secret_the_webhook_is_unavailable(client, settings, prolific_demo):
    """No PROLIFIC_WEBHOOK_SECRET: 503, so Prolific retries later."""
    settings.PROLIFIC_WEBHOOK_SECRET = ""
    assert post(client, {"event_type": "x"}, event_id="x").status_code == 503


def test_only_post_is_allowed(client, secret):
    """GET on the webhook is 405."""
    assert client.get(URL).status_code == 405


# --- hardening: nothing is parsed before the signature, no 500 from any body ---------------


def signed_post(client, body: bytes, *, event_id: str = "h", secret: str = SECRET):
    """POST raw bytes signed as Prolific signs them (timestamp + body)."""
    timestamp = str(int(time.time()))
    signature = base64.b64encode(hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()).decode()
    return client.post(
        URL, body, content_type="application/json",
        HTTP_X_PROLIFIC_REQUEST_SIGNATURE=signature, HTTP_X_PROLIFIC_REQUEST_TIMESTAMP=timestamp,
        HTTP_X_EVENT_ID=event_id,
    )


def test_deeply_nested_json_with_a_garbage_signature_is_401(db, client, secret):
    """40 KB of nested brackets and a made-up signature: 401, never a 500 (nothing parsed first)."""
    body = b"[" * 20000 + b"]" * 20000
    for _ in range(3):
        response = client.post(URL, body, content_type="application/json",
                               HTTP_X_PROLIFIC_REQUEST_SIGNATURE="garbage",
                               HTTP_X_PROLIFIC_REQUEST_TIMESTAMP=str(int(time.time())))
        assert response.status_code == 401
    nested_object = b'{"a":' * 10000 + b"1" + b"}" * 10000
    assert client.post(URL, nested_object, content_type="application/json",
                       HTTP_X_PROLIFIC_REQUEST_SIGNATURE="x",
                       HTTP_X_PROLIFIC_REQUEST_TIMESTAMP=str(int(time.time()))).status_code == 401
    assert WebhookEvent.objects.count() == 0


def test_deeply_nested_json_with_a_valid_signature_is_400(db, client, secret):
    """Even signed, a body nested beyond the limit is refused as malformed (400), not a 500."""
    assert signed_post(client, b"[" * 20000 + b"]" * 20000).status_code == 400
    assert signed_post(client, b'{"a":' * 5000 + b"1" + b"}" * 5000).status_code == 400
    assert WebhookEvent.objects.count() == 0


def test_a_body_over_the_cap_is_413_before_anything_else(db, client, secret):
    """A body over 64 KiB gets 413 whatever its signature; nothing is stored."""
    from spotlight_study.prolific.webhooks import MAX_BODY_BYTES

    body = b'{"event_type":"x","pad":"' + b"a" * MAX_BODY_BYTES + b'"}'
    assert signed_post(client, body).status_code == 413
    assert client.post(URL, body, content_type="application/json").status_code == 413
    assert WebhookEvent.objects.count() == 0


def test_signed_events_with_nul_are_stored_without_it_and_applied(client, secret, prolific_demo):
    """\\u0000 in a signed event: NUL removed on every database, event applied, 200 (no redelivery)."""
    _, p = arrive(prolific_demo.study.slug)
    payload = {**status_event(p, "RETURNED\u0000"), "note": "a\u0000b", "nested": [{"k\u0000": "\u0000"}]}
    response = post(client, payload, event_id="nul\u0000-1")
    assert response.status_code == 200 and response.json()["outcome"] == "applied"
    event = WebhookEvent.objects.get()
    assert event.event_id == "nul-1" and event.status == "RETURNED"
    assert event.payload["note"] == "ab" and event.payload["nested"] == [{"k": ""}]
    p.refresh_from_db()
    assert p.status == Participant.Status.RETURNED
    again = post(client, payload, event_id="nul\u0000-1")  # a redelivery is a duplicate, still 200
    assert again.status_code == 200 and again.json()["duplicate"] is True
    assert WebhookEvent.objects.count() == 1


def test_signed_events_with_lone_surrogates_do_not_500(client, secret, prolific_demo):
    """A lone UTF-16 surrogate (\\ud800) in a signed event is removed like NUL; 200."""
    _, p = arrive(prolific_demo.study.slug)
    payload = {**status_event(p, "AWAITING REVIEW"), "note": "x\ud800y"}
    response = post(client, payload, event_id="sur-1")
    assert response.status_code == 200 and response.json()["outcome"] == "applied"
    assert WebhookEvent.objects.get().payload["note"] == "xy"


@pytest.mark.parametrize("body", [b"[1, 2]", b'"text"', b"{}", b'{"event_type": ""}', b"\xff\xfe{", b""])
def test_signed_bodies_that_are_not_events_are_400(db, client, secret, body):
    """A signed body that is not a JSON object with an event_type gets 400 and stores nothing."""
    assert signed_post(client, body).status_code == 400
    assert WebhookEvent.objects.count() == 0


@pytest.mark.parametrize("number", [b"NaN", b"Infinity", b"-Infinity", b"1e400", b"-1e400", b"1" * 5000])
def test_signed_events_with_numbers_no_database_stores_are_400(client, secret, prolific_demo, number):
    """NaN, ±Infinity, 1e400 (overflows to infinity) or a 5,000-digit integer in a signed event:
    400 and nothing stored or applied, alike on SQLite and PostgreSQL (no 500, no false duplicate)."""
    _, p = arrive(prolific_demo.study.slug)
    body = json.dumps(status_event(p, "RETURNED"))[:-1].encode() + b', "score": ' + number + b"}"
    for attempt in range(2):  # a redelivery is refused alike, never taken for a duplicate
        response = signed_post(client, body, event_id=f"num-{attempt}")
        assert response.status_code == 400, response.content
        assert "number" in response.json()["detail"]
    assert WebhookEvent.objects.count() == 0
    p.refresh_from_db()
    assert p.status != Participant.Status.RETURNED
