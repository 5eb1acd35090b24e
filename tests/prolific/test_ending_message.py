"""Ending a stalled participant on the monitor can send them the ``ended`` message through
Prolific (the fake): one message each, recorded by pseudonym and noted on the decision."""
from __future__ import annotations

from spotlight_study.participation.models import Participant, ParticipantEnding
from spotlight_study.participation.selectors import participant_pseudonym
from spotlight_study.prolific.models import Message

from .conftest import arrive


def test_ending_with_the_message_box_sends_the_ended_message(linked, staff_client, fake_prolific):
    """The ended participant gets the return request on Prolific; the decision keeps the message's id."""
    slug = linked.study.slug
    _, stalled = arrive(slug)
    _, other = arrive(slug)
    pseudonym = participant_pseudonym(study=linked.study, prolific_pid=stalled.prolific_pid)
    confirm = staff_client.get(f"/researcher/{slug}/monitor/end/?participant={pseudonym}").content.decode()
    assert 'name="send_message"' in confirm
    staff_client.post(f"/researcher/{slug}/monitor/end/",
                      {"participant": pseudonym, "reason": "Stalled.", "send_message": "on"})
    (call,) = [c for c in fake_prolific.calls if c.path == "messages/"]
    assert call.body["recipient_id"] == stalled.prolific_pid
    assert "return your submission on Prolific" in call.body["body"] and linked.study.title in call.body["body"]
    message = Message.objects.get()
    assert (message.template, message.recipients, message.outcome) == ("ended", [pseudonym], "done")
    assert ParticipantEnding.objects.get().message_id == message.pk
    assert Participant.objects.get(pk=other.pk).status == Participant.Status.IN_PROGRESS


def test_a_failed_message_keeps_the_ending(linked, staff_client, fake_prolific):
    """Prolific refusing the message does not undo the ending; the page says the message failed."""
    slug = linked.study.slug
    _, stalled = arrive(slug)
    fake_prolific.fail("POST", "messages/", 503)
    pseudonym = participant_pseudonym(study=linked.study, prolific_pid=stalled.prolific_pid)
    page = staff_client.post(f"/researcher/{slug}/monitor/end/",
                             {"participant": pseudonym, "reason": "Stalled.", "send_message": "on"},
                             follow=True).content.decode()
    assert "The Prolific message to 1 participant(s) failed" in page
    assert Participant.objects.get(pk=stalled.pk).status == Participant.Status.ENDED_BY_RESEARCHER
