"""The researcher's Prolific review pages and the Prolific box of the study page."""
from __future__ import annotations

import pytest

from spotlight_study.participation.selectors import participant_pseudonym
from spotlight_study.prolific.models import BonusPayment, Submission
from spotlight_study.prolific.services import submissions

from ..annotation.conftest import make_user
from .conftest import arrive


@pytest.fixture
def synced(linked, fake_prolific):
    """Two participants who completed, awaiting review on Prolific and synced; returns them."""
    people = []
    for _ in range(2):
        _, p = arrive(linked.study.slug, complete=True)
        fake_prolific.add_submission(linked.prolific_id, participant_id=p.prolific_pid,
                                     submission_id=p.prolific_session_id, status="AWAITING REVIEW")
        people.append(p)
    submissions.submissions_sync(prolific_study_id=linked.pk)
    return people


def test_study_page_shows_submission_statuses(staff_client, linked, synced):
    """The researcher's study page lists the statuses and links the review page."""
    html = staff_client.get(f"/researcher/{linked.study.slug}/").content.decode()
    assert "awaiting review</td><td>2</td>" in html
    assert f"/prolific/{linked.study.slug}/" in html and linked.prolific_id in html


def test_study_page_without_prolific_explains_how_to_link(staff_client, demo_study):
    """An unlinked study shows the commands to create or link it."""
    html = staff_client.get(f"/researcher/{demo_study.slug}/").content.decode()
    assert "Not on Prolific yet" in html and "prolific_study" in html


def test_review_page_shows_pseudonyms_never_pids(staff_client, linked, synced):
    """Each submission row shows the participant's pseudonym; no Prolific ID appears."""
    html = staff_client.get(f"/prolific/{linked.study.slug}/").content.decode()
    for p in synced:
        assert participant_pseudonym(study=linked.study, prolific_pid=p.prolific_pid) in html
        assert p.prolific_pid not in html
    assert "Approve 2 in bulk" in html


def test_review_pages_are_for_researchers_only(client, linked, db):
    """Anonymous users go to the login page; an annotator gets 403, also on POST actions."""
    slug = linked.study.slug
    assert client.get(f"/prolific/{slug}/").status_code == 302
    client.force_login(make_user("ann", "annotators"))
    assert client.get(f"/prolific/{slug}/").status_code == 403
    assert client.post(f"/prolific/{slug}/approve/").status_code == 403


def test_sync_and_approve_buttons(staff_client, linked, synced, fake_prolific):
    """Sync pulls statuses; approve sends one bulk request and reports it."""
    slug = linked.study.slug
    response = staff_client.post(f"/prolific/{slug}/sync/", follow=True)
    assert "Synced 2 submission(s)" in response.content.decode()
    response = staff_client.post(f"/prolific/{slug}/approve/", follow=True)
    assert "Approved 2 of 2 submission(s) in 1 request(s); 0 held for review." in response.content.decode()
    assert set(Submission.objects.values_list("review_action", flat=True)) == {"approved"}


def test_failed_checks_button_without_failures(staff_client, linked, synced, fake_prolific):
    """With no failed checks nothing is sent and the page says so."""
    response = staff_client.post(f"/prolific/{linked.study.slug}/failed-checks/", follow=True)
    assert "0 of 0" in response.content.decode()
    assert fake_prolific.count("POST", r"submissions/.*/request-return/") == 0


def test_bonus_dry_run_then_pay(staff_client, linked, synced, fake_prolific):
    """The CSV is checked and totalled first; paying is a separate POST, done once."""
    slug = linked.study.slug
    lines = "\n".join(f"{participant_pseudonym(study=linked.study, prolific_pid=p.prolific_pid)},0.50" for p in synced)
    response = staff_client.post(f"/prolific/{slug}/bonuses/", {"text": lines}, follow=True)
    html = response.content.decode()
    payment = BonusPayment.objects.get()
    assert "Dry run" in html and "<strong>1.00</strong>" in html and payment.status == "draft"
    assert fake_prolific.count("POST", "submissions/bonus-payments/") == 0
    response = staff_client.post(f"/prolific/{slug}/bonuses/{payment.pk}/pay/", follow=True)
    assert "paid" in response.content.decode()
    again = staff_client.post(f"/prolific/{slug}/bonuses/{payment.pk}/pay/", follow=True)
    assert "never sent twice" in again.content.decode()
    assert fake_prolific.count("POST", r"bulk-bonus-payments/.*/pay/") == 1


def test_bad_bonus_csv_is_reported(staff_client, linked, synced):
    """A bad line is named and nothing is stored."""
    response = staff_client.post(f"/prolific/{linked.study.slug}/bonuses/", {"text": "p_0000000000000000,1.00"}, follow=True)
    assert "line 1" in response.content.decode() and BonusPayment.objects.count() == 0


def test_actions_on_an_unlinked_study_explain_the_next_step(staff_client, demo_study):
    """Sync on a study not on Prolific redirects with the command to create it."""
    response = staff_client.post(f"/prolific/{demo_study.slug}/sync/", follow=True)
    assert "not on Prolific yet" in response.content.decode()
