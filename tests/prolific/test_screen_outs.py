"""Paid screen-outs of failed instruction checks, over HTTP against the fake Prolific."""
from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from spotlight_study.participation.models import Participant
from spotlight_study.prolific.errors import ProlificServiceError
from spotlight_study.prolific.models import ScreenOut
from spotlight_study.prolific.services import study as study_services
from spotlight_study.prolific.services.screen_outs import submissions_screen_out_failed_checks
from spotlight_study.prolific.services.submissions import submissions_sync
from spotlight_study.studies.models import Study

from ..conftest import Walker
from .conftest import arrive


def _configure(study, **overrides):
    data = dict(study=study, description="Compare two groups of short texts.", reward_minor_units=200,
                screen_out_reward_minor_units=50)
    data.update(overrides)
    return study_services.prolific_study_configure(**data)


@pytest.fixture
def screening(demo_study, fake_prolific, prolific_settings):
    """The demo study under the 'end' policy with a 0.50 screen-out, created on the fake."""
    Study.objects.filter(pk=demo_study.pk).update(failed_check_policy=Study.FailedCheckPolicy.END)
    ps = _configure(Study.objects.get(pk=demo_study.pk))
    return study_services.prolific_study_create(prolific_study_id=ps.pk)


def _fail_check(slug: str) -> Participant:
    """A participant who fails the instruction check and leaves without entering the code."""
    w = Walker(Client(), slug)
    w.enter()
    w.consent()
    w.instructions()
    w.answer("The texts are about fishing.")
    return Participant.objects.get(study__slug=slug, prolific_pid=w.pid)


def _on_prolific(fake, ps, participant, status="ACTIVE"):
    fake.add_submission(ps.prolific_id, participant_id=participant.prolific_pid,
                        submission_id=participant.prolific_session_id, status=status)


def test_failed_check_code_is_a_fixed_screenout(screening, fake_prolific):
    """With a screen-out reward and the 'end' policy the failed-check code is FIXED_SCREENOUT."""
    codes = {c["code"]: c for c in fake_prolific.studies[screening.prolific_id]["completion_codes"]}
    failed = codes[screening.study.failed_check_code]
    assert failed["code_type"] == "FIXED_SCREENOUT"
    assert failed["actions"] == [{"action": "FIXED_SCREEN_OUT_PAYMENT"}]


def test_screen_out_sends_failed_checks_once_with_the_study_payment(screening, fake_prolific):
    """Two ACTIVE failed checks go in one request with 0.50 each; a second run sends nothing."""
    failed = [_fail_check(screening.study.slug) for _ in range(2)]
    assert all(p.status == Participant.Status.FAILED_CHECK for p in failed)
    _, passed = arrive(screening.study.slug, complete=True)
    for p in (*failed, passed):
        _on_prolific(fake_prolific, screening, p)
    submissions_sync(prolific_study_id=screening.pk)
    assert submissions_screen_out_failed_checks(prolific_study_id=screening.pk, dry_run=True).selected == 2
    assert fake_prolific.count("POST", r"studies/.*/screen-out-submissions/") == 0
    report = submissions_screen_out_failed_checks(prolific_study_id=screening.pk)
    assert (report.selected, report.sent, report.error) == (2, 2, "")
    (body,) = fake_prolific.screen_outs
    assert sorted(body["submission_ids"]) == sorted(p.prolific_session_id for p in failed)
    assert body["bonus_per_submission"] == 0.5 and body["increase_places"] is False
    assert fake_prolific.submissions[passed.prolific_session_id]["status"] == "ACTIVE"
    again = submissions_screen_out_failed_checks(prolific_study_id=screening.pk)
    assert again.selected == 0 and fake_prolific.count("POST", r"studies/.*/screen-out-submissions/") == 1
    submissions_sync(prolific_study_id=screening.pk)
    assert set(ScreenOut.objects.values_list("outcome", flat=True)) == {"done"}


def test_a_failed_request_is_reported_and_never_resent(screening, fake_prolific):
    """A 5xx is not retried (a screen-out pays); the row stays failed and is not sent again."""
    p = _fail_check(screening.study.slug)
    _on_prolific(fake_prolific, screening, p)
    submissions_sync(prolific_study_id=screening.pk)
    fake_prolific.fail("POST", f"studies/{screening.prolific_id}/screen-out-submissions/", 503)
    report = submissions_screen_out_failed_checks(prolific_study_id=screening.pk)
    assert report.sent == 0 and "503" in report.error
    assert ScreenOut.objects.get().outcome == "failed"
    submissions_screen_out_failed_checks(prolific_study_id=screening.pk)
    assert fake_prolific.count("POST", r"studies/.*/screen-out-submissions/") == 1
    with pytest.raises(CommandError):
        fake_prolific.fail("POST", f"studies/{screening.prolific_id}/screen-out-submissions/", 503)
        q = _fail_check(screening.study.slug)
        _on_prolific(fake_prolific, screening, q)
        submissions_sync(prolific_study_id=screening.pk)
        call_command("prolific_screen_out", screening.study.slug)


def test_the_payment_must_be_between_prolifics_minimum_and_the_reward(demo_study):
    """Below 10 minor units or not below the reward is refused, naming the field."""
    for amount in (5, 200, 300):
        with pytest.raises(ValidationError) as info:
            _configure(demo_study, screen_out_reward_minor_units=amount)
        assert "screen_out_reward_minor_units" in info.value.message_dict


def test_a_study_that_does_not_screen_out_sends_nothing(linked, fake_prolific, capsys):
    """Without a screen-out reward (or the 'end' policy) the service refuses clearly."""
    with pytest.raises(ProlificServiceError, match="does not screen out"):
        submissions_screen_out_failed_checks(prolific_study_id=linked.pk)
    with pytest.raises(CommandError, match="does not screen out"):
        call_command("prolific_screen_out", linked.study.slug)
    assert fake_prolific.count("POST", r"studies/.*/screen-out-submissions/") == 0
