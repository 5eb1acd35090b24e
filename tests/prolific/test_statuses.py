"""Prolific submission statuses in any spelling, unknown statuses, and completed participants
whose submission ends on Prolific: the sync and the webhook agree with the pages and the export."""
from __future__ import annotations

import logging

import pytest

from spotlight_study.results.exports import export_rows
from spotlight_study.participation.models import Participant
from spotlight_study.participation.selectors import cell_counts, participant_pseudonym, study_dashboard
from spotlight_study.prolific.models import ProlificStudy, Submission, WebhookEvent
from spotlight_study.prolific.services import submissions
from spotlight_study.prolific.statuses import STATUS_RANK, status_normalize
from spotlight_study.studies.selectors import study_cells

from .conftest import arrive
from .test_webhook import SECRET, post, status_event

# (as Prolific or an integration may spell it, canonical, the participant's status here)
SPELLINGS = [
    ("TIMED OUT", "TIMED-OUT", Participant.Status.TIMED_OUT),
    ("timed-out", "TIMED-OUT", Participant.Status.TIMED_OUT),
    ("Timed-Out", "TIMED-OUT", Participant.Status.TIMED_OUT),
    ("TIMED_OUT", "TIMED-OUT", Participant.Status.TIMED_OUT),
    ("  timed__out\t", "TIMED-OUT", Participant.Status.TIMED_OUT),
    ("returned", "RETURNED", Participant.Status.RETURNED),
    ("Returned", "RETURNED", Participant.Status.RETURNED),
    (" REJECTED ", "REJECTED", Participant.Status.REJECTED),
    ("rejected", "REJECTED", Participant.Status.REJECTED),
]


@pytest.fixture
def secret(settings) -> str:
    """The workspace secret the webhook verifies with."""
    settings.PROLIFIC_WEBHOOK_SECRET = SECRET
    return SECRET


def places_held(study) -> int:
    """Places held over all cells of the study (each test here has one participant)."""
    return sum(cell_counts(study=study, n_cells=len(study_cells(study))).values())


@pytest.mark.parametrize("given, canonical", [(g, c) for g, c, _ in SPELLINGS] + [
    ("awaiting_review", "AWAITING REVIEW"), ("Awaiting-Review", "AWAITING REVIEW"),
    ("approved", "APPROVED"), ("screened-out", "SCREENED OUT"), ("processing", "PROCESSING"),
])
def test_status_normalize_reads_every_spelling(given, canonical):
    """Case, surrounding whitespace, spaces, hyphens and underscores do not matter."""
    assert status_normalize(given) == canonical


@pytest.mark.parametrize("given", ["", "   ", "TIMEDOUTX", "FOO", None, 3, ["RETURNED"]])
def test_status_normalize_refuses_what_it_does_not_know(given):
    """Unknown, empty and non-string statuses give None."""
    assert status_normalize(given) is None


def test_every_ranked_status_is_its_own_canonical_form():
    """The stored spellings are fixed points of the normalization."""
    assert all(status_normalize(s) == s for s in STATUS_RANK)


@pytest.mark.parametrize("given, canonical, ours", SPELLINGS)
def test_webhook_applies_every_spelling(client, secret, linked, given, canonical, ours):
    """A webhook with the status in any spelling ends the participant and frees the place."""
    _, p = arrive(linked.study.slug)
    response = post(client, status_event(p, given), event_id=f"evt-{given}")
    assert response.status_code == 200 and response.json()["outcome"] == "applied"
    p.refresh_from_db()
    assert p.status == ours and places_held(p.study) == 0
    assert Submission.objects.get(submission_id=p.prolific_session_id).status == canonical
    assert WebhookEvent.objects.get().status == canonical


@pytest.mark.parametrize("given, canonical, ours", SPELLINGS)
def test_sync_applies_every_spelling(linked, fake_prolific, given, canonical, ours):
    """A sync that reads the status in any spelling ends the participant and frees the place."""
    _, p = arrive(linked.study.slug)
    fake_prolific.add_submission(linked.prolific_id, participant_id=p.prolific_pid,
                                 submission_id=p.prolific_session_id, status=given)
    report = submissions.submissions_sync(prolific_study_id=linked.pk)
    assert (report.created, report.freed, report.ignored) == (1, 1, 0)
    p.refresh_from_db()
    assert p.status == ours and places_held(p.study) == 0
    assert Submission.objects.get(submission_id=p.prolific_session_id).status == canonical


def test_sync_logs_and_shows_unknown_statuses(linked, fake_prolific, staff_client, caplog):
    """An unknown status is skipped, logged by name (no ids) and named on the review page."""
    _, p = arrive(linked.study.slug)
    fake_prolific.add_submission(linked.prolific_id, participant_id=p.prolific_pid,
                                 submission_id=p.prolific_session_id, status="On-Hold")
    fake_prolific.add_submission(linked.prolific_id, status="PROCESSING")  # known, transient
    with caplog.at_level(logging.WARNING, logger="spotlight_study.prolific.services"):
        report = submissions.submissions_sync(prolific_study_id=linked.pk)
    assert (report.ignored, report.unknown) == (2, {"On-Hold": 1})
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "'On-Hold'" in logged and "PROCESSING" not in logged
    assert p.prolific_pid not in logged and p.prolific_session_id not in logged
    assert Submission.objects.count() == 0
    p.refresh_from_db()
    assert p.status == Participant.Status.IN_PROGRESS
    assert list(ProlificStudy.objects.get(pk=linked.pk).unknown_statuses) == ["On-Hold"]
    html = staff_client.get(f"/prolific/{linked.study.slug}/").content.decode()
    assert "does not know" in html and "<code>On-Hold</code>" in html


def test_webhook_logs_and_shows_unknown_statuses(client, secret, linked, staff_client, caplog):
    """A webhook with an unknown status answers 200 (no redelivery), changes nothing, is logged and shown."""
    _, p = arrive(linked.study.slug)
    with caplog.at_level(logging.WARNING, logger="spotlight_study.prolific.services"):
        response = post(client, status_event(p, "PAUSED BY ADMIN"), event_id="unknown-1")
    assert response.status_code == 200 and response.json()["outcome"] == "unknown_status"
    assert "'PAUSED BY ADMIN'" in " ".join(r.getMessage() for r in caplog.records)
    p.refresh_from_db()
    assert p.status == Participant.Status.IN_PROGRESS and Submission.objects.count() == 0
    html = staff_client.get(f"/prolific/{linked.study.slug}/").content.decode()
    assert "<code>PAUSED BY ADMIN</code>" in html


def test_review_page_without_unknown_statuses_has_no_notice(linked, staff_client):
    """No unknown status seen: the review page shows no notice."""
    assert "does not know" not in staff_client.get(f"/prolific/{linked.study.slug}/").content.decode()


@pytest.mark.parametrize("channel", ["webhook", "sync"])
@pytest.mark.parametrize("given, ours", [
    ("Returned", Participant.Status.RETURNED),
    ("rejected", Participant.Status.REJECTED),
    ("TIMED_OUT", Participant.Status.TIMED_OUT),
])
def test_a_completed_participant_ended_on_prolific_is_consistent_everywhere(
    client, secret, linked, fake_prolific, channel, given, ours
):
    """Completed here, then returned/rejected/timed out on Prolific: place freed, researcher page
    counts and export status agree, answers kept."""
    study = linked.study
    _, p = arrive(study.slug, complete=True)
    assert places_held(study) == 1 and study_dashboard(study=study)["totals"]["completed"] == 1
    if channel == "webhook":
        assert post(client, status_event(p, given), event_id="end").json()["outcome"] == "applied"
    else:
        fake_prolific.add_submission(linked.prolific_id, participant_id=p.prolific_pid,
                                     submission_id=p.prolific_session_id, status=given)
        assert submissions.submissions_sync(prolific_study_id=linked.pk).freed == 1
    p.refresh_from_db()
    assert p.status == ours and places_held(p.study) == 0
    totals = study_dashboard(study=study)["totals"]
    assert (totals["completed"], totals["ended"]) == (0, 1)
    pseudonym = participant_pseudonym(study=study, prolific_pid=p.prolific_pid)
    exported = {r["participant"]: r["status"] for r in export_rows(study=study)["participants"]}
    assert exported == {pseudonym: ours}
    assert p.responses.filter(answered_at__isnull=False).count() == 3
