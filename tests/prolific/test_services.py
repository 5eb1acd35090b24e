"""Prolific services against the fake server: the draft study, sync, review and bonuses."""
from __future__ import annotations

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.test import Client

from spotlight_study.participation.models import Participant
from spotlight_study.participation.selectors import cell_counts, participant_pseudonym
from spotlight_study.prolific.client import ProlificClient
from spotlight_study.prolific.errors import (
    AlreadyCreated,
    BonusAlreadySent,
    BonusCSVError,
    BonusPayFailed,
    ProlificAPIError,
    ProlificValidationError,
    StudyNotLive,
)
from spotlight_study.prolific.models import BonusPayment, ProlificStudy, Submission
from spotlight_study.prolific.services import bonuses, review, submissions
from spotlight_study.prolific.services import study as study_services
from spotlight_study.prolific.tasks import prolific_sync_study
from spotlight_study.studies.models import Study
from spotlight_study.studies.selectors import study_cells

from ..conftest import Walker
from .conftest import arrive

LONG_MESSAGE = (
    "Your answer to the instruction check shows that the instructions were not read; this "
    "submission cannot be accepted under the study's stated criteria."
)


def configure(study, **overrides) -> ProlificStudy:
    """Prolific settings for ``study`` (reward 2.00, group for repeat participation)."""
    data = dict(
        study=study,
        description="Compare two groups of short texts and describe how they differ.",
        reward_minor_units=200,
        participant_group_id="6" * 24,
        filters=[{"filter_id": "current-country-of-residence", "selected_values": ["0", "1"]}],
    )
    data.update(overrides)
    return study_services.prolific_study_configure(**data)


def test_create_sends_url_codes_actions_and_blocklist(demo_study, fake_prolific, prolific_settings):
    """The draft has the entry URL with its placeholders, the three completion codes with their
    actions, the participant-group blocklist filter, minutes and minor units."""
    ps = study_services.prolific_study_create(prolific_study_id=configure(demo_study).pk)
    sent = fake_prolific.calls[-1].body
    assert len(ps.prolific_id) == 24
    assert ps.prolific_id in fake_prolific.studies and ps.prolific_status == "UNPUBLISHED"
    assert sent["external_study_url"] == (
        f"https://study.example.org/s/{demo_study.slug}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
        "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
    )
    assert sent["prolific_id_option"] == "url_parameters"
    assert sent["reward"] == 200 and sent["total_available_places"] == demo_study.target_sample_size
    assert (sent["estimated_completion_time"], sent["maximum_allowed_time"]) == (
        demo_study.estimated_minutes, demo_study.maximum_minutes,
    )
    group = {"action": "ADD_TO_PARTICIPANT_GROUP", "participant_group": "6" * 24}
    assert sent["completion_codes"] == [
        {"code": demo_study.completion_code, "code_type": "COMPLETED",
         "actions": [{"action": "MANUALLY_REVIEW"}, group]},
        {"code": demo_study.failed_check_code, "code_type": "FAILED_ATTENTION_CHECK",
         "actions": [{"action": "REQUEST_RETURN"}, group]},
        {"code": demo_study.no_consent_code, "code_type": "NO_CONSENT",
         "actions": [{"action": "REQUEST_RETURN"}]},
    ]
    assert sent["filters"] == [
        {"filter_id": "current-country-of-residence", "selected_values": ["0", "1"]},
        {"filter_id": "participant_group_blocklist", "selected_values": ["6" * 24]},
    ]
    with pytest.raises(AlreadyCreated):
        study_services.prolific_study_create(prolific_study_id=ps.pk)
    assert fake_prolific.count("POST", "studies/") == 1


def test_auto_approve_and_reject_review_change_the_code_actions(demo_study, fake_prolific, prolific_settings):
    """AUTOMATICALLY_APPROVE on completion; a rejecting review leaves failed checks for manual review."""
    ps = configure(
        demo_study,
        participant_group_id="",
        completed_action="AUTOMATICALLY_APPROVE",
        failed_check_review="reject",
        rejection_category="FAILED_INSTRUCTIONS",
        rejection_message=LONG_MESSAGE,
    )
    study_services.prolific_study_create(prolific_study_id=ps.pk)
    codes = {c["code_type"]: c["actions"] for c in fake_prolific.calls[-1].body["completion_codes"]}
    assert codes["COMPLETED"] == [{"action": "AUTOMATICALLY_APPROVE"}]
    assert codes["FAILED_ATTENTION_CHECK"] == [{"action": "MANUALLY_REVIEW"}]
    assert [f["filter_id"] for f in fake_prolific.calls[-1].body["filters"]] == ["current-country-of-residence"]


def test_a_rejecting_review_needs_category_and_long_message(demo_study):
    """Configuring rejection with a short message is refused naming the field."""
    with pytest.raises(ValidationError) as info:
        configure(demo_study, failed_check_review="reject", rejection_category="FAILED_INSTRUCTIONS", rejection_message="No.")
    assert "rejection_message" in info.value.message_dict


def test_create_without_a_public_base_url_sends_nothing(demo_study, fake_prolific, prolific_settings):
    """Without PROLIFIC_STUDY_BASE_URL the draft is not sent."""
    prolific_settings.PROLIFIC_STUDY_BASE_URL = ""
    with pytest.raises(ProlificValidationError, match="PROLIFIC_STUDY_BASE_URL"):
        study_services.prolific_study_create(prolific_study_id=configure(demo_study).pk)
    assert fake_prolific.calls == []


def test_publish_needs_the_study_live_here(demo_study, fake_prolific, prolific_settings):
    """Publishing a study that is paused here is refused; once live it is published."""
    ps = study_services.prolific_study_create(prolific_study_id=configure(demo_study).pk)
    Study.objects.filter(pk=demo_study.pk).update(status=Study.Status.PAUSED)
    with pytest.raises(StudyNotLive):
        study_services.prolific_study_transition(prolific_study_id=ps.pk, action="PUBLISH")
    Study.objects.filter(pk=demo_study.pk).update(status=Study.Status.LIVE)
    ps = study_services.prolific_study_transition(prolific_study_id=ps.pk, action="PUBLISH")
    assert ps.prolific_status == "ACTIVE" == fake_prolific.studies[ps.prolific_id]["status"]


def test_sync_mirrors_statuses_and_frees_returned_places(linked, fake_prolific):
    """A sync records every submission; returned and timed-out participants stop holding places
    and a completed one keeps its place."""
    slug = linked.study.slug
    _, done = arrive(slug, complete=True)
    _, returned = arrive(slug)
    _, timed_out = arrive(slug)
    for p, status in ((done, "AWAITING REVIEW"), (returned, "RETURNED"), (timed_out, "TIMED-OUT")):
        fake_prolific.add_submission(linked.prolific_id, participant_id=p.prolific_pid,
                                     submission_id=p.prolific_session_id, status=status)
    fake_prolific.add_submission(linked.prolific_id, status="RETURNED")  # never arrived here
    report = submissions.submissions_sync(prolific_study_id=linked.pk)
    assert (report.fetched, report.created, report.freed, report.unmatched) == (4, 4, 2, 1)
    statuses = dict(Participant.objects.filter(study=linked.study).values_list("pk", "status"))
    assert statuses == {done.pk: "completed", returned.pk: "returned", timed_out.pk: "timed_out"}
    assert Submission.objects.get(submission_id=done.prolific_session_id).participant_id == done.pk
    again = submissions.submissions_sync(prolific_study_id=linked.pk)
    assert (again.created, again.changed, again.freed) == (0, 0, 0)


def test_a_returned_participant_frees_a_slot_that_the_next_arrival_takes(linked, fake_prolific):
    """Four arrivals fill the four cells; the sync returns one; the next arrival goes to that cell."""
    study = linked.study
    arrivals = [arrive(study.slug)[1] for _ in range(4)]
    n_cells = len(study_cells(study))
    assert sorted(p.cell_index for p in arrivals) == list(range(n_cells))
    gone = arrivals[2]
    fake_prolific.add_submission(linked.prolific_id, participant_id=gone.prolific_pid,
                                 submission_id=gone.prolific_session_id, status="RETURNED")
    prolific_sync_study.apply(args=[linked.pk]).get()
    assert cell_counts(study=study, n_cells=n_cells)[gone.cell_index] == 0
    _, newcomer = arrive(study.slug)
    assert newcomer.cell_index == gone.cell_index


def test_sync_never_moves_a_submission_backwards(linked, fake_prolific):
    """A stale AWAITING REVIEW from Prolific does not undo an APPROVED already recorded."""
    _, p = arrive(linked.study.slug, complete=True)
    sub = fake_prolific.add_submission(linked.prolific_id, participant_id=p.prolific_pid,
                                       submission_id=p.prolific_session_id, status="APPROVED")
    submissions.submissions_sync(prolific_study_id=linked.pk)
    sub["status"] = "AWAITING REVIEW"
    report = submissions.submissions_sync(prolific_study_id=linked.pk)
    assert report.stale == 1
    assert Submission.objects.get(submission_id=sub["id"]).status == "APPROVED"


def test_sync_ignores_statuses_it_does_not_know(linked, fake_prolific):
    """Prolific's transient PROCESSING is skipped, not stored."""
    fake_prolific.add_submission(linked.prolific_id, status="PROCESSING")
    report = submissions.submissions_sync(prolific_study_id=linked.pk)
    assert (report.fetched, report.ignored, Submission.objects.count()) == (1, 1, 0)


def test_a_completed_participant_timed_out_on_prolific_keeps_their_answers(linked, fake_prolific):
    """Timed out on Prolific after completing here: status timed out, place freed, answers kept."""
    _, p = arrive(linked.study.slug, complete=True)
    fake_prolific.add_submission(linked.prolific_id, participant_id=p.prolific_pid,
                                 submission_id=p.prolific_session_id, status="TIMED-OUT")
    report = submissions.submissions_sync(prolific_study_id=linked.pk)
    p.refresh_from_db()
    assert p.status == Participant.Status.TIMED_OUT and report.freed == 1
    assert p.responses.filter(answered_at__isnull=False).count() == 3


def test_prolific_sync_command_reports(linked, fake_prolific):
    """`manage.py prolific_sync <slug>` prints the counts; an unknown slug is an error."""
    _, p = arrive(linked.study.slug)
    fake_prolific.add_submission(linked.prolific_id, participant_id=p.prolific_pid,
                                 submission_id=p.prolific_session_id, status="RETURNED")
    from io import StringIO

    out = StringIO()
    call_command("prolific_sync", linked.study.slug, "--verify", stdout=out)
    assert "1 submission(s) on Prolific: 1 new" in out.getvalue() and "1 place(s) freed" in out.getvalue()
    assert "Entries checked: 1 match" in out.getvalue()
    with pytest.raises(CommandError, match="No study"):
        call_command("prolific_sync", "nope")


def test_entry_check_matches_pid_and_study(linked, fake_prolific):
    """GET /submissions/{SESSION_ID}/ confirms a real entry (also while ACTIVE) and flags a forged one."""
    _, real = arrive(linked.study.slug)
    fake_prolific.add_submission(linked.prolific_id, participant_id=real.prolific_pid,
                                 submission_id=real.prolific_session_id, status="ACTIVE")
    Participant.objects.filter(pk=real.pk).update(prolific_study_id=linked.prolific_id)
    _, forged = arrive(linked.study.slug)
    fake_prolific.add_submission(linked.prolific_id, submission_id=forged.prolific_session_id, status="ACTIVE")
    _, unknown = arrive(linked.study.slug)
    assert submissions.submission_entry_verify(participant_id=real.pk) is True
    assert submissions.submission_entry_verify(participant_id=forged.pk) is False
    assert submissions.submission_entry_verify(participant_id=unknown.pk) is None
    assert Submission.objects.get(submission_id=real.prolific_session_id).entry_verified is True
    assert Submission.objects.get(submission_id=forged.prolific_session_id).entry_verified is False


def _awaiting(linked, fake_prolific, p) -> dict:
    return fake_prolific.add_submission(linked.prolific_id, participant_id=p.prolific_pid,
                                        submission_id=p.prolific_session_id, status="AWAITING REVIEW")


def test_review_approves_completed_and_asks_failed_checks_to_return(linked, fake_prolific):
    """Completed with the check passed: bulk-approved; failed check: asked to return."""
    _, ok = arrive(linked.study.slug, complete=True)
    _, failed = arrive(linked.study.slug, complete=True, training="I did not read it.")
    _, running = arrive(linked.study.slug)
    assert failed.instruction_check_passed is False
    for p in (ok, failed):
        _awaiting(linked, fake_prolific, p)
    fake_prolific.add_submission(linked.prolific_id, participant_id=running.prolific_pid,
                                 submission_id=running.prolific_session_id, status="ACTIVE")
    submissions.submissions_sync(prolific_study_id=linked.pk)

    dry = review.submissions_approve_completed(prolific_study_id=linked.pk, dry_run=True)
    assert (dry.selected, dry.done, dry.api_calls) == (1, 0, 0)
    assert fake_prolific.count("POST", "submissions/bulk-approve/") == 0
    report = review.submissions_approve_completed(prolific_study_id=linked.pk)
    assert (report.selected, report.done, report.api_calls) == (1, 1, 1)
    assert fake_prolific.calls[-1].body == {"submission_ids": [ok.prolific_session_id]}

    checks = review.submissions_review_failed_checks(prolific_study_id=linked.pk)
    assert (checks.action, checks.selected, checks.done) == ("request_return", 1, 1)
    assert fake_prolific.calls[-1].path == f"submissions/{failed.prolific_session_id}/request-return/"
    assert fake_prolific.count("POST", r"submissions/.*/transition/") == 0  # nobody rejected
    again = review.submissions_approve_completed(prolific_study_id=linked.pk)
    assert again.selected == 0  # reviewed submissions are not sent twice


def test_review_rejects_only_with_category_and_message(linked, fake_prolific):
    """With the reject setting, failed checks are rejected with the stored category and message."""
    ProlificStudy.objects.filter(pk=linked.pk).update(
        failed_check_review="reject", rejection_category="FAILED_INSTRUCTIONS", rejection_message=LONG_MESSAGE
    )
    _, failed = arrive(linked.study.slug, complete=True, training="No idea.")
    _awaiting(linked, fake_prolific, failed)
    submissions.submissions_sync(prolific_study_id=linked.pk)
    report = review.submissions_review_failed_checks(prolific_study_id=linked.pk)
    assert (report.action, report.done) == ("reject", 1)
    assert fake_prolific.calls[-1].body == {
        "action": "REJECT", "rejection_category": "FAILED_INSTRUCTIONS", "message": LONG_MESSAGE,
    }


def test_review_command(linked, fake_prolific):
    """`manage.py prolific_review <slug> --approve` approves; without an action it is an error."""
    from io import StringIO

    _, ok = arrive(linked.study.slug, complete=True)
    _awaiting(linked, fake_prolific, ok)
    submissions.submissions_sync(prolific_study_id=linked.pk)
    out = StringIO()
    call_command("prolific_review", linked.study.slug, "--approve", stdout=out)
    assert "Approved 1 of 1" in out.getvalue()
    with pytest.raises(CommandError, match="--approve"):
        call_command("prolific_review", linked.study.slug)


# --- bonuses -------------------------------------------------------------------------------


def _paid_participants(linked, fake_prolific, n=2) -> list[Participant]:
    people = []
    for _ in range(n):
        _, p = arrive(linked.study.slug, complete=True)
        _awaiting(linked, fake_prolific, p)
        people.append(p)
    submissions.submissions_sync(prolific_study_id=linked.pk)
    return people


def pseudonym(linked, p) -> str:
    """The export pseudonym of ``p``."""
    return participant_pseudonym(study=linked.study, prolific_pid=p.prolific_pid)


def test_bonus_dry_run_shows_the_total_and_sends_nothing(linked, fake_prolific):
    """Pseudonyms from the export map to submissions; the draft holds the total in minor units."""
    a, b = _paid_participants(linked, fake_prolific)
    calls = len(fake_prolific.calls)
    payment = bonuses.bonus_payment_draft(
        prolific_study_id=linked.pk, csv_text=f"id,amount\n{pseudonym(linked, a)},1.50\n{b.prolific_pid},0.75\n"
    )
    assert payment.status == "draft" and payment.total_minor_units == 225 and payment.total_major == "2.25"
    assert payment.csv_bonuses == f"{a.prolific_session_id},1.50\n{b.prolific_session_id},0.75"
    assert len(fake_prolific.calls) == calls


@pytest.mark.parametrize(
    "line, message",
    [
        ("p_0123456789abcdef,1.00", "not a participant"),
        ("{pid},abc", "not an amount"),
        ("{pid},-1", "positive"),
        ("{pid},1.005", "two decimals"),
        ("{pid},30", "limit"),
        ("{pid}", "two columns"),
    ],
)
def test_bad_bonus_lines_are_named(linked, fake_prolific, line, message):
    """Each bad line is reported with its number and nothing is stored."""
    (a,) = _paid_participants(linked, fake_prolific, n=1)
    with pytest.raises(BonusCSVError) as info:
        bonuses.bonus_payment_draft(prolific_study_id=linked.pk, csv_text="id,amount\n" + line.format(pid=a.prolific_pid))
    assert info.value.errors[0][0] == 2 and message in info.value.errors[0][1]
    assert BonusPayment.objects.count() == 0


class SpyClient(ProlificClient):
    """A real client of the fake server that records what the database said when pay was sent."""

    seen_at_pay: list = []

    def bonus_pay(self, bulk_id):
        self.seen_at_pay.append(BonusPayment.objects.get(bulk_id=bulk_id).pay_sent_at)
        return super().bonus_pay(bulk_id)


def spy(fake) -> SpyClient:
    """A :class:`SpyClient` of ``fake``."""
    client = SpyClient(token=fake.token, base_url=fake.base_url, max_retries=3, backoff_seconds=0.001)
    client.seen_at_pay = []
    return client


def test_bonus_pay_marks_sent_before_paying_and_pays_once(linked, fake_prolific):
    """Set-up, then pay_sent_at is recorded before the pay request; a second pay is refused."""
    a, b = _paid_participants(linked, fake_prolific)
    payment = bonuses.bonus_payment_draft(prolific_study_id=linked.pk, csv_text=f"{pseudonym(linked, a)},1.00\n{pseudonym(linked, b)},2.00")
    client = spy(fake_prolific)
    paid = bonuses.bonus_payment_pay(bonus_payment_id=payment.pk, client=client)
    assert paid.status == "paid" and client.seen_at_pay[0] is not None
    assert fake_prolific.bonuses[paid.bulk_id]["paid"] == 1
    assert Decimal(paid.setup_response["amount"]) == 300
    with pytest.raises(BonusAlreadySent):
        bonuses.bonus_payment_pay(bonus_payment_id=payment.pk, client=client)
    assert fake_prolific.count("POST", r"bulk-bonus-payments/.*/pay/") == 1


def test_a_failed_pay_is_never_sent_again(linked, fake_prolific):
    """A 503 on pay marks the payment pay_failed after one request; paying again is refused."""
    (a,) = _paid_participants(linked, fake_prolific, n=1)
    payment = bonuses.bonus_payment_draft(prolific_study_id=linked.pk, csv_text=f"{pseudonym(linked, a)},1.00")
    original = fake_prolific._bonus_setup

    def setup_then_fail(body):
        answer = original(body)
        fake_prolific.fail("POST", f"bulk-bonus-payments/{answer[1]['id']}/pay/", 503, {"detail": "Unavailable"})
        return answer

    fake_prolific._bonus_setup = setup_then_fail
    with pytest.raises(BonusPayFailed, match="check"):
        bonuses.bonus_payment_pay(bonus_payment_id=payment.pk)
    payment.refresh_from_db()
    assert payment.status == "pay_failed" and payment.pay_sent_at is not None and "503" in payment.error
    with pytest.raises(BonusAlreadySent):
        bonuses.bonus_payment_pay(bonus_payment_id=payment.pk)
    assert fake_prolific.count("POST", r"bulk-bonus-payments/.*/pay/") == 1
    assert fake_prolific.count("POST", "submissions/bonus-payments/") == 1


def test_a_failed_setup_pays_nothing_and_can_be_tried_again(linked, fake_prolific):
    """A 500 on set-up leaves the draft unsent; the next try sets up and pays."""
    (a,) = _paid_participants(linked, fake_prolific, n=1)
    payment = bonuses.bonus_payment_draft(prolific_study_id=linked.pk, csv_text=f"{pseudonym(linked, a)},1.00")
    fake_prolific.fail("POST", "submissions/bonus-payments/", 500, {"detail": "Oops"})
    with pytest.raises(ProlificAPIError):
        bonuses.bonus_payment_pay(bonus_payment_id=payment.pk)
    payment.refresh_from_db()
    assert payment.status == "draft" and payment.pay_sent_at is None
    assert bonuses.bonus_payment_pay(bonus_payment_id=payment.pk).status == "paid"


def test_bonus_command_dry_run_then_pay(linked, fake_prolific, tmp_path):
    """`prolific_review --bonuses FILE` shows the total; with --pay it pays once."""
    from io import StringIO

    (a,) = _paid_participants(linked, fake_prolific, n=1)
    path = tmp_path / "bonuses.csv"
    path.write_text(f"participant,amount\n{pseudonym(linked, a)},1.25\n")
    out = StringIO()
    call_command("prolific_review", linked.study.slug, "--bonuses", str(path), stdout=out)
    assert "total 1.25" in out.getvalue() and "Dry run" in out.getvalue()
    assert fake_prolific.count("POST", r"bulk-bonus-payments/.*/pay/") == 0
    call_command("prolific_review", linked.study.slug, "--bonuses", str(path), "--pay", stdout=out)
    assert "Paid" in out.getvalue()
    assert fake_prolific.count("POST", r"bulk-bonus-payments/.*/pay/") == 1


def test_study_command_configure_show_create_publish(demo_study, fake_prolific, prolific_settings):
    """The prolific_study command configures, prints the payload, creates and publishes."""
    from io import StringIO

    out = StringIO()
    slug = demo_study.slug
    call_command("prolific_study", slug, "configure", "--description", "Compare texts.",
                 "--reward-minor-units", "250", "--participant-group", "7" * 24, stdout=out)
    call_command("prolific_study", slug, "show", stdout=out)
    assert '"participant_group_blocklist"' in out.getvalue() and '"reward": 250' in out.getvalue()
    assert fake_prolific.calls == []
    call_command("prolific_study", slug, "create", stdout=out)
    call_command("prolific_study", slug, "publish", stdout=out)
    ps = ProlificStudy.objects.get(study=demo_study)
    assert fake_prolific.studies[ps.prolific_id]["status"] == "ACTIVE"
    with pytest.raises(CommandError, match="configure needs"):
        call_command("prolific_study", slug, "configure")


def test_link_an_existing_prolific_study(demo_study):
    """Linking takes a 24-hex id and refuses another id afterwards."""
    ps = study_services.prolific_study_link(study=demo_study, prolific_id="a" * 24)
    assert ps.prolific_id == "a" * 24
    with pytest.raises(AlreadyCreated):
        study_services.prolific_study_link(study=demo_study, prolific_id="b" * 24)
    with pytest.raises(ValidationError):
        study_services.prolific_study_link(study=demo_study, prolific_id="not-an-id")


def test_beat_task_queues_nothing_without_a_token(linked, settings):
    """Without PROLIFIC_API_TOKEN the periodic sync does nothing."""
    from spotlight_study.prolific.tasks import prolific_sync_all

    settings.PROLIFIC_API_TOKEN = ""
    assert prolific_sync_all.apply().get() == 0


def test_walker_participant_without_prolific_is_untouched(demo_study):
    """participant_prolific_status_set never moves failed-check or earlier-ended participants."""
    from spotlight_study.participation.services import participant_prolific_status_set

    w = Walker(Client(), demo_study.slug)
    w.enter()
    p = Participant.objects.get(prolific_pid=w.pid)
    assert participant_prolific_status_set(participant_id=p.pk, status="returned") is True
    assert participant_prolific_status_set(participant_id=p.pk, status="rejected") is False
    Participant.objects.filter(pk=p.pk).update(status="failed_check")
    assert participant_prolific_status_set(participant_id=p.pk, status="returned") is False
    with pytest.raises(ValueError):
        participant_prolific_status_set(participant_id=p.pk, status="completed")
