"""The last words before a reload are not lost (issue 37 §1), in Chromium on a phone viewport
against the Procfile's uWSGI with two worker processes.

The race this guards against: the draft draft.js sends as the page unloads is stored by one
uWSGI worker while the reload's GET is answered by the other, before that draft is stored, so
the page came back with the server's older text. draft.js keeps the unsent text in the tab
(sessionStorage) and puts it back when it is newer than the server's draft.
"""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from spotlight_study.participation.models import Participant, TaskResponse

from ..security.conftest import _start_server, procfile_web_command
from .conftest import DEMO_STUDY_FILE
from .contexts import close_context
from .drafts import LAST_INPUT_SCRIPT, box, draft_ready, reload_at_once, stored_draft
from .participant import enter, expect_task, to_training

pytestmark = pytest.mark.browser

#: Reloads that must each bring the whole text back.
TRIES = 20
#: Attempts allowed for them. An attempt counts when its reload began within
#: :data:`RELOAD_WITHIN_MS` of the last keystroke with the text still unsent (draft.js waits 1 s
#: after the last keystroke); one that did not (the machine paused the browser) is made again.
MAX_ATTEMPTS = 40
RELOAD_WITHIN_MS = 100
PHONE = {"width": 390, "height": 844}

@pytest.fixture
def two_worker_uwsgi(transactional_db, tmp_path):
    """The Procfile's uWSGI with two worker processes on 127.0.0.1, on the test database
    (SQLite or PostgreSQL, whichever the suite runs on), with the demo study imported."""
    from spotlight_study.studies.services import study_import_file

    study = study_import_file(path=DEMO_STUDY_FILE)
    command = procfile_web_command().replace("--http-socket 0.0.0.0:", "--http-socket 127.0.0.1:")
    server = _start_server(command, tmp_path, web_concurrency=2)
    yield server, study
    server.stop()


def test_text_typed_right_before_a_reload_comes_back_whole_20_of_20(browser, two_worker_uwsgi):
    """Type, reload within 100 ms of the last keystroke, 20 times on a two-worker uWSGI: each
    time the box shows all that was typed, and the server ends up keeping it."""
    server, study = two_worker_uwsgi
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    context.set_default_timeout(15_000)
    context.add_init_script(LAST_INPUT_SCRIPT)
    try:
        page = context.new_page()
        pid = enter(page, server.url, study.slug)
        to_training(page)
        draft_ready(page)
        participant = Participant.objects.get(prolific_pid=pid)
        expected = ""
        whole = []
        gaps = []
        attempt = 0
        while len(whole) < TRIES:
            attempt += 1
            assert attempt <= MAX_ATTEMPTS, f"only {len(whole)} of {attempt - 1} attempts reloaded unsent text"
            chunk = f" Try {attempt}: group {attempt % 3 + 1} fishes at night."
            box(page).focus()
            page.keyboard.press("Control+End")  # type at the end, as a participant goes on writing
            box(page).press_sequentially(chunk, delay=10)
            state, gap = reload_at_once(page)
            draft_ready(page)
            shown = box(page).input_value()
            if state != "typing" or gap > RELOAD_WITHIN_MS:
                # Not the race this test is about. Start the next attempt from the whole text
                # as the server keeps it.
                expected = _settled(page, participant, expected + chunk, shown)
                continue
            expected += chunk
            gaps.append(gap)
            whole.append(shown == expected)
            print(f"try {len(whole):2d}: {gap:5.1f} ms after the last keystroke, "
                  f"{'whole' if shown == expected else 'NOT whole: ' + repr(shown[-60:])}")
            expected = _settled(page, participant, expected, shown)
        print(f"{sum(whole)} of {TRIES} came back whole; reloads {min(gaps):.1f}-{max(gaps):.1f} ms "
              f"after the last keystroke; {attempt} attempts")
        assert sum(whole) == TRIES, f"{sum(whole)} of {TRIES} reloads came back whole"
        log = server.log()
        assert "spawned uWSGI worker 2 " in log and "spawned uWSGI worker 3 " not in log, log[-2000:]
        participant.refresh_from_db()
        assert participant.step == "training"
        assert participant.draft["data"] == {"answer_0": expected}
        assert not TaskResponse.objects.filter(participant=participant, answered_at__isnull=False).exists()
        expect_task(page, "Instructions, step 2 of 2")
    finally:
        close_context(context)


def _settled(page, participant: Participant, expected: str, shown: str) -> str:
    """Make the page and the server agree on ``expected`` before the next try: type it again if
    the page lost part of it (so that one lost try does not count against the next), then wait
    until the participant's stored draft is exactly ``expected``. Returns ``expected``."""
    if shown != expected:
        box(page).fill(expected)
    stored_draft(participant, contains=expected, timeout_s=20)
    participant.refresh_from_db()
    assert participant.draft["data"] == {"answer_0": expected}
    return expected

