"""End-to-end test of issue 12's "Done when": a new researcher's first pilot, start to finish.

With only what ``scripts/serve.sh`` prints (the study import and ``demo_setup``, run here through
``call_command`` with the live server's address), a researcher runs a pilot of 10 from the study
page, watches it in the live monitor, has the printed annotators label every answer (one by
clicks, one by keyboard shortcuts) and the printed adjudicator settle the one disagreement,
downloads the zip with the pilot and runs the analysis. The database is checked after each stage.
"""
from __future__ import annotations

import csv
import io
import json
import re
import zipfile
from collections import Counter
from io import StringIO

import pytest
from django.core.management import call_command
from playwright.sync_api import Page, expect

from spotlight_study.annotation.models import Annotation, FinalLabel, Item
from spotlight_study.participation.models import Participant, TaskResponse
from spotlight_study.studies.models import Setting, Study

from .conftest import DEMO_STUDY_FILE
from .contexts import close_context
from .keyboard import focus_nothing
from .staff import log_in

pytestmark = pytest.mark.browser

SLUG = "spotlight-replication"
LOGIN_LINE = re.compile(r"login:\s+(\S+)/accounts/login/\s+user '([^']+)'\s+password '([^']+)'")
EXPECTED_ZIP = {
    "responses.csv",
    "survey.csv",
    "participants.csv",
    "participants_wide.csv",
    "README.txt",
}


def _printed_setup(base_url: str) -> tuple[dict[str, str], str]:
    """Run serve.sh's set-up steps; return the printed logins and the printed researcher page."""
    call_command("import_study", str(DEMO_STUDY_FILE), "--if-missing", stdout=StringIO())
    out = StringIO()
    call_command("demo_setup", "--base-url", base_url, stdout=out)
    text = out.getvalue()
    logins = {}
    for printed_base, user, password in LOGIN_LINE.findall(text):
        assert printed_base == base_url
        logins[user] = password
    page_url = re.search(r"Researcher page:\s+(\S+)", text).group(1)
    return logins, page_url


def _label_for(answer: str) -> tuple[bool, bool, bool]:
    """The (identified, surface difference, no difference) label both annotators give a text.

    A rule on the text alone, so that two annotators who meet the items in different orders still
    agree: the simulated identifying answers quote the pattern's tokens.
    """
    no_difference = "not find a clear difference" in answer or "not see any difference" in answer
    no_difference = no_difference or "look the same" in answer
    return '"' in answer, False, no_difference


def _label_queue(
    page: Page, base_url: str, *, hotkeys: bool, disagree_once: bool
) -> tuple[list[str], str | None]:
    """Label every item of the annotator's queue on the item page.

    With ``hotkeys`` the digits choose the options and Ctrl+Enter saves and opens the next item;
    otherwise the options are clicked and "Save and next item" pressed. ``disagree_once`` flips
    the surface-difference answer on the first item that does not claim "no difference", to send
    it to adjudication (on a "no difference" item a named surface difference is not a valid
    label, and the queue's order is the annotator's own random order).

    Returns the public ids in the order labelled, and the id of the item disagreed on (None
    without ``disagree_once``).
    """
    page.goto(f"{base_url}/annotate/")
    page.get_by_role("link", name="Pilot round").click()
    status = page.locator(".queue-status").inner_text()
    open_count = int(re.search(r"Still open to you: (\d+)", status).group(1))
    page.get_by_role("button", name="Next item").click()
    labeled = []
    disputed = None
    while len(labeled) < open_count:
        expect(page.locator("#progress")).to_have_text(f"{len(labeled)} / {open_count}")
        item_id = page.locator("#item-id").inner_text()
        assert item_id not in labeled
        identified, surface, no_difference = _label_for(page.locator("#answer-text").inner_text())
        if disagree_once and disputed is None and not no_difference:
            surface = not surface
            disputed = item_id
        if hotkeys:
            focus_nothing(page)
            keys = ("1" if identified else "2", "3" if surface else "4")
            for key in (*keys, "5" if no_difference else "6"):
                page.keyboard.press(key)
            # Every key's choice is in place before saving (on a loaded machine a key press
            # can still be on its way when Ctrl+Enter arrives, and the save is refused).
            for field, value in (
                ("identified", identified),
                ("surface_difference", surface),
                ("no_difference", no_difference),
            ):
                expect(page.locator(f"#id_{field}_{0 if value else 1}")).to_be_checked()
            page.keyboard.press("Control+Enter")
        else:
            for field, value in (
                ("identified", identified),
                ("surface_difference", surface),
                ("no_difference", no_difference),
            ):
                page.locator(f"#id_{field}_{0 if value else 1}").check()
            page.get_by_role("button", name="Save and next item").click()
        expect(page.locator(".messages")).to_contain_text("Saved.")
        labeled.append(item_id)
    expect(page.locator(".messages")).to_contain_text("There is nothing left for you to label")
    expect(page.locator("#labeled-count")).to_have_text(str(open_count))
    assert disputed is not None or not disagree_once, "every item claimed no difference"
    return labeled, disputed


def test_new_researcher_pilots_annotates_downloads_and_analyses(browser, live_server, tmp_path):
    """Printed logins suffice to pilot 10, monitor, reach final labels, download and analyse."""
    base = live_server.url
    logins, researcher_page = _printed_setup(base)
    annotators = sorted(u for u in logins if u.startswith("annotator"))
    study = Study.objects.get(slug=SLUG)
    assert annotators == [f"annotator{i}" for i in range(1, study.annotators_per_item + 1)]
    assert {"researcher", "adjudicator"} <= set(logins)
    assert researcher_page == f"{base}/researcher/{SLUG}/"

    # 1. Pilot of 10 with the button on the study page.
    researcher = log_in(browser, base, "researcher", logins["researcher"])
    researcher.goto(researcher_page)
    expect(researcher.get_by_text("No pilot yet.")).to_be_visible()
    researcher.locator("#pilot-n").fill("10")
    researcher.get_by_role("button", name="Run a pilot").click()
    expect(researcher.locator(".messages")).to_contain_text("Pilot: 10 simulated participant(s)")
    seed = re.search(r"\(seed (\d+)\)", researcher.locator(".messages").inner_text()).group(1)
    print(f"pilot seed {seed} (manage.py pilot {SLUG} --participants 10 --seed {seed})")
    pilots = Participant.objects.filter(study=study, is_pilot=True)
    assert pilots.count() == 10 and not Participant.objects.filter(study=study, is_pilot=False)
    statuses = Counter(pilots.values_list("status", flat=True))
    assert statuses[Participant.Status.COMPLETED] >= 1
    answered = TaskResponse.objects.filter(participant__study=study, answered_at__isnull=False)
    n_answers = answered.count()
    assert n_answers > 10  # every pilot answers the training task, most the main tasks too

    # 2. The live monitor leaves pilots out by default and shows them when asked.
    researcher.get_by_role("link", name="Live monitor").click()
    rows = researcher.locator("#monitor-rows tr")
    expect(rows).to_have_text(["No participant matches these filters."])
    for choice in ("include", "only"):
        researcher.locator("#id_pilot").select_option(choice)
        researcher.get_by_role("button", name="Filter").click()
        expect(researcher.locator("#monitor-rows tr.pilot")).to_have_count(10)
        for status, n in statuses.items():
            expect(researcher.locator(f"#monitor-rows tr.status-{status}")).to_have_count(n)
    expect(researcher.locator("#monitor-rows")).to_contain_text("(pilot)")
    for pid in pilots.values_list("prolific_pid", flat=True):
        expect(researcher.locator("#monitor-rows")).not_to_contain_text(pid)

    # Pilot answers are annotated only in the pilot round, which the researcher opens.
    researcher.goto(f"{base}/annotate/{SLUG}/overview/")
    researcher.get_by_role("button", name="Open the pilot round").click()
    expect(researcher.locator(".messages")).to_contain_text("Pilot annotation round opened")

    # 3. The printed annotators label every answer; both see all of them.
    annotator_pages = {}
    labeled = {}
    disputed = None
    for i, name in enumerate(annotators):
        page = log_in(browser, base, name, logins[name])
        labeled[name], flipped = _label_queue(page, base, hotkeys=i == 0, disagree_once=i == 1)
        disputed = disputed or flipped
        annotator_pages[name] = page
    items = Item.objects.filter(study=study)
    assert items.count() == n_answers
    for name in annotators:
        assert sorted(labeled[name]) == sorted(items.values_list("public_id", flat=True))
        own = Annotation.objects.filter(item__study=study, annotator__username=name)
        assert own.count() == n_answers
    assert FinalLabel.objects.filter(item__study=study).count() == n_answers - 1
    assert not FinalLabel.objects.filter(item__public_id=disputed).exists()

    # The printed adjudicator settles the disagreement, starting from the agreed fields.
    adjudicator = log_in(browser, base, "adjudicator", logins["adjudicator"])
    adjudicator.goto(f"{base}/annotate/")
    adjudicator.get_by_role("link", name="Disagreements").click()
    expect(adjudicator.locator("#pending-count")).to_have_text("1")
    adjudicator.get_by_role("link", name=disputed).click()
    expect(adjudicator.locator("#prefill-note")).to_be_visible()
    expect(adjudicator.locator("table.competing tr.differs")).to_have_count(1)
    expect(adjudicator.locator("#id_surface_difference_0")).not_to_be_checked()
    expect(adjudicator.locator("#id_surface_difference_1")).not_to_be_checked()
    adjudicator.locator("body").click()
    adjudicator.keyboard.press("4")
    adjudicator.get_by_role("button", name="Save the final label").click()
    expect(adjudicator.locator(".messages")).to_contain_text("Final label saved.")
    expect(adjudicator.locator("#pending-count")).to_have_text("0")

    finals = {
        f.item.response_id: f
        for f in FinalLabel.objects.filter(item__study=study).select_related("item__response")
    }
    assert len(finals) == n_answers
    sources = Counter(f.source for f in finals.values())
    assert sources == {
        FinalLabel.Source.AGREEMENT: n_answers - 1,
        FinalLabel.Source.ADJUDICATION: 1,
    }
    for final in finals.values():
        assert (final.identified, final.surface_difference, final.no_difference) == _label_for(
            final.item.response.answer
        )

    # 4. The zip with the pilot, through the page's link.
    researcher.goto(researcher_page)
    with researcher.expect_download() as download_info:
        researcher.get_by_role("link", name="download with the pilot").click()
    download = download_info.value
    assert download.suggested_filename == f"{SLUG}-export-with-pilot.zip"
    with zipfile.ZipFile(download.path()) as archive:
        assert set(archive.namelist()) == EXPECTED_ZIP
        tables = {
            name: list(csv.DictReader(io.StringIO(archive.read(name).decode("utf-8-sig"))))
            for name in EXPECTED_ZIP - {"README.txt"}
        }
        readme = archive.read("README.txt").decode("utf-8")
    assert "participants_wide.csv" in readme and "identified" in readme
    assert len(tables["participants.csv"]) == len(tables["participants_wide.csv"]) == 10
    assert {row["pilot"] for row in tables["participants.csv"]} == {"1"}
    main = answered.filter(setting__kind=Setting.Kind.MAIN)
    assert len(tables["responses.csv"]) == main.count()
    identified_in_db = sorted(int(finals[r.pk].identified) for r in main)
    assert sorted(int(row["identified"]) for row in tables["responses.csv"]) == identified_in_db

    # 5. The analysis of the pilot: identification results for both main settings.
    out = tmp_path / "analysis"
    call_command("analyze", SLUG, "--out", str(out), "--include-pilot", stdout=StringIO())
    results = json.loads((out / "results.json").read_text())
    main_keys = set(
        Setting.objects.filter(study=study, kind=Setting.Kind.MAIN).values_list("key", flat=True)
    )
    assert set(results["identification"]) == main_keys and len(main_keys) == 2
    included = [row for row in tables["responses.csv"] if row["excluded"] == "0"]
    for key, result in results["identification"].items():
        for condition in ("no_pattern", "pattern"):
            cell = [r for r in included if r["setting"] == key and r["condition"] == condition]
            assert result[f"n_{condition}"] == len(cell) > 0
            assert result[f"k_{condition}"] == sum(int(r["identified"]) for r in cell)
    researcher.reload()
    expect(researcher.get_by_text("(includes pilot participants)")).to_be_visible()
    researcher.get_by_role("link", name="Latest analysis report").click()
    for key in main_keys:
        expect(researcher.locator("body")).to_contain_text(key)
    for page in (researcher, adjudicator, *annotator_pages.values()):
        close_context(page.context)
