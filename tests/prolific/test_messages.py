"""Messages to participants through Prolific's messages API (the fake), recorded by pseudonym."""
from __future__ import annotations

import logging

import pytest
from django.test import Client

from spotlight_study.participation.selectors import participant_pseudonym
from spotlight_study.prolific.errors import ProlificServiceError
from spotlight_study.prolific.models import Message
from spotlight_study.prolific.services.messages import message_send

from ..conftest import Walker
from .conftest import arrive


@pytest.fixture
def people(linked):
    """Two participants who completed and one still in progress."""
    done = [arrive(linked.study.slug, complete=True)[1] for _ in range(2)]
    _, stuck = arrive(linked.study.slug)
    return done, stuck


def _pseudonym(linked, p) -> str:
    return participant_pseudonym(study=linked.study, prolific_pid=p.prolific_pid)


def test_one_participant_gets_the_stuck_template(linked, people, fake_prolific, caplog):
    """POST /messages/ with the PID, the study id and the template; the record and log hold no PID."""
    _, stuck = people
    with caplog.at_level(logging.INFO):
        m = message_send(prolific_study_id=linked.pk, template="stuck", pseudonym=_pseudonym(linked, stuck))
    (call,) = [c for c in fake_prolific.calls if c.path == "messages/"]
    assert call.body["recipient_id"] == stuck.prolific_pid and call.body["study_id"] == linked.prolific_id
    assert linked.study.title in call.body["body"] and "return the submission" in call.body["body"]
    assert m.outcome == "done" and m.recipients == [_pseudonym(linked, stuck)] and m.template == "stuck"
    stored = repr(list(Message.objects.values())) + " ".join(r.getMessage() for r in caplog.records)
    assert stuck.prolific_pid not in stored


def test_a_group_gets_one_bulk_request(linked, people, fake_prolific):
    """The completed group gets the bonus template in one POST /messages/bulk/ with their ids."""
    done, stuck = people
    m = message_send(prolific_study_id=linked.pk, template="bonus_paid", status_filter="completed")
    (call,) = [c for c in fake_prolific.calls if c.path == "messages/bulk/"]
    assert sorted(call.body["ids"]) == sorted(p.prolific_pid for p in done)
    assert sorted(m.recipients) == sorted(_pseudonym(linked, p) for p in done) and m.outcome == "done"


def test_bad_input_sends_and_records_nothing(linked, people, fake_prolific):
    """Unknown pseudonym, no recipient, an empty own text or an empty group: a clear error."""
    cases = [dict(template="stuck", pseudonym="p_0000000000000000"), dict(template="stuck"),
             dict(template="custom", status_filter="all", custom_text="  "),
             dict(template="nope", status_filter="all"), dict(template="stuck", status_filter="failed_check")]
    for kwargs in cases:
        with pytest.raises(ProlificServiceError):
            message_send(prolific_study_id=linked.pk, **kwargs)
    assert not Message.objects.exists() and fake_prolific.count("POST", r"messages/.*") == 0


def test_a_failed_request_is_recorded_and_not_retried(linked, people, fake_prolific):
    """A 503 is not retried (the message could arrive twice); the record says failed."""
    fake_prolific.fail("POST", "messages/bulk/", 503)
    m = message_send(prolific_study_id=linked.pk, template="custom", status_filter="all",
                     custom_text="The study server was down for ten minutes; sorry.")
    assert m.outcome == "failed" and "503" in m.error
    assert fake_prolific.count("POST", "messages/bulk/") == 1


def test_review_page_and_monitor_send_and_show_messages(linked, people, staff_client, fake_prolific):
    """The form on both pages sends and lists the message; the monitor form returns to the monitor."""
    slug = linked.study.slug
    _, stuck = people
    html = staff_client.get(f"/researcher/{slug}/monitor/").content.decode()
    assert 'id="messages"' in html and "Stuck participant" in html
    response = staff_client.post(f"/prolific/{slug}/message/", {
        "pseudonym": _pseudonym(linked, stuck), "template": "stuck", "back": "monitor"})
    assert response.status_code == 302 and response["Location"] == f"/researcher/{slug}/monitor/"
    page = staff_client.post(f"/prolific/{slug}/message/", {"group": "nope", "template": "stuck"},
                             follow=True).content.decode()
    assert "Unknown group of participants. Nothing was sent." in page
    assert "Delivered to Prolific" in page and stuck.prolific_pid not in page
    assert len(fake_prolific.messages) == 1


def test_end_pages_say_how_to_reach_the_researcher(linked):
    """The participant's last page points to Prolific's messages."""
    w = Walker(Client(), linked.study.slug)
    w.complete()
    assert "reach the researchers through Prolific" in w.page().content.decode()
