"""The pilot on the researcher page (button) and in the analysis (--include-pilot)."""
import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from spotlight_study.participation.models import Participant

from ..annotation.conftest import make_user
from ..conftest import make_staff, Walker
from .test_analyze import _annotate_all


def _url(study) -> str:
    return f"/researcher/{study.slug}/pilot/"


def test_button_runs_a_pilot_and_deletes_it(demo_study, staff_client):
    """A staff POST runs N pilot participants, the page shows them, a second POST deletes them."""
    response = staff_client.post(_url(demo_study), {"participants": "10", "action": "run"})
    assert response.status_code == 302 and response["Location"].endswith(f"/researcher/{demo_study.slug}/#pilot")
    assert Participant.objects.filter(study=demo_study, is_pilot=True).count() == 10
    page = staff_client.get(response["Location"]).content.decode()
    assert "Pilot: 10 simulated participant(s): 9 completed, 1 dropped out, 0 ended early; 1 of the 10 failed" in page
    assert "10 pilot participant(s), 9 completed" in page
    # Pilots are counted nowhere in the real figures.
    assert '<th colspan="2">Total</th><th>0</th><th>0</th>' in page
    staff_client.post(_url(demo_study), {"action": "delete"})
    assert not Participant.objects.filter(study=demo_study).exists()
    assert "No pilot yet." in staff_client.get(f"/researcher/{demo_study.slug}/").content.decode()


@pytest.mark.parametrize("value", ["0", "51", "ten", "", "-3"])
def test_button_refuses_a_bad_number(demo_study, staff_client, value):
    """A missing, non-numeric or out-of-range N gives a message and runs nothing."""
    response = staff_client.post(_url(demo_study), {"participants": value, "action": "run"}, follow=True)
    assert response.status_code == 200
    assert "from 1 to 50" in response.content.decode()
    assert not Participant.objects.exists()


def test_button_is_for_researchers_with_a_csrf_token_only(demo_study, settings):
    """GET is refused, anonymous users go to login, others get 403, and a POST needs CSRF."""
    anonymous = Client()
    assert anonymous.post(_url(demo_study), {"participants": "2"}).status_code == 302
    annotator = Client()
    annotator.force_login(make_user("annotator1", "annotators"))
    assert annotator.post(_url(demo_study), {"participants": "2"}).status_code == 403
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(make_staff())
    assert strict.get(_url(demo_study)).status_code == 405
    assert strict.post(_url(demo_study), {"participants": "2"}).status_code == 403
    assert not Participant.objects.exists()


def test_button_on_an_unknown_study_is_404(db, staff_client):
    """A pilot for a study that does not exist is a 404 page, not an error."""
    assert staff_client.post("/researcher/no-such-study/pilot/", {"participants": "2"}).status_code == 404


def test_analyze_leaves_pilots_out_unless_asked(demo_study, tmp_path, staff_client, settings):
    """analyze counts only real participants; with --include-pilot the pilots too, and the page says so."""
    for _ in range(4):
        Walker(Client(), demo_study.slug).complete()
    call_command("pilot", demo_study.slug, "--participants", "8", "--seed", "11")
    call_command("pilot_annotation", demo_study.slug, "--open", stdout=io.StringIO())
    annotators = [make_user(f"a{i}", "annotators") for i in range(2)]
    # Training answers are labeled as the automatic check decided; pattern answers identified.
    _annotate_all(
        demo_study,
        annotators,
        lambda r: bool(r.participant.instruction_check_passed) if r.position == 0 else r.condition == "pattern",
    )

    call_command("analyze", demo_study.slug, "--out", str(tmp_path / "real"))
    with open(tmp_path / "real" / "data" / "participants.csv", newline="", encoding="utf-8") as fh:
        assert {row["pilot"] for row in csv.DictReader(fh)} == {"0"}
    real = json.loads((tmp_path / "real" / "results.json").read_text())
    n_real = sum(r["n_pattern"] + r["n_no_pattern"] for r in real["identification"].values())
    assert n_real == 4 * 2
    assert "(includes pilot participants)" not in staff_client.get(f"/researcher/{demo_study.slug}/").content.decode()

    call_command("analyze", demo_study.slug, "--out", str(tmp_path / "all"), "--include-pilot")
    both = json.loads((tmp_path / "all" / "results.json").read_text())
    n_both = sum(r["n_pattern"] + r["n_no_pattern"] for r in both["identification"].values())
    # Of the 8 pilots (none drops out), the one who failed the check is excluded.
    assert n_both == 4 * 2 + 7 * 2
    assert "(includes pilot participants)" in staff_client.get(f"/researcher/{demo_study.slug}/").content.decode()


def test_analyze_of_a_pilot_only_study_without_the_flag_fails_clearly(demo_study, tmp_path):
    """With only pilot data, a plain analyze finds no real data and says so (no traceback)."""
    call_command("pilot", demo_study.slug, "--participants", "2", "--seed", "4")
    with pytest.raises(CommandError):
        call_command("analyze", demo_study.slug, "--out", str(tmp_path))


@pytest.mark.parametrize("policy", ["continue_and_flag", "end"])
def test_page_pilot_line_agrees_with_the_pilot_command(db, demo_data, staff_client, policy):
    """The researcher page's pilot line shows the pilot command's counts; a check failed under
    the end policy counts as a failed check there too (two runs: the command's total line)."""
    from io import StringIO

    from spotlight_study.studies.services import study_import

    demo_data["failed_check_policy"] = policy
    study = study_import(data=demo_data)
    seed = 23
    print(f"pilot seed {seed}")
    out = StringIO()
    call_command("pilot", study.slug, "--participants", "10", "--seed", str(seed), stdout=out)
    pilots = list(Participant.objects.filter(study=study, is_pilot=True))
    failed = [p for p in pilots if p.instruction_check_passed is False]
    assert failed, "the pilot's profiles include a failed instruction check"
    if policy == "end":
        assert all(p.status == Participant.Status.FAILED_CHECK for p in failed)
    completed = sum(p.status == Participant.Status.COMPLETED for p in pilots)
    in_progress = sum(p.status == Participant.Status.IN_PROGRESS for p in pilots)
    counts = (
        f"{completed} completed, {in_progress} dropped out, {10 - completed - in_progress} ended "
        f"early; {len(failed)} of the 10 failed the instruction check"
    )
    assert f"Pilot of {study.slug}: 10 simulated participant(s): {counts} (seed {seed}:" in out.getvalue()
    page = staff_client.get(f"/researcher/{study.slug}/").content.decode()
    assert f'<p id="pilot-counts">10 pilot participant(s), {counts}.' in page

    out = StringIO()
    call_command("pilot", study.slug, "--participants", "10", "--seed", str(seed + 1), stdout=out)
    line = next(x for x in out.getvalue().splitlines() if x.startswith("All pilots of"))
    total = line.split("(as on the researcher page): ", 1)[1]
    assert total.startswith("20 pilot participant(s), ")
    page = staff_client.get(f"/researcher/{study.slug}/").content.decode()
    assert f'<p id="pilot-counts">{total}' in page
    assert f"{2 * len(failed)} of the 20 failed the instruction check" in total
