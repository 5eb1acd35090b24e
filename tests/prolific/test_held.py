"""Held submissions: bulk approval holds back flagged and excluded answers, and a researcher
decides on each one once (page, API, command), against the fake Prolific server."""
from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.db import IntegrityError, transaction
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from spotlight_study.annotation.models import FinalLabel, Item
from spotlight_study.annotation.selectors import answer_digest
from spotlight_study.participation.models import TaskResponse
from spotlight_study.participation.selectors import participant_pseudonym
from spotlight_study.prolific.models import ReviewDecision, Submission
from spotlight_study.prolific.services import review, submissions

from ..annotation.conftest import make_user
from .conftest import arrive

LONG_MESSAGE = (
    "Your answers were pasted in from elsewhere and one repeats a text shown in the task, which "
    "the instructions asked you not to do; we cannot accept this submission."
)


def _awaiting(linked, fake_prolific, p) -> None:
    fake_prolific.add_submission(linked.prolific_id, participant_id=p.prolific_pid,
                                 submission_id=p.prolific_session_id, status="AWAITING REVIEW")


def _pasted(p) -> None:
    """The browser reported a paste into ``p``'s first main answer."""
    TaskResponse.objects.filter(participant=p, position=1).update(paste_count=1, paste_chars=240)


def _excluded(p, exclusion: str) -> None:
    """A final label that excludes ``p``'s first main answer as ``exclusion``."""
    response = TaskResponse.objects.select_related("setting").get(participant=p, position=1)
    item = Item.objects.create(study=p.study, response=response, setting=response.setting,
                               answer_digest=answer_digest(response.answer))
    FinalLabel.objects.create(item=item, source=FinalLabel.Source.AGREEMENT, identified=True,
                              surface_difference=False, no_difference=False, tags=[],
                              exclusion=exclusion, decided_at=timezone.now())


@pytest.fixture
def mixed(linked, fake_prolific):
    """Four completed participants awaiting review, synced: ``ok`` (nothing), ``pasted`` (a
    paste), ``ai`` (a final label ``ai_generated``), ``copied`` (``copy_pasted``)."""
    people = {}
    for name in ("ok", "pasted", "ai", "copied"):
        _, p = arrive(linked.study.slug, complete=True)
        _awaiting(linked, fake_prolific, p)
        people[name] = p
    _pasted(people["pasted"])
    _excluded(people["ai"], "ai_generated")
    _excluded(people["copied"], "copy_pasted")
    submissions.submissions_sync(prolific_study_id=linked.pk)
    return people


def _pseudonym(linked, p) -> str:
    return participant_pseudonym(study=linked.study, prolific_pid=p.prolific_pid)


def test_bulk_approval_sends_only_unflagged_submissions(linked, fake_prolific, mixed):
    """The dry run lists the three held submissions and why; approval sends only the clean one."""
    dry = review.submissions_approve_completed(prolific_study_id=linked.pk, dry_run=True)
    assert (dry.selected, dry.api_calls, len(dry.held)) == (1, 0, 3)
    why = {h["participant"]: h["reasons"] for h in dry.held}
    assert why[_pseudonym(linked, mixed["pasted"])] == ["flag: pasted"]
    # The excluded answer is the first main task, whose setting depends on the cell.
    ai, copied = why[_pseudonym(linked, mixed["ai"])], why[_pseudonym(linked, mixed["copied"])]
    assert len(ai) == 1 and ai[0].startswith("final label of ") and ai[0].endswith(": ai_generated")
    assert len(copied) == 1 and copied[0].endswith(": copy_pasted")
    report = review.submissions_approve_completed(prolific_study_id=linked.pk)
    assert (report.selected, report.done, report.api_calls) == (1, 1, 1)
    assert fake_prolific.calls[-1].body == {"submission_ids": [mixed["ok"].prolific_session_id]}
    assert fake_prolific.submissions[mixed["pasted"].prolific_session_id]["status"] == "AWAITING REVIEW"
    again = review.submissions_approve_completed(prolific_study_id=linked.pk)
    assert (again.selected, len(again.held)) == (0, 3)


def test_the_command_prints_the_count_of_held_submissions(linked, fake_prolific, mixed):
    """`prolific_review --approve --dry-run` says how many are held and why; `--held` shows the
    evidence with Prolific's rule."""
    out = StringIO()
    call_command("prolific_review", linked.study.slug, "--approve", "--dry-run", stdout=out)
    text = out.getvalue()
    print(text)  # the closing note quotes this count
    assert "Would approve 1 of 1" in text and "Held for review: 3 submission(s)." in text
    assert _pseudonym(linked, mixed["pasted"]) in text and "flag: pasted" in text
    assert mixed["pasted"].prolific_pid not in text
    out = StringIO()
    call_command("prolific_review", linked.study.slug, "--held", stdout=out)
    assert "3 submission(s) held; 1 to approve in bulk." in out.getvalue()
    assert "reject only with clear evidence" in out.getvalue()
    assert fake_prolific.count("POST", r"submissions/.*") == 0


def test_study_file_holding_flags_decide_what_holds(linked, fake_prolific, mixed):
    """With no holding flag the pasted answer is approved; final-label exclusions still hold."""
    type(linked.study).objects.filter(pk=linked.study.pk).update(holding_flags=[])
    report = review.submissions_approve_completed(prolific_study_id=linked.pk, dry_run=True)
    assert (report.selected, len(report.held)) == (2, 2)


def test_held_page_lists_evidence_and_states_the_rule(staff_client, linked, mixed):
    """The page shows each held pseudonym, its flags, answers and exclusion, and Prolific's rule."""
    html = staff_client.get(f"/prolific/{linked.study.slug}/held/").content.decode()
    assert "3 submission(s) held; 1 to approve in bulk." in html
    assert "reject a submission only with clear evidence" in html
    assert "prefer asking the participant to return" in html
    for name in ("pasted", "ai", "copied"):
        assert _pseudonym(linked, mixed[name]) in html
        assert mixed[name].prolific_pid not in html
    assert "<code>ai_generated</code>" in html and "<code>pasted</code>" in html
    assert "Group 2 describes the doctor as a woman more often." in html
    assert _pseudonym(linked, mixed["ok"]) not in html
    review_page = staff_client.get(f"/prolific/{linked.study.slug}/").content.decode()
    assert "3 held for review" in review_page and "Approve 1 in bulk" in review_page


def test_approve_from_the_page_is_confirmed_recorded_and_sent_once(staff_client, linked, fake_prolific, mixed):
    """Approve: a confirmation page, nothing sent without the tick, then one transition; a second
    post (double click, other tab) sends nothing."""
    sub = mixed["pasted"].prolific_session_id
    url = f"/prolific/{linked.study.slug}/held/{sub}/approve/"
    confirm = staff_client.get(url).content.decode()
    assert "please confirm" in confirm and _pseudonym(linked, mixed["pasted"]) in confirm
    refused = staff_client.post(url, {"note": "looks fine"}).content.decode()
    assert "Tick the confirmation" in refused
    assert fake_prolific.count("POST", rf"submissions/{sub}/transition/") == 0
    done = staff_client.post(url, {"note": "pasted from own notes", "confirm": "on"}, follow=True)
    assert "Done on Prolific: approve" in done.content.decode()
    again = staff_client.post(url, {"note": "pasted from own notes", "confirm": "on"}, follow=True)
    assert "nothing was sent again" in again.content.decode()
    assert fake_prolific.count("POST", rf"submissions/{sub}/transition/") == 1
    assert fake_prolific.submissions[sub]["status"] == "APPROVED"
    decision = ReviewDecision.objects.get()
    assert (decision.action, decision.outcome, decision.note) == ("approve", "done", "pasted from own notes")
    assert decision.decided_by.is_staff and decision.decided_at is not None
    assert decision.evidence["pseudonym"] == _pseudonym(linked, mixed["pasted"])
    assert decision.evidence["holding_flags"] == ["pasted"] and decision.evidence["answers"]
    assert Submission.objects.get(submission_id=sub).review_action == "approved"
    # Another action on the same submission is refused: a submission is decided once.
    other = staff_client.post(f"/prolific/{linked.study.slug}/held/{sub}/reject/",
                              {"rejection_category": "LOW_EFFORT", "message": LONG_MESSAGE, "confirm": "on"},
                              follow=True)
    assert "decided already" in other.content.decode()
    assert fake_prolific.count("POST", rf"submissions/{sub}/transition/") == 1


def test_return_from_the_page_is_asked_once(staff_client, linked, fake_prolific, mixed):
    """Ask for a return: one request-return with the neutral reason; a repeat sends nothing."""
    sub = mixed["ai"].prolific_session_id
    url = f"/prolific/{linked.study.slug}/held/{sub}/request_return/"
    for _ in range(2):
        staff_client.post(url, {"confirm": "on"}, follow=True)
    assert fake_prolific.count("POST", rf"submissions/{sub}/request-return/") == 1
    assert fake_prolific.calls[-1].body == {"request_return_reasons": [review.HELD_RETURN_REASON]}
    assert Submission.objects.get(submission_id=sub).review_action == "return_requested"


def test_reject_needs_a_category_and_100_characters_before_sending(staff_client, linked, fake_prolific, mixed):
    """A short message or no category is refused on the page (nothing recorded or sent); a valid
    rejection is sent once with the category and message."""
    sub = mixed["copied"].prolific_session_id
    url = f"/prolific/{linked.study.slug}/held/{sub}/reject/"
    short = staff_client.post(url, {"rejection_category": "LOW_EFFORT", "message": "Copied.", "confirm": "on"})
    assert "at least 100 characters" in short.content.decode()
    nocat = staff_client.post(url, {"rejection_category": "", "message": LONG_MESSAGE, "confirm": "on"})
    assert "Choose a rejection category (rejection_category): one of" in nocat.content.decode()
    assert ReviewDecision.objects.count() == 0 and fake_prolific.count("POST", r"submissions/.*/transition/") == 0
    for _ in range(2):
        staff_client.post(url, {"rejection_category": "LOW_EFFORT", "message": LONG_MESSAGE, "confirm": "on"})
    assert fake_prolific.count("POST", rf"submissions/{sub}/transition/") == 1
    assert fake_prolific.calls[-1].body == {"action": "REJECT", "rejection_category": "LOW_EFFORT", "message": LONG_MESSAGE}
    assert fake_prolific.submissions[sub]["status"] == "REJECTED"


def test_a_return_without_an_answer_is_never_sent_again(linked, fake_prolific, mixed):
    """Prolific failing on a return (not idempotent) leaves the decision unknown: no resend."""
    sub = mixed["ai"].prolific_session_id
    fake_prolific.fail("POST", f"submissions/{sub}/request-return/", 503, times=3)
    with pytest.raises(review.ReviewSendFailed, match="will not be sent again"):
        review.held_submission_decide(prolific_study_id=linked.pk, submission_id=sub, action="request_return",
                                      confirmed=True, decided_via="api")
    assert ReviewDecision.objects.get().outcome == "unknown"
    again = review.held_submission_decide(prolific_study_id=linked.pk, submission_id=sub,
                                          action="request_return", confirmed=True)
    assert again.created is False
    assert fake_prolific.count("POST", rf"submissions/{sub}/request-return/") == 1
    # It stays held (not in bulk approval) while its outcome is unknown.
    held = review.submissions_approve_completed(prolific_study_id=linked.pk, dry_run=True).held
    assert any(h["submission"] == sub for h in held)


def test_a_refused_decision_can_be_made_again(linked, fake_prolific, mixed):
    """Prolific refusing (4xx) means nothing happened: the failed row stays, a new one is sent."""
    sub = mixed["pasted"].prolific_session_id
    fake_prolific.fail("POST", f"submissions/{sub}/transition/", 400,
                       body=fake_prolific.error(400, 140100, "Request validation failed.", "No."))
    with pytest.raises(review.ReviewSendFailed, match="you may decide again"):
        review.held_submission_decide(prolific_study_id=linked.pk, submission_id=sub, action="approve", confirmed=True)
    result = review.held_submission_decide(prolific_study_id=linked.pk, submission_id=sub, action="approve", confirmed=True)
    assert result.created and result.decision.outcome == "done"
    assert list(ReviewDecision.objects.values_list("outcome", flat=True).order_by("pk")) == ["failed", "done"]


def test_the_database_allows_one_active_decision_per_submission(linked, mixed):
    """The unique constraint refuses a second sent/done decision, whatever the code does."""
    sub = Submission.objects.get(submission_id=mixed["pasted"].prolific_session_id)
    ReviewDecision.objects.create(submission=sub, action="approve", decided_at=timezone.now())
    with pytest.raises(IntegrityError), transaction.atomic():
        ReviewDecision.objects.create(submission=sub, action="reject", decided_at=timezone.now())


def test_api_lists_held_and_decides_once(linked, fake_prolific, mixed):
    """GET held lists the evidence; a decision needs confirm; the same decision twice sends once."""
    api = APIClient()
    user = make_user("api-reviewer", staff=True)
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    base = f"/api/studies/{linked.study.slug}/prolific/held/"
    listed = api.get(base).json()
    assert len(listed) == 3 and {"reasons", "flags", "exclusions", "answers", "participant"} <= listed[0].keys()
    sub = mixed["copied"].prolific_session_id
    unconfirmed = api.post(f"{base}{sub}/decide/", {"action": "approve"}, format="json")
    assert unconfirmed.status_code == 400 and unconfirmed.json()["error"]["code"] == "confirmation_required"
    bad = api.post(f"{base}{sub}/decide/", {"action": "reject", "rejection_category": "LOW_EFFORT",
                                            "message": "Too short.", "confirm": True}, format="json")
    assert bad.status_code == 400
    body = {"action": "reject", "rejection_category": "LOW_EFFORT", "message": LONG_MESSAGE, "confirm": True,
            "note": "copy of a shown text"}
    first = api.post(f"{base}{sub}/decide/", body, format="json")
    assert first.status_code == 200 and first.json()["created"] is True
    assert first.json()["decision"]["decided_by"] == "api-reviewer"
    second = api.post(f"{base}{sub}/decide/", body, format="json")
    assert second.status_code == 200 and second.json()["created"] is False
    assert fake_prolific.count("POST", rf"submissions/{sub}/transition/") == 1
    other = api.post(f"{base}{sub}/decide/", {"action": "approve", "confirm": True}, format="json")
    assert other.status_code == 409 and other.json()["error"]["code"] == "already_decided"
    missing = api.post(f"{base}{'0' * 24}/decide/", {"action": "approve", "confirm": True}, format="json")
    assert missing.status_code == 404


def test_command_decides_with_yes_only(linked, fake_prolific, mixed):
    """`--decide PSEUDONYM --action ...` shows what would be sent; with --yes it sends once."""
    who = _pseudonym(linked, mixed["ai"])
    out = StringIO()
    call_command("prolific_review", linked.study.slug, "--decide", who, "--action", "request_return", stdout=out)
    assert "Nothing was sent" in out.getvalue()
    assert fake_prolific.count("POST", r"submissions/.*/request-return/") == 0
    for _ in range(2):
        out = StringIO()
        call_command("prolific_review", linked.study.slug, "--decide", who, "--action", "request_return",
                     "--note", "AI label", "--yes", stdout=out)
    assert "nothing was sent again" in out.getvalue()
    assert fake_prolific.count("POST", r"submissions/.*/request-return/") == 1
    assert ReviewDecision.objects.get().decided_via == "command"


def test_two_requests_at_once_send_one_decision(transactional_db, linked, fake_prolific, mixed):
    """Two tabs (threads, own connections) confirm the same return at the same instant: one
    records and sends it, the other finds it; Prolific gets one request."""
    import threading

    from django.db import connection

    sub = mixed["ai"].prolific_session_id
    barrier = threading.Barrier(2)
    results, errors = [], []

    def decide():
        try:
            barrier.wait(timeout=60)
            results.append(review.held_submission_decide(
                prolific_study_id=linked.pk, submission_id=sub, action="request_return", confirmed=True,
            ).created)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=decide) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors
    assert sorted(results) == [False, True]
    assert fake_prolific.count("POST", rf"submissions/{sub}/request-return/") == 1
    assert ReviewDecision.objects.filter(submission__submission_id=sub).count() == 1
