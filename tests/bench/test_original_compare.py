"""bench/original_compare.py's form follower: what a browser would submit from a page's first
form (no server needed)."""
from bench.original_compare import ANSWER, form_of

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
