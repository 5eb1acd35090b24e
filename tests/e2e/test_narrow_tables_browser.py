"""Staff pages with tables on a 390 px phone: no table is cut off out of reach, and the page
itself never scrolls sideways.

A try-out found the annotation overview's Progress table cut off by about 10 px at 390 px, and
the stimulus pages (the running jobs' progress, the mining jobs) wider than the phone. A cell
counts as reachable when it lies within the viewport and within every box that clips it, or when
the box that cuts it off scrolls sideways and a keyboard user can scroll it too: the box takes the
focus (``tabindex="0"``) and is a region with a name, so a screen reader says what it holds.
"""
from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from spotlight_study.annotation.selectors import adjudication_queue
from spotlight_study.annotation.services.labels import LabelInput, label_save
from spotlight_study.annotation.services.pilot_round import pilot_round_set
from spotlight_study.annotation.services.queue import assignment_next, items_sync
from spotlight_study.participation.models import Participant
from spotlight_study.participation.pilot import pilot_run
from spotlight_study.participation.selectors import participant_pseudonym
from spotlight_study.stimuli.importers import ImportedGroups
from spotlight_study.stimuli.jobs.runner import job_run_now
from spotlight_study.stimuli.models import GenerationJob, JobStatus, StimulusSet
from spotlight_study.stimuli.services import mining_job_create, stimulus_set_import
from spotlight_study.stimuli.tasks import MINING

from ..conftest import Walker, make_staff
from .a11y import PHONE
from .contexts import close_context
from .staff import log_in

pytestmark = pytest.mark.browser

#: Every table cell (and caption) the reader cannot reach, and the page's own sideways overflow.
#: Walking up from a cell, each box whose ``overflow-x`` is not ``visible`` clips it at its padding
#: edge; the part cut off by a box that scrolls is reached by scrolling, so the check goes on from
#: that box's edge. Half a pixel is allowed for subpixel layout.
UNREACHABLE_CELLS = """() => {
  const root = document.documentElement;
  const named = (box) => {
    const label = (box.getAttribute('aria-label') || '').trim();
    const ids = (box.getAttribute('aria-labelledby') || '').split(/\\s+/).filter(Boolean);
    return label || ids.map((id) => document.getElementById(id)?.textContent.trim()).join('');
  };
  const worst = new Map();  // one line per table and kind of problem, with its worst cell
  const note = (table, t, kind, px) => {
    const key = `table ${t + 1} (${table.id || table.className || 'no id or class'}): @ px ${kind}`;
    worst.set(key, Math.max(worst.get(key) ?? 0, Math.round(px)));
  };
  for (const [t, table] of [...document.querySelectorAll('table')].entries()) {
    for (const cell of table.querySelectorAll('td, th, caption')) {
      const rect = cell.getBoundingClientRect();
      if (!rect.width) continue;
      let right = rect.right;
      for (let box = cell.parentElement; box && box !== root && box !== document.body;
           box = box.parentElement) {
        const overflow = getComputedStyle(box).overflowX;
        if (overflow === 'visible') continue;
        const b = box.getBoundingClientRect();
        const edge = b.left + box.clientLeft + box.clientWidth;
        if (right <= edge + 0.5) continue;
        if (overflow !== 'auto' && overflow !== 'scroll') {
          note(table, t, `cut off by overflow-x ${overflow}`, right - edge);
        } else if (box.tabIndex !== 0 || box.getAttribute('role') !== 'region' || !named(box)) {
          note(table, t, 'to scroll in a box that is not a named region with tabindex 0', right - edge);
        }
        right = edge;
      }
      if (right > root.clientWidth + 0.5) note(table, t, 'beyond the viewport', right - root.clientWidth);
    }
  }
  return {problems: [...worst].map(([key, px]) => key.replace('@', px)),
          scrollWidth: root.scrollWidth, clientWidth: root.clientWidth};
}"""

#: The overview's short tables, four columns of counts: they fit a phone whole, nothing to scroll.
WHOLE_ON_A_PHONE = """() => [...document.querySelectorAll('#n-items, #n-pilot-items')].map((cell) => {
  const box = cell.closest('.table-scroll');
  return {table: cell.id, overflow: box.scrollWidth - box.clientWidth};
})"""


def _label(identified: bool) -> LabelInput:
    return LabelInput(identified=identified, surface_difference=False, no_difference=False)


def test_staff_tables_are_reachable_on_a_phone(browser, live_server, live_demo_study, settings):
    """At 390 px on the annotation overview, the stimulus pages, the team pages, the study list,
    the dashboard, the live monitor and a participant's page, every table cell can be reached,
    the document is no wider than the viewport, and the overview's Progress tables fit whole
    (before: those two 9-10 px wider than their box, the stimulus pages 466-923 px wide, the
    team pages 391 and 601 px, and the boxes that scroll on the other pages not named regions)."""
    study = live_demo_study
    settings.STIMULI_JOB_RUNNER = "manual"  # jobs run here, in order, or stay queued
    for _ in range(2):
        Walker(Client(), study.slug).complete()
    annotators = Group.objects.get_or_create(name="annotators")[0]
    # One says yes and one no to every answer: each agreement table gets its rows and values.
    for name, identified in (("narrow-annotator-1", True), ("narrow-annotator-2", False)):
        annotator = User.objects.create_user(username=name)
        annotator.groups.add(annotators)
        while (item := assignment_next(study=study, annotator=annotator)) is not None:
            label_save(study=study, annotator=annotator, public_id=item.public_id,
                       label=_label(identified))
    adjudicator = User.objects.create_user(username="narrow-adjudicator")
    adjudicator.groups.add(Group.objects.get_or_create(name="adjudicators")[0])
    pilot_run(study=study, participants=2, seed=7)
    pilot_round_set(study=study, open_=True)
    items_sync(study=study)

    outputs = ImportedGroups([f"He treats patient {i}. He smiles." for i in range(12)],
                             [f"She treats patient {i}. She smiles." for i in range(12)])
    mined_set = stimulus_set_import(title="pronouns in doctor stories", groups=outputs)
    mined = mining_job_create(stimulus_set=mined_set, method="ctfidf")
    job_run_now(MINING, job_id=mined.pk)
    mining_job_create(stimulus_set=mined_set, method="premise")  # queued: a running job's progress
    generated = StimulusSet.objects.create(title="generated doctors", source=StimulusSet.Source.GENERATED)
    GenerationJob.objects.create(
        stimulus_set=generated, base_url="http://127.0.0.1:9/v1", model="tiny-model",
        prompt_group1="a", prompt_group2="b", n_per_group=4,
        status=JobStatus.RUNNING, stage="generating", done=3, total=8,
    )
    participant = Participant.objects.filter(study=study, is_pilot=False).first()
    pseudonym = participant_pseudonym(study=study, prolific_pid=participant.prolific_pid)
    make_staff("narrow-researcher", is_superuser=True)

    pages = {
        "annotation overview": f"/annotate/{study.slug}/overview/",
        "stimulus sets": "/stimuli/",
        "stimulus set": f"/stimuli/sets/{mined_set.pk}/",
        "generated stimulus set": f"/stimuli/sets/{generated.pk}/",
        "token patterns": f"/stimuli/mining/{mined.pk}/",
        "annotation team": "/researcher/team/",
        "study team": f"/researcher/{study.slug}/team/",
        "study list": "/researcher/",
        "study dashboard": f"/researcher/{study.slug}/",
        "live monitor": f"/researcher/{study.slug}/monitor/",
        "participant": f"/researcher/{study.slug}/participants/{pseudonym}/",
    }
    page = log_in(browser, live_server.url, "narrow-researcher", "pw-for-tests-only")
    page.set_viewport_size(PHONE)
    found, tables = {}, 0
    for name, path in pages.items():
        page.goto(live_server.url + path)
        tables += page.locator("table").count()
        result = page.evaluate(UNREACHABLE_CELLS)
        if result["scrollWidth"] > result["clientWidth"]:
            result["problems"].append(f"the page is {result['scrollWidth']} px wide")
        if result["problems"]:
            found[name] = result["problems"]
        if name == "annotation overview":
            whole = page.evaluate(WHOLE_ON_A_PHONE)
            assert [w["table"] for w in whole] == ["n-items", "n-pilot-items"]
            found.update({f"overview, the table of #{w['table']}": [f"{w['overflow']} px to scroll"]
                          for w in whole if w["overflow"] > 0})
    close_context(page.context)
    assert tables >= 25  # the data above filled the tables that can grow wide
    assert found == {}, "\n".join(f"{name}: {'; '.join(problems)}" for name, problems in found.items())


def test_long_words_and_long_choices_keep_staff_pages_phone_wide(browser, live_server, live_demo_study):
    """A title of 120 letters without a space (a draft's link on the study list, its builder
    heading) and a stimulus set with a long title (the builder's "take both groups from a set"
    choice) made staff pages 617-1,796 px wide at 390 px (found by a try-out): a long word now
    breaks, and a choice is never wider than its column."""
    from spotlight_study.studies.drafts import draft_start

    user = make_staff("narrow-words", is_superuser=True)
    draft_start(slug="long-word", title="Q" * 120, user=user)
    stimulus_set_import(
        title="Farming Kansas vs Kenya, a rather long title for a set of generated texts to choose",
        groups=ImportedGroups(["Wheat grows well."] * 3, ["Maize grows well."] * 3),
    )
    page = log_in(browser, live_server.url, "narrow-words", "pw-for-tests-only")
    page.set_viewport_size(PHONE)
    widths = {}
    for path in ("/researcher/", "/researcher/long-word/edit/", "/researcher/long-word/edit/training/",
                 f"/researcher/{live_demo_study.slug}/"):
        page.goto(live_server.url + path)
        widths[path] = page.evaluate("() => document.documentElement.scrollWidth")
    close_context(page.context)
    assert all(width <= PHONE["width"] for width in widths.values()), widths


#: A note's unbroken 130 characters (a pasted link): a try-out found it made the table of
#: competing labels 3,503 px wide at 390 px and 3,528 px in a 612 px box at 1280 px.
LONG_WORD = " https://example.org/" + "averylongpathsegment" * 5 + "x" * 10

#: The width of the competing labels' table and of its scrolling box.
COMPETING_WIDTHS = """() => {
  const table = document.querySelector('table.competing'), box = table.closest('.table-scroll');
  return {table: table.getBoundingClientRect().width, box: box.clientWidth};
}"""


def test_competing_labels_are_reachable_on_a_phone(browser, live_server, live_demo_study):
    """The adjudication page of an answer labeled by four annotators, each with a long note and
    several tags, one note with a 130-character link, at 390 px: every cell of the competing
    labels can be reached (a column per label), the table stays within twice the phone's width
    and the page is no wider than the phone; at 1280 px the table fits its box."""
    study = live_demo_study
    study.annotators_per_item = 4
    study.save(update_fields=["annotators_per_item"])
    Walker(Client(), study.slug).complete()
    annotators = Group.objects.get_or_create(name="annotators")[0]
    for n in range(4):  # every answer gets four labels that disagree
        annotator = User.objects.create_user(username=f"competing-annotator-{n}")
        annotator.groups.add(annotators)
        while (item := assignment_next(study=study, annotator=annotator)) is not None:
            label_save(study=study, annotator=annotator, public_id=item.public_id, label=LabelInput(
                identified=n % 2 == 0, surface_difference=n % 2 == 1, no_difference=False,
                exclusion="other",
                exclusion_note=f"Annotator {n} thinks the answer restates the prompt without "
                               "naming either group of texts at all." + LONG_WORD * (n == 0),
                new_tags=[f"restates prompt {n}", f"vague wording {n}", f"mentions pronouns {n}"]))
    researcher = make_staff("competing-researcher", is_superuser=True)
    item_id = adjudication_queue(study=study, adjudicator=researcher)[0]
    page = log_in(browser, live_server.url, "competing-researcher", "pw-for-tests-only")
    page.set_viewport_size(PHONE)
    page.goto(f"{live_server.url}/annotate/{study.slug}/adjudicate/{item_id}/")
    assert page.locator("table.competing th[scope=col]").count() == 5  # Field, then labels A-D
    result = page.evaluate(UNREACHABLE_CELLS)
    phone = page.evaluate(COMPETING_WIDTHS)
    page.set_viewport_size({"width": 1280, "height": 900})
    desktop = page.evaluate(COMPETING_WIDTHS)
    close_context(page.context)
    problems = result["problems"]
    if result["scrollWidth"] > result["clientWidth"]:
        problems.append(f"the page is {result['scrollWidth']} px wide")
    assert problems == []
    assert phone["table"] <= 2 * PHONE["width"], phone
    assert desktop["table"] <= desktop["box"] + 0.5, desktop
