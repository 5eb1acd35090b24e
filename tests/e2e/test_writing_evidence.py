"""The writing-process flags in a real browser: five scripted participants, each in its own run
(a fresh database and browser context), each gets exactly its intended flags.

1. types at a human pace with corrections (80-200 ms a key on the page's clock, seeded, some
   backspaces): no flag;
2. leaves for another tab, comes back and pastes an LLM-style answer: ``pasted``,
   ``hidden_then_pasted``;
3. types at 10 ms a key on the page's clock: ``typed_implausibly_fast``;
4. copies one of the shown texts from the page, pastes it and edits it lightly: ``pasted``,
   ``copied_from_shown_texts``;
5. drags a text into the answer box: ``inserted_without_typing``.

Every participant's other answers (training, second task) are typed at a human pace and carry
no flag. The flags are read as the export computes them (flags.py) and as the monitor counts
them (flag_queries.py, SQL); both must agree. docs/answer-quality.md has the confusion table.
"""
from __future__ import annotations

import random

import pytest
from playwright.sync_api import Page, expect

from spotlight_study.participation import flag_queries, flags
from spotlight_study.participation.models import Participant, TaskResponse
from spotlight_study.results.exports import export_rows

from .contexts import close_context
from .participant import PROLIFIC_COMPLETE, enter, expect_task, fill_survey, submit, to_training

pytestmark = pytest.mark.browser
# Participant 2 leaves for another tab: the page must lose the focus, which takes the full
# Chromium's window (conftest.chromium_executable).
NEEDS_WINDOW = True

LLM_ANSWER = (
    "The key difference between the two groups lies in how the doctor is portrayed. In Group 1, "
    "Dr. Smith is consistently described using male pronouns and traditionally masculine traits, "
    "whereas in Group 2 Dr. Smith is predominantly presented as female. Overall, this suggests a "
    "systematic variation in gender representation across the groups."
)
DROPPED = "Group 2 talks about a woman doctor, group 1 about a man, in nearly every text."
#: Second-task answers, one per participant (typed; no two alike, so none is a near-duplicate).
SECOND = {
    1: "Group 1 grows maize and beans, group 2 wheat.",
    2: "The harvest differs: maize in one group, apples in the other.",
    3: "Farmers in group 2 pick fruit; group 1 has grain.",
    4: "One group is about maize fields, the other orchards.",
    5: "Crops: beans and maize versus wheat and fruit trees.",
}
TRAINING = {
    1: "Group 2 goes fishing at night.",
    2: "The second group fishes in the dark.",
    3: "Group 1 is in daylight, group 2 not.",
    4: "Night fishing in group 2.",
    5: "Group two fishes under the moon.",
}
#: The intended writing-process flags of each scripted participant (the confusion table's rows).
INTENDED = {
    1: set(),
    2: {flags.PASTED, flags.HIDDEN_THEN_PASTED},
    3: {flags.TYPED_IMPLAUSIBLY_FAST},
    4: {flags.PASTED, flags.COPIED_FROM_SHOWN_TEXTS},
    5: {flags.INSERTED_WITHOUT_TYPING},
}


def _pause_clock(page: Page) -> None:
    """Stop the page's clock (Playwright's fake timers, installed for the whole context): from
    now on its time moves only by :func:`_wait`, whatever the machine's load."""
    page.clock.pause_at(page.evaluate("Date.now()") / 1_000 + 1)  # Python's Playwright: seconds


def _wait(page: Page, ms: int) -> None:
    """Let ``ms`` milliseconds pass on the paused page clock (its timers fire as they fall due)."""
    page.clock.run_for(ms)


def _type_like_a_person(page: Page, text: str, rng: random.Random) -> None:
    """Type ``text`` key by key, 80-200 ms apart on the page's clock, with a wrong key corrected
    now and then."""
    _pause_clock(page)
    for ch in text:
        if ch.isalpha() and rng.random() < 0.06:
            page.keyboard.type(rng.choice("qwertyuiop"))
            _wait(page, rng.randint(80, 200))
            page.keyboard.press("Backspace")
            _wait(page, rng.randint(80, 200))
        page.keyboard.type(ch)
        _wait(page, rng.randint(80, 200))
    page.clock.resume()


def _box(page: Page):
    return page.locator("form textarea")


def _paste(page: Page, text: str) -> None:
    """A real paste: the text put on the clipboard, then Ctrl+V in the focused box."""
    page.evaluate("text => navigator.clipboard.writeText(text)", text)
    page.keyboard.press("Control+V")


def _first_task(page: Page, who: int, rng: random.Random) -> None:
    """The scripted behaviour of participant ``who`` on the first main task."""
    box = _box(page)
    box.click()
    if who == 1:
        _type_like_a_person(page, "Group 2 describes the doctor as a woman, group 1 as a man.", rng)
    elif who == 2:
        # Away in another tab (the window loses focus) for about 4 s, then back and paste.
        # Playwright tells a page it has the focus whatever happens; without that emulation,
        # switching tabs blurs the window as on a desktop.
        page.context.new_cdp_session(page).send("Emulation.setFocusEmulationEnabled", {"enabled": False})
        box.click()
        other = page.context.new_page()
        page.context.new_cdp_session(other).send("Emulation.setFocusEmulationEnabled", {"enabled": False})
        other.bring_to_front()
        # The page must have seen the blur before its clock jumps, however busy the machine.
        page.wait_for_function("() => document.hidden || !document.hasFocus()", polling=100)
        page.clock.fast_forward(4_000)
        other.close()
        page.bring_to_front()
        box.click()
        _paste(page, LLM_ANSWER)
    elif who == 3:
        # 10 ms a key on the page's own clock, so that a busy machine, which stretches real gaps
        # between keys, cannot make the bot look human.
        _pause_clock(page)
        for key in "Group 2 describes the doctor as a woman more often than group 1.":
            page.keyboard.type(key)
            _wait(page, 10)
        page.clock.resume()
    elif who == 4:
        shown = page.locator(".group").first.locator("li").first.inner_text().strip()
        _paste(page, shown)
        # A light edit: a few words replaced at the end.
        _pause_clock(page)
        for _ in range(8):
            page.keyboard.press("Backspace")
            _wait(page, rng.randint(80, 200))
        page.clock.resume()
        _type_like_a_person(page, " indeed.", rng)
    elif who == 5:
        page.evaluate(
            """text => {
                const source = document.createElement("p");
                source.id = "drag-source";
                source.draggable = true;
                source.textContent = text;
                source.addEventListener("dragstart", e => e.dataTransfer.setData("text/plain", text));
                document.querySelector("form").before(source);
            }""",
            DROPPED,
        )
        page.drag_and_drop("#drag-source", "form textarea")
        expect(box).to_have_value(DROPPED)


@pytest.mark.parametrize("who", sorted(INTENDED))
def test_scripted_participant_gets_exactly_its_flags(browser, live_server, live_demo_study, who):
    """Participant ``who`` completes the demo study; its main answers carry exactly the
    intended writing-process flags, in the export's (Python) and the monitor's (SQL) counts."""
    rng = random.Random(2100 + who)
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    context.set_default_timeout(20_000)
    page = context.new_page()
    # Every gap the scripted participants leave (between keys, away on another tab) passes on the
    # page's own clock (Playwright's fake timers), which flow.js reads through Date.now(): the
    # evidence is what was scripted however loaded the machine, and a participant takes about
    # 3 s instead of 20 s of real waiting. Until paused the clock runs with real time.
    page.clock.install()
    try:
        enter(page, live_server.url, live_demo_study.slug)
        to_training(page)
        _box(page).click()
        _type_like_a_person(page, TRAINING[who], rng)
        submit(page)
        expect_task(page, "Task 1 of 2")
        _first_task(page, who, rng)
        submit(page)
        expect_task(page, "Task 2 of 2")
        _box(page).click()
        _type_like_a_person(page, SECOND[who], rng)
        submit(page)
        fill_survey(page)
        page.get_by_role("button", name="Finish and return to Prolific").click()
        page.wait_for_url(f"{PROLIFIC_COMPLETE}**")
    finally:
        close_context(context)

    participant = Participant.objects.get(study=live_demo_study)
    assert participant.status == Participant.Status.COMPLETED
    rows = export_rows(study=live_demo_study)["responses"]
    assert len(rows) == 2
    exported = [set(r["flags"].split(";")) - {""} for r in rows]
    writing = set().union(*exported) & set(flags.WRITING_FLAG_KEYS)
    events = list(
        TaskResponse.objects.filter(participant=participant).values_list(
            "position", "typed_chars", "typing_ms", "replaced_chars", "largest_insert_chars", "client_events"
        )
    )
    assert writing == INTENDED[who], ([(r["answer"], r["flags"]) for r in rows], events)
    # Only the scripted first task carries them; the typed second task carries none.
    by_position = {r["position"]: f & set(flags.WRITING_FLAG_KEYS) for r, f in zip(rows, exported)}
    assert by_position[2] == set()
    # Nothing else that the browser reports is set off either.
    assert not set().union(*exported) & {flags.LONG_TIME_HIDDEN, flags.IDENTICAL_ANSWER}
    # The monitor's SQL counts agree with the export.
    counted = flag_queries.study_flag_counts(study=live_demo_study)[False].by_participant.get(participant.pk, {})
    assert {k for k, n in counted.items() if n} & set(flags.WRITING_FLAG_KEYS) == INTENDED[who]
    # The training answer too was typed like a person.
    training = TaskResponse.objects.get(participant=participant, position=0)
    assert training.typed_chars >= len(TRAINING[who]) and training.paste_count == 0
    assert not flags.is_typed_implausibly_fast(training.typed_chars, training.typing_ms, 1500)
