"""One truth for a participant's Prolific status: after contradicting events (returned, then
timed out, in either order, through the webhook and the sync), every participant's status
agrees with its submission, which holds Prolific's latest status by Prolific's own time; a
disagreement that remains is shown on the review page. ``RETURNED`` with a zero-width space
reads alike in the webhook and the sync, and ``SCREENED OUT`` frees the place as a return does."""
from __future__ import annotations

import random
import time

import pytest

from spotlight_study.participation.models import Participant
from spotlight_study.prolific.models import Submission
from spotlight_study.prolific.selectors import FREEING_STATUSES, status_disagreements
from spotlight_study.prolific.services import submissions
from spotlight_study.prolific.statuses import status_normalize

from .conftest import arrive
from .test_statuses import places_held
from .test_webhook import SECRET, post, status_event


@pytest.fixture
def secret(settings) -> str:
    settings.PROLIFIC_WEBHOOK_SECRET = SECRET
    return SECRET


def _agrees(p: Participant) -> bool:
    sub = Submission.objects.get(submission_id=p.prolific_session_id)
    return FREEING_STATUSES.get(sub.status) == p.status


def test_contradicting_events_in_either_order_leave_participant_and_submission_agreeing(
    client, secret, linked, fake_prolific
):
    """30 participants: RETURNED and TIMED-OUT, one through the webhook (older or newer by
    Prolific's time) and one through the sync, the webhook arriving before or after the sync,
    in a seeded random mix: every submission holds the later status and every participant agrees."""
    seed = random.randrange(2**32)
    print(f"seed {seed}")
    rng = random.Random(seed)
    now = time.time()
    plan = []  # (participant, webhook status, webhook time, webhook before the sync?)
    expected = {}
    for _ in range(30):
        _, p = arrive(linked.study.slug)
        sync_status, webhook_status = rng.sample(["RETURNED", "TIMED-OUT"], 2)
        newer = rng.random() < 0.5
        webhook_time = now + 60 if newer else now - 120  # the sync asks Prolific at about `now`
        fake_prolific.add_submission(linked.prolific_id, participant_id=p.prolific_pid,
                                     submission_id=p.prolific_session_id, status=sync_status)
        plan.append((p, webhook_status, webhook_time, rng.random() < 0.5))
        expected[p.pk] = webhook_status if newer else sync_status

    def send_webhooks(before: bool) -> None:
        for i, (p, status, event_time, first) in enumerate(plan):
            if first == before:
                post(client, status_event(p, status), event_id=f"w-{p.pk}", sent=time.time(), event_time=event_time)

    send_webhooks(before=True)
    submissions.submissions_sync(prolific_study_id=linked.pk)
    send_webhooks(before=False)
    disagreeing = []
    for p, *_ in plan:
        p.refresh_from_db()
        sub = Submission.objects.get(submission_id=p.prolific_session_id)
        assert sub.status == expected[p.pk], (seed, p.pk, sub.status, expected[p.pk])
        if not _agrees(p):
            disagreeing.append((p.pk, p.status, sub.status))
    assert disagreeing == [], f"seed {seed}: {len(disagreeing)} of 30 disagree: {disagreeing}"
    assert status_disagreements(prolific_study=linked) == []
    assert places_held(linked.study) == 0


def test_a_zero_width_space_after_returned_reads_alike_in_webhook_and_sync(client, secret, linked, fake_prolific):
    """RETURNED\\u200b: the webhook and the sync both read RETURNED and end the participant."""
    assert status_normalize("RETURNED\u200b") == status_normalize("\ufeffRETURNED") == "RETURNED"
    _, by_webhook = arrive(linked.study.slug)
    _, by_sync = arrive(linked.study.slug)
    assert post(client, status_event(by_webhook, "RETURNED\u200b"), event_id="zw-1").json()["outcome"] == "applied"
    fake_prolific.add_submission(linked.prolific_id, participant_id=by_sync.prolific_pid,
                                 submission_id=by_sync.prolific_session_id, status="RETURNED\u200b")
    report = submissions.submissions_sync(prolific_study_id=linked.pk)
    assert report.ignored == 0 and report.unknown == {}
    for p in (by_webhook, by_sync):
        p.refresh_from_db()
        assert p.status == Participant.Status.RETURNED
        assert Submission.objects.get(submission_id=p.prolific_session_id).status == "RETURNED"


@pytest.mark.parametrize("route", ["webhook", "sync"])
def test_screened_out_frees_the_place_at_once(client, secret, linked, fake_prolific, route):
    """SCREENED OUT ends the participant and frees the place, as RETURNED does."""
    _, p = arrive(linked.study.slug)
    assert places_held(linked.study) == 1
    if route == "webhook":
        post(client, status_event(p, "SCREENED OUT"), event_id="so-1")
    else:
        fake_prolific.add_submission(linked.prolific_id, participant_id=p.prolific_pid,
                                     submission_id=p.prolific_session_id, status="SCREENED-OUT")
        submissions.submissions_sync(prolific_study_id=linked.pk)
    p.refresh_from_db()
    assert p.status == Participant.Status.RETURNED and places_held(linked.study) == 0
    assert status_disagreements(prolific_study=linked) == []


def test_a_remaining_disagreement_is_shown_on_the_review_page(client, secret, linked, staff_client):
    """Returned here, then approved later on Prolific: the participant keeps no place back, and
    the review page names the disagreement."""
    _, p = arrive(linked.study.slug, complete=True)
    now = time.time()
    post(client, status_event(p, "RETURNED"), event_id="d-1", sent=now, event_time=now - 60)
    post(client, status_event(p, "APPROVED"), event_id="d-2", sent=now, event_time=now)
    rows = status_disagreements(prolific_study=linked)
    assert [(r["participant_status"], r["submission_status"]) for r in rows] == [("returned", "APPROVED")]
    page = staff_client.get(f"/prolific/{linked.study.slug}/").content.decode()
    assert "disagree" in page and "APPROVED" in page
