"""bench/original_flow.py, the original app's participant: what a browser would submit from a
page's first form, and how it follows redirects (no server needed)."""
import pytest

from bench.flow import FlowError
from bench.original_flow import ANSWER, MAX_PAGES, form_of, participant

PAGE = """
<p>text</p>
<form method="post" action="/save_step">
  <input type="hidden" id="participant_id" name="participant_id" value="prolific_a&amp;b">
  <input type="hidden" name="submission_step_number" value="0">
  <textarea name="submission_text" id="submission_text" required></textarea>
  <textarea name="kept">Already written</textarea>
  <input class="r" type="radio" id="q_sd"
         name="demographics_q" value="Strongly Disagree">
  <input class="r" type="radio" id="q_d" name="demographics_q" value="Disagree">
  <input type="submit" value="Save">
</form>
<form method="post" action="/other"><input type="hidden" name="x" value="1"></form>
"""


def test_the_first_form_is_filled_as_a_participant_would():
    action, fields = form_of(PAGE)
    assert action == "/save_step"
    assert fields == {
        "participant_id": "prolific_a&b",
        "submission_step_number": "0",
        "submission_text": ANSWER,
        "kept": "Already written",
        "demographics_q": "Strongly Disagree",
    }


def test_a_page_without_a_form_is_the_end():
    assert form_of("<p>Thank you. <a href='https://app.prolific.com/'>back</a></p>") is None


def _drive(responses):
    """Run one participant against ``responses`` (status, location, body), one per request;
    return the requests it made and the count it returned."""
    flow = participant("abc123")
    made = [next(flow)]
    for response in responses:
        try:
            made.append(flow.send(response))
        except StopIteration as end:
            return made, end.value
    raise AssertionError("the participant did not stop")


def test_redirects_are_followed_as_a_browser_does():
    made, count = _drive([
        (200, "", PAGE),
        (307, "http://127.0.0.1/step", ""),
        (302, "/demographics", ""),
        (200, "", "<p>The end.</p>"),
    ])
    assert made[0] == ("GET", "/start?PROLIFIC_PID=abc123", None)
    method, path, body = made[1]
    assert (method, path) == ("POST", "/save_step") and b"submission_text=" in body
    # 307 repeats the same POST at the new address; 302 turns it into a GET.
    assert made[2] == ("POST", "/step", body)
    assert made[3] == ("GET", "/demographics", None)
    assert count == 4


def test_an_error_status_stops_the_participant():
    with pytest.raises(FlowError, match="status 500"):
        _drive([(500, "", "")])


def test_a_flow_without_an_end_stops_after_max_pages():
    with pytest.raises(FlowError, match="no end"):
        _drive([(302, "/start", "")] * (MAX_PAGES + 1))
