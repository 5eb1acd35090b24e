"""The participant flow through Django's test client: every step, every cell, and bad input."""
import re
from html import unescape
from urllib.parse import parse_qs, urlparse

import pytest

from spotlight_study.participation.models import Participant, SurveyAnswer, TaskResponse
from spotlight_study.studies.models import Study

from ..conftest import Walker, new_id

PROLIFIC = "https://app.prolific.com/submissions/complete"


def _cc(response) -> str:
    url = urlparse(response["Location"])
    assert f"{url.scheme}://{url.netloc}{url.path}" == PROLIFIC
    return parse_qs(url.query)["cc"][0]


def test_full_flow_for_every_cell(client, demo_study):
    """Four participants fill the four cells; each sees the pattern box exactly where their cell says."""
    seen_cells = set()
    for _ in range(4):
        client.cookies.clear()
        w = Walker(client, demo_study.slug)
        assert w.enter().status_code == 302
        p = Participant.objects.get(prolific_pid=w.pid)
        seen_cells.add(p.cell_index)
        assert "Consent" in w.page().content.decode()
        w.consent()
        assert "An answer could be" in w.page().content.decode()
        w.instructions()
        training = w.page().content.decode()
        assert "stars (more often in group 2)" in training
        w.answer("Group 1 is fishing in daylight and group 2 at night under the stars.")
        for i, task in enumerate(p.cell_plan, start=1):
            html = w.page().content.decode()
            assert f"Task {i} of 2" in html
            has_box = "more often in group" in html
            assert has_box == (task["condition"] == "pattern"), (task, html[:200])
            w.answer(f"My answer for {task['setting']}.")
        survey = w.page().content.decode()
        for condition in ("no_pattern", "pattern"):
            assert f'name="c__{condition}__ease"' in survey
        final = w.survey(comment="Fine.")
        assert final.status_code == 302 and _cc(final) == demo_study.completion_code
        p.refresh_from_db()
        assert p.status == Participant.Status.COMPLETED and p.finished_at is not None
        assert p.instruction_check_passed is True
        assert p.responses.count() == 3
        assert p.survey_answers.count() == 2 * 3 + 4
        done = w.page().content.decode()
        assert demo_study.completion_code in done
    assert seen_cells == {0, 1, 2, 3}


def test_time_on_task_is_measured_on_the_server(walker, demo_study):
    """time_on_task_ms is answered_at - served_at, and a refresh does not restart the clock."""
    walker.enter()
    walker.consent()
    walker.instructions()
    walker.page()
    first = TaskResponse.objects.get()
    walker.page()  # refresh
    again = TaskResponse.objects.get()
    assert again.served_at == first.served_at and again.serve_count == 2
    walker.post({"answer_0": "night and day", "client_events": ""})
    r = TaskResponse.objects.get()
    assert r.time_on_task_ms == int((r.answered_at - r.served_at).total_seconds() * 1000)


def test_double_submit_stores_one_answer(walker, demo_study):
    """Posting the same task form twice stores the first answer once and ignores the second."""
    walker.enter()
    walker.consent()
    walker.instructions()
    walker.page()
    token = walker.token()
    first = walker.post({"answer_0": "By day vs by night."}, token=token)
    second = walker.post({"answer_0": "A different second answer."}, token=token)
    assert first.status_code == second.status_code == 302
    responses = TaskResponse.objects.filter(position=0)
    assert responses.count() == 1 and responses.get().answer == "By day vs by night."
    page = walker.client.get(walker.step_url)
    assert "already submitted" in page.content.decode()


def test_stale_tab_and_back_button_land_on_current_step(walker, demo_study):
    """A form posted from an older page (back button, second tab) stores nothing."""
    walker.enter()
    consent_page = walker.page()
    walker.post({"decision": "agree"})
    walker.instructions()
    # The back button shows the consent page again; submitting it must change nothing.
    stale = walker.post({"decision": "decline"}, token=walker.token(consent_page))
    assert stale.status_code == 302 and stale["Location"].endswith("/step/")
    p = Participant.objects.get()
    assert p.status == Participant.Status.IN_PROGRESS and p.step == "training"
    # It says that the choice on the old page was not recorded (not that "its answer is saved").
    shown = walker.page().content.decode()
    assert "choice on it was not recorded" in shown and "answer is saved" not in shown
    # Two tabs on the same task: the second tab's submit is ignored.
    walker.page()
    tab_a = walker.token()
    tab_b = walker.token(walker.client.get(walker.step_url))
    walker.post({"answer_0": "night"}, token=tab_a)
    walker.post({"answer_0": "something else"}, token=tab_b)
    assert list(TaskResponse.objects.values_list("answer", flat=True)) == ["night"]


def test_resume_with_same_pid_in_a_new_browser(client, demo_study):
    """Coming back with the same PID (new session) resumes at the same step, in the same cell."""
    w = Walker(client, demo_study.slug)
    w.enter()
    w.consent()
    w.instructions()
    p = Participant.objects.get()
    client.cookies.clear()
    assert "We could not find your session" in client.get(w.step_url).content.decode()
    w.enter()
    assert Participant.objects.count() == 1
    p2 = Participant.objects.get()
    assert (p2.pk, p2.cell_index, p2.step) == (p.pk, p.cell_index, "training")
    assert "Instructions, step 2 of 2" in w.page().content.decode()


def test_completed_participant_sees_completion_page_again(client, demo_study):
    """After completion, the entry link shows the completion page and creates nothing new."""
    w = Walker(client, demo_study.slug)
    w.complete()
    client.cookies.clear()
    w.enter()
    html = w.page().content.decode()
    assert demo_study.completion_code in html and "Thank you" in html
    assert Participant.objects.count() == 1 and TaskResponse.objects.count() == 3


@pytest.mark.parametrize(
    "params,problem",
    [
        ({}, "PROLIFIC_PID is missing."),
        ({"PROLIFIC_PID": "ABCDEF0123456789ABCDEF01"}, "PROLIFIC_PID must be 24 characters"),
        ({"PROLIFIC_PID": "abc"}, "PROLIFIC_PID must be 24 characters"),
        ({"STUDY_ID": "zz" * 12}, "STUDY_ID must be 24 characters"),
        ({"SESSION_ID": ""}, "SESSION_ID is missing."),
        ({"PROLIFIC_PID": "{{%PROLIFIC_PID%}}"}, "PROLIFIC_PID must be 24 characters"),
    ],
)
def test_malformed_entry_urls_create_nothing(client, demo_study, params, problem):
    """Missing or malformed Prolific IDs give a clear 400 page and create no participant."""
    full = {"PROLIFIC_PID": new_id(), "STUDY_ID": new_id(), "SESSION_ID": new_id()}
    if params:
        full.update(params)
    else:
        full = {}
    response = client.get(f"/s/{demo_study.slug}/", full)
    assert response.status_code == 400
    html = response.content.decode()
    assert problem in html and "return the study on Prolific" in html
    assert not Participant.objects.exists()


def test_empty_and_oversized_answers_redirect_and_keep_the_text(walker, demo_study):
    """Empty or too long answers redirect to the step, which shows the message and the typed text."""
    walker.enter()
    walker.consent()
    walker.instructions()
    walker.page()
    token = walker.token()
    for blank in ("   ", "\u200b\u200b", "?!"):
        empty = walker.post({"answer_0": blank}, token=token)
        assert empty.status_code == 302 and empty["Location"] == walker.step_url
        page = walker.page()
        assert page.status_code == 200
        assert "Please describe the differences" in page.content.decode()
    long_text = "night " * 900  # 5,400 characters
    too_long = walker.post({"answer_0": long_text}, token=token)
    assert too_long.status_code == 302 and too_long["Location"] == walker.step_url
    for _refresh in range(2):  # the text and the message survive a refresh; nothing is re-posted
        html = walker.page().content.decode()
        assert "please shorten it to at most 5,000" in html
        assert long_text.strip()[:200] in html
    assert not TaskResponse.objects.filter(answered_at__isnull=False).exists()
    assert Participant.objects.get().step == "training"


def test_kept_text_belongs_to_its_page_only(walker, demo_study):
    """Text kept after a refused answer is never shown on the next step, and its telemetry is kept."""
    walker.enter()
    walker.consent()
    walker.instructions()
    walker.page()
    refused = "fishing at night " * 400  # 6,800 characters
    walker.post({"answer_0": refused, "client_events": '{"paste_count": 1, "paste_chars": 6800}'})
    html = walker.page().content.decode()
    assert "please shorten it" in html and '"paste_count": 1' in unescape(html)
    walker.post({"answer_0": "By day and by night.", "client_events": ""})
    task_1 = walker.page().content.decode()
    assert "Task 1 of 2" in task_1
    assert "fishing at night fishing" not in task_1 and "please shorten" not in task_1
    assert 'name="answer_1"' in task_1 and 'name="answer_0"' not in task_1
    assert TaskResponse.objects.get(position=0).answer == "By day and by night."


def test_only_the_current_steps_answer_field_is_accepted(walker, demo_study):
    """A post with the current token but another step's answer field (or the old name) saves nothing."""
    walker.enter()
    walker.consent()
    walker.instructions()
    walker.answer("The first group fishes by day, the second at night.")
    walker.page()
    assert walker.answer_field() == "answer_1"
    for other_field in ("answer_0", "answer_2", "answer"):
        response = walker.post({other_field: "The training answer, restored by the browser."})
        assert response.status_code == 302
        assert "already submitted" in walker.page().content.decode()
    p = Participant.objects.get()
    assert p.step == "task" and p.task_index == 0
    assert TaskResponse.objects.get(position=1).answered_at is None


def test_forms_are_distinct_per_step_and_never_restored(walker, demo_study):
    """Every step's form has its own id and autocomplete="off" on the form and its text boxes."""
    walker.enter()
    ids = []
    for step in ("consent", "instructions", "training", "task-1", "task-2", "survey"):
        html = walker.page().content.decode()
        form_tag = re.search(r"<form [^>]*>", html).group(0)
        assert 'autocomplete="off"' in form_tag, (step, form_tag)
        ids.append(re.search(r'id="([^"]+)"', form_tag).group(1))
        for textarea in re.findall(r"<textarea [^>]*>", html):
            assert 'autocomplete="off"' in textarea, (step, textarea)
        if step == "consent":
            walker.post({"decision": "agree"})
        elif step == "instructions":
            walker.post({})
        elif step != "survey":
            walker.post({walker.answer_field(): "day and night, gender, crops", "client_events": ""})
    assert ids == [
        "consent-form", "instructions-form", "answer-form-0", "answer-form-1", "answer-form-2",
        "survey-form",
    ]


def test_declining_consent_returns_with_no_consent_code(walker, demo_study):
    """Declining consent, confirmed, ends the session and redirects with the no-consent code."""
    walker.enter()
    response = walker.consent(agree=False)
    assert _cc(response) == demo_study.no_consent_code
    p = Participant.objects.get()
    assert p.status == Participant.Status.NO_CONSENT and p.finished_at
    assert demo_study.no_consent_code in walker.page().content.decode()


def test_one_click_on_decline_asks_again_and_changes_nothing(walker, demo_study):
    """'I do not agree' shows a confirmation (nothing saved); 'Back to the consent form' and
    agreeing afterwards still work; a stale confirmation is ignored once consented."""
    walker.enter()
    walker.page()
    consent_token = walker.token()
    asked = walker.post({"decision": "decline"})
    assert asked.status_code == 302 and asked["Location"].endswith("/step/?confirm=decline")
    p = Participant.objects.get()
    assert p.status == Participant.Status.IN_PROGRESS and p.step == "consent"
    assert p.finished_at is None
    page = walker.client.get(asked["Location"]).content.decode()
    assert "Not taking part?" in page and 'value="decline_confirmed"' in page
    assert 'href="/s/' in page and "Back to the consent form" in page
    assert 'value="agree"' not in page
    plain = walker.page().content.decode()  # the Back link: the consent form again
    assert 'value="agree"' in plain and "Not taking part?" not in plain
    walker.post({"decision": "agree"})
    p.refresh_from_db()
    assert p.step == "instructions" and p.consented_at
    # The confirmation's button from the old page, pressed after agreeing: ignored.
    stale = walker.post({"decision": "decline_confirmed"}, token=consent_token)
    assert stale.status_code == 302 and stale["Location"].endswith("/step/")
    p.refresh_from_db()
    assert p.status == Participant.Status.IN_PROGRESS and p.step == "instructions"


def test_failed_check_continues_and_flags_by_default(walker, demo_study):
    """Under the default policy a failed instruction check is flagged and the flow continues."""
    walker.enter()
    walker.consent()
    walker.instructions()
    walker.answer("The texts are about fishing.")
    p = Participant.objects.get()
    assert p.instruction_check_passed is False and p.step == "task"


def test_failed_check_under_end_policy_explains_then_links_to_prolific(walker, demo_study):
    """Under 'end', a failed check first shows a page saying why, with a link carrying the code."""
    Study.objects.filter(pk=demo_study.pk).update(failed_check_policy=Study.FailedCheckPolicy.END)
    walker.enter()
    walker.consent()
    walker.instructions()
    response = walker.answer("The texts are about fishing.")
    assert response.status_code == 302 and response["Location"] == walker.step_url
    assert Participant.objects.get().status == Participant.Status.FAILED_CHECK
    html = walker.page().content.decode()
    assert "The study ends here" in html and "example task" in html
    link = re.search(r'<a class="button" href="([^"]+)"', html).group(1).replace("&amp;", "&")
    assert link == f"{PROLIFIC}?cc={demo_study.failed_check_code}"
    # Refreshing the page shows the same explanation and records nothing new.
    assert "The study ends here" in walker.page().content.decode()
    assert TaskResponse.objects.filter(answered_at__isnull=False).count() == 1


def test_incomplete_survey_keeps_answers_and_stores_nothing(walker, demo_study):
    """A survey with a missing item comes back with a message and saves no survey answer."""
    walker.enter()
    walker.consent()
    walker.instructions()
    for text in ("night", "gender", "crops"):
        walker.answer(text)
    walker.page()
    response = walker.post({"c__pattern__ease": "5", "comment": "hello"})
    assert response.status_code == 302 and response["Location"] == walker.step_url
    html = walker.page().content.decode()
    assert "Please check the questions marked below" in html and "Please choose one option." in html
    assert "hello" in html
    assert 'value="5" required id="id_c__pattern__ease_4" checked' in html
    assert not SurveyAnswer.objects.exists()
    # A reload keeps the summary with the marked questions (it once vanished with the message).
    again = walker.page().content.decode()
    assert again.count("Please check the questions marked below") == 1
    assert "Please choose one option." in again and "hello" in again


def test_pid_takes_part_once_per_study(client, demo_study):
    """The same PID entering again with another session id gets the same participant."""
    w = Walker(client, demo_study.slug)
    w.enter()
    w.enter(SESSION_ID=new_id())
    client.cookies.clear()
    w.enter(SESSION_ID=new_id())
    assert Participant.objects.count() == 1


@pytest.mark.parametrize("status", ["draft", "paused", "closed"])
def test_study_not_live_refuses_new_but_lets_started_continue(client, demo_study, status):
    """Only live studies take new participants; someone who started may finish."""
    started = Walker(client, demo_study.slug)
    started.enter()
    Study.objects.filter(pk=demo_study.pk).update(status=status)
    started.consent()
    assert Participant.objects.get().step == "instructions"
    client.cookies.clear()
    response = Walker(client, demo_study.slug).enter()
    assert "not open at the moment" in response.content.decode()
    assert Participant.objects.count() == 1


def test_unknown_study_and_missing_session_pages(client, demo_study):
    """An unknown slug gives a friendly 404; the step page without a session a friendly 403."""
    response = client.get("/s/no-such-study/?PROLIFIC_PID=" + new_id())
    assert response.status_code == 404 and "Study not found" in response.content.decode()
    response = client.get(f"/s/{demo_study.slug}/step/")
    assert response.status_code == 403 and "open the study again from Prolific" in response.content.decode()


def test_csrf_failure_is_a_friendly_page(demo_study):
    """A post without a valid CSRF token gets a readable page, not Django's debug text."""
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    Walker(strict, demo_study.slug).enter()
    response = strict.post(f"/s/{demo_study.slug}/step/", {"token": "consent:0:0000000000", "decision": "agree"})
    assert response.status_code == 403
    assert "This page was out of date" in response.content.decode()
    assert "CSRF" not in response.content.decode()


def test_server_error_page_has_no_stack_trace(client, demo_study, monkeypatch):
    """An unexpected error shows the plain 500 page: no traceback, no settings."""
    from spotlight_study.participation import views

    def boom(**kwargs):
        raise RuntimeError("secret internal detail")

    monkeypatch.setattr(views.assignment, "assignment_create", boom)
    client.raise_request_exception = False
    response = client.get(
        f"/s/{demo_study.slug}/",
        {"PROLIFIC_PID": new_id(), "STUDY_ID": new_id(), "SESSION_ID": new_id()},
    )
    assert response.status_code == 500
    html = response.content.decode()
    assert "Something went wrong on our side" in html
    assert "secret internal detail" not in html and "Traceback" not in html


def test_telemetry_is_stored_and_forged_values_are_clamped(walker, demo_study):
    """Browser events are stored; malformed or absurd values cannot break or skew the record."""
    walker.enter()
    walker.consent()
    walker.instructions()
    walker.answer(
        "day and night",
        events='{"paste_count": 2, "paste_chars": 40, "hidden_ms": 1500, "blur_count": 1,'
        ' "events": [{"t": 10, "type": "paste", "chars": 20, "evil": "x"}]}',
    )
    r = TaskResponse.objects.get(position=0)
    assert (r.paste_count, r.paste_chars, r.hidden_ms, r.blur_count) == (2, 40, 1500, 1)
    assert r.client_events == [{"t": 10, "type": "paste", "chars": 20}]
    walker.answer("gender", events='{"paste_count": -5, "hidden_ms": 1e30, "events": "x"}')
    r = TaskResponse.objects.get(position=1)
    assert r.paste_count == 0 and r.hidden_ms == 24 * 60 * 60 * 1000 and r.client_events == []
    walker.answer("crops", events="not json")
    assert TaskResponse.objects.get(position=2).paste_count == 0


def test_text_order_is_shuffled_per_participant_from_recorded_seed(client, demo_study):
    """Each participant's text order is a permutation recorded with the answer and reproducible."""
    from spotlight_study.participation.selectors import text_order

    orders = set()
    for _ in range(4):
        client.cookies.clear()
        w = Walker(client, demo_study.slug)
        w.enter()
        w.consent()
        w.instructions()
        w.page()
        p = Participant.objects.get(prolific_pid=w.pid)
        r = TaskResponse.objects.get(participant=p, position=0)
        assert sorted(r.group1_order) == list(range(10))
        assert r.group1_order == text_order(shuffle_seed=p.shuffle_seed, setting_key="angler:1", n=10)
        html = w.last_page.content.decode()
        training = demo_study.settings.get(key="angler")
        positions = [html.index(training.group1_texts[i]) for i in r.group1_order]
        assert positions == sorted(positions)
        orders.add(tuple(r.group1_order))
    assert len(orders) > 1


def test_answers_shorter_than_the_study_minimum_are_refused(walker, demo_study):
    """An answer under the study's min_answer_chars is refused with a message; a long one is saved."""
    demo_study.min_answer_chars = 20
    demo_study.save(update_fields=["min_answer_chars"])
    walker.enter()
    walker.consent()
    walker.instructions()
    walker.page()
    refused = walker.post({"answer_0": "Night."})
    assert refused.status_code == 302
    assert "please write at least 20" in walker.page().content.decode()
    assert not TaskResponse.objects.filter(answered_at__isnull=False).exists()
    walker.post({"answer_0": "Group 2 fishes at night, group 1 by day."})
    assert TaskResponse.objects.get(position=0).answer == "Group 2 fishes at night, group 1 by day."


def test_study_file_minimum_answer_length_is_imported_and_checked(db, demo_data):
    """min_answer_chars from the study file reaches the study; above max_answer_chars it is refused."""
    from spotlight_study.studies.errors import StudyFileError
    from spotlight_study.studies.services import study_import

    data = dict(demo_data, slug="min-chars", min_answer_chars=15)
    assert study_import(data=data).min_answer_chars == 15
    bad = dict(demo_data, slug="min-chars-bad", min_answer_chars=900, max_answer_chars=100)
    with pytest.raises(StudyFileError, match="min_answer_chars"):
        study_import(data=bad)


def test_line_breaks_count_as_one_character_as_in_the_browser(walker, demo_study):
    """An answer of exactly max_answer_chars with CRLF line breaks (as browsers post them) is saved, with LF."""
    walker.enter()
    walker.consent()
    walker.instructions()
    walker.page()
    lines = ["n" * 99] * 50  # 50 x 99 letters + 49 line breaks = 4,999 characters in the box
    walker.post({"answer_0": "\r\n".join(lines) + "x"})
    saved = TaskResponse.objects.get(position=0).answer
    assert len(saved) == 5000 and "\r" not in saved and saved.count("\n") == 49


def test_refused_answer_page_opens_at_the_answer_box(walker, demo_study):
    """After a refused answer the box (with its message) has autofocus; a fresh task page does not."""
    walker.enter()
    walker.consent()
    walker.instructions()
    fresh = walker.page().content.decode()
    assert "autofocus" not in fresh
    walker.post({"answer_0": "   "})
    html = walker.page().content.decode()
    box = re.search(r"<textarea[^>]*name=\"answer_0\"[^>]*>", html).group(0)
    assert "autofocus" in box


def test_page_of_an_earlier_participant_in_the_same_browser_is_never_saved(client, demo_study):
    """Participant A's open training page, posted after B entered in the same browser and reached
    the same step, stores nothing for B and says whose page it was."""
    a = Walker(client, demo_study.slug)
    a.enter()
    a.consent()
    a.instructions()
    a.page()
    a_token = a.token()
    b = Walker(client, demo_study.slug)
    b.enter()
    b.consent()
    b.instructions()
    b.page()
    assert b.token() != a_token  # the same step, but another participant's page
    response = a.post({"answer_0": "A's answer: day against night."}, token=a_token)
    assert response.status_code == 302
    html = b.page().content.decode()
    assert "belonged to another Prolific participant" in html
    assert not TaskResponse.objects.filter(answered_at__isnull=False).exists()
    b.post({"answer_0": "B's answer: daylight against night."})
    saved = TaskResponse.objects.get(answered_at__isnull=False)
    assert saved.participant.prolific_pid == b.pid and saved.answer.startswith("B's answer")
