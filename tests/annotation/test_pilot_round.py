"""The pilot annotation round: pilot answers never reach the real queues, agreement, final labels,
machine acceptance or overview; opened on purpose, they are served apart, marked pilot, with
their own agreement, and every export that holds both kinds says which row is which."""
from __future__ import annotations

import csv
import io

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from spotlight_study.annotation import exports
from spotlight_study.annotation.errors import LabelImportError, PilotRoundClosed
from spotlight_study.annotation.label_import.importer import labels_import
from spotlight_study.annotation.machine_agreement import machine_agreement
from spotlight_study.annotation.machine_coding import machine_coding_job_create
from spotlight_study.annotation.models import (
    Annotation,
    FinalLabel,
    Item,
    MachineLabel,
)
from spotlight_study.annotation.pilot_round import pilot_round_is_open
from spotlight_study.annotation.overview import agreement_report, researcher_overview
from spotlight_study.annotation.selectors import adjudication_queue, annotator_queue
from spotlight_study.annotation.services.labels import label_save
from spotlight_study.annotation.services.machine_acceptance import machine_labels_accept
from spotlight_study.annotation.services.pilot_round import pilot_round_set
from spotlight_study.annotation.services.queue import assignment_next, item_open, items_sync
from spotlight_study.participation.models import Participant
from spotlight_study.participation.pilot import pilot_run
from spotlight_study.results.exports import export_rows

from .conftest import complete_participants, label, make_user

PILOT_SEED = 20
PILOTS = 3  # with seed 20, every one of the 3 completes: 3 answers each


@pytest.fixture
def mixed(demo_study):
    """Two real participants (6 answers) and a pilot of 3 (9 answers), items made."""
    print(f"pilot seed {PILOT_SEED}")
    complete_participants(demo_study.slug, 2)
    pilot_run(study=demo_study, participants=PILOTS, seed=PILOT_SEED)
    items_sync(study=demo_study)
    return demo_study


def _counts(study):
    real = Item.objects.filter(study=study, is_pilot=False).count()
    pilot = Item.objects.filter(study=study, is_pilot=True).count()
    return real, pilot


def _label_round(study, annotators, *, pilot: bool, disagree_on_first: bool = False) -> list[str]:
    """Every annotator labels every item of the round; the second disagrees on the first item
    they get when ``disagree_on_first``. Returns the ids the first annotator labelled."""
    first_ids = []
    for n, user in enumerate(annotators):
        first = True
        while (item := assignment_next(study=study, annotator=user, pilot=pilot)) is not None:
            identified = not (disagree_on_first and n == 1 and first)
            label_save(study=study, annotator=user, public_id=item.public_id,
                       label=label(identified=identified))
            first = False
            if n == 0:
                first_ids.append(item.public_id)
    return first_ids


def test_items_mirror_the_participant_and_pilots_never_enter_the_real_queue(mixed, annotators):
    """Pilot answers become pilot items; the real queue hands out and counts real items only."""
    real, pilot = _counts(mixed)
    assert (real, pilot) == (6, 3 * PILOTS)
    for item in Item.objects.filter(study=mixed).select_related("response__participant"):
        assert item.is_pilot == item.response.participant.is_pilot
    user = annotators[0]
    assert annotator_queue(study=mixed, annotator=user)["available"] == real
    served = _label_round(mixed, [user], pilot=False)
    assert len(served) == real
    assert not Item.objects.filter(public_id__in=served, is_pilot=True).exists()
    assert annotator_queue(study=mixed, annotator=user, pilot=True)["available"] == pilot


def test_closed_pilot_round_serves_and_saves_nothing(mixed, annotators):
    """While the round is closed, asking for a pilot item, opening or labelling one is refused."""
    user = annotators[0]
    assert not pilot_round_is_open(mixed)
    with pytest.raises(PilotRoundClosed):
        assignment_next(study=mixed, annotator=user, pilot=True)
    pilot_round_set(study=mixed, open_=True)
    item = assignment_next(study=mixed, annotator=user, pilot=True)
    assert item.is_pilot
    pilot_round_set(study=mixed, open_=False)
    with pytest.raises(PilotRoundClosed):
        item_open(study=mixed, annotator=user, public_id=item.public_id)
    with pytest.raises(PilotRoundClosed):
        label_save(study=mixed, annotator=user, public_id=item.public_id, label=label())
    assert not Annotation.objects.filter(item=item).exists()


def test_pilot_labels_stay_out_of_real_agreement_final_labels_and_overview(mixed, annotators):
    """Labelled in the pilot round, pilot items get final labels of their own, and the real
    agreement, overview and final_labels.csv count real items only; the pilot's are apart."""
    real, pilot = _counts(mixed)
    pilot_round_set(study=mixed, open_=True)
    two = annotators[:2]
    _label_round(mixed, two, pilot=False)
    _label_round(mixed, two, pilot=True, disagree_on_first=True)
    # Every pilot item but the disputed one is final: the pilot round resolves like the real.
    assert FinalLabel.objects.filter(item__is_pilot=True).count() == pilot - 1
    assert FinalLabel.objects.filter(item__is_pilot=False).count() == real

    real_rows = agreement_report(study=mixed)
    pilot_rows = agreement_report(study=mixed, is_pilot=True)
    overall = {r.field: r for r in real_rows if r.scope == "all" and r.comparison == "all"}
    overall_pilot = {r.field: r for r in pilot_rows if r.scope == "all" and r.comparison == "all"}
    assert overall["identified"].result.n_items == real
    assert overall["identified"].result.percent_agreement.value == 1.0
    assert overall_pilot["identified"].result.n_items == pilot
    assert overall_pilot["identified"].result.percent_agreement.value == pytest.approx((pilot - 1) / pilot)

    o = researcher_overview(study=mixed)
    assert o["items"] == real and o["status"]["final"] == real and o["status"]["needs_adjudication"] == 0
    assert {a["labels"] for a in o["annotators"]} == {real}
    p = researcher_overview(study=mixed, is_pilot=True)
    assert p["items"] == pilot and p["status"]["needs_adjudication"] == 1

    rows = exports.final_label_rows(study=mixed)
    assert len(rows) == real and {r["is_pilot"] for r in rows} == {0}
    with_pilot = exports.final_label_rows(study=mixed, include_pilot=True)
    assert len(with_pilot) == real + pilot
    assert sum(r["is_pilot"] for r in with_pilot) == pilot
    assert [r["is_pilot"] for r in with_pilot] == sorted(r["is_pilot"] for r in with_pilot)

    # The results export: real rows never take a pilot label; pilot rows (asked for) do.
    real_export = export_rows(study=mixed)["responses"]
    assert real_export and {r["is_pilot"] for r in real_export} == {0}
    everyone = export_rows(study=mixed, include_pilot=True)
    assert {r["is_pilot"] for r in everyone["responses"]} == {0, 1}
    assert {r["is_pilot"] for r in everyone["survey"]} == {0, 1}
    pilot_rows_labelled = [r for r in everyone["responses"] if r["is_pilot"] and r["identified"] != ""]
    assert pilot_rows_labelled


def test_agreement_csv_reports_the_pilot_round_in_rows_of_its_own(mixed, annotators, staff_client):
    """agreement.csv: real rows with is_pilot 0 over real items, pilot rows with is_pilot 1 over
    pilot items; the downloads take include_pilot and refuse a bad value."""
    real, pilot = _counts(mixed)
    pilot_round_set(study=mixed, open_=True)
    _label_round(mixed, annotators[:2], pilot=False)
    _label_round(mixed, annotators[:2], pilot=True)
    url = f"/annotate/{mixed.slug}/export/agreement.csv"
    rows = list(csv.DictReader(io.StringIO(staff_client.get(url).content.decode())))
    top = {(r["is_pilot"], r["field"]): r for r in rows if r["scope"] == "all" and r["comparison"] == "all"}
    assert top[("0", "identified")]["n_items"] == str(real)
    assert top[("1", "identified")]["n_items"] == str(pilot)
    assert {r["is_pilot"] for r in rows} == {"0", "1"}

    final_url = f"/annotate/{mixed.slug}/export/final_labels.csv"
    default = list(csv.DictReader(io.StringIO(staff_client.get(final_url).content.decode())))
    assert len(default) == real and {r["is_pilot"] for r in default} == {"0"}
    response = staff_client.get(final_url, {"include_pilot": "1"})
    assert "with-pilot" in response["Content-Disposition"]
    both = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert len(both) == real + pilot and sum(r["is_pilot"] == "1" for r in both) == pilot
    labels_csv = staff_client.get(f"/annotate/{mixed.slug}/export/annotations.csv", {"include_pilot": "1"})
    assert {r["is_pilot"] for r in csv.DictReader(io.StringIO(labels_csv.content.decode()))} == {"0", "1"}
    bad = staff_client.get(final_url, {"include_pilot": "yes"})
    assert bad.status_code == 400 and "include_pilot must be 1" in bad.content.decode()


def test_pilot_pages_mark_pilot_items_and_keep_the_condition_hidden(mixed, annotators):
    """In the open pilot round the queue and item pages say "pilot"; real pages do not; the
    pilot participant's id and condition never appear."""
    user = annotators[0]
    client = Client()
    client.force_login(user)
    slug = mixed.slug
    closed = client.get(f"/annotate/{slug}/pilot/").content.decode()
    assert "pilot annotation round of this study is closed" in closed
    assert client.post(f"/annotate/{slug}/pilot/next/").status_code == 302
    pilot_round_set(study=mixed, open_=True)
    assert "Pilot round" in client.get("/annotate/").content.decode()
    queue = client.get(f"/annotate/{slug}/pilot/").content.decode()
    assert 'id="pilot-mark"' in queue and f"Still open to you: {3 * PILOTS}" in queue
    opened = client.post(f"/annotate/{slug}/pilot/next/")
    page = client.get(opened["Location"]).content.decode()
    item = Item.objects.get(public_id=opened["Location"].rstrip("/").rsplit("/", 1)[-1])
    assert item.is_pilot and 'id="pilot-mark"' in page and "Pilot" in page
    participant = item.response.participant
    assert participant.prolific_pid not in page
    for condition in ("no_pattern", "pattern_with_distractors", f">{item.response.condition}<"):
        assert condition not in page
    real = client.post(f"/annotate/{slug}/next/")
    real_page = client.get(real["Location"]).content.decode()
    assert 'id="pilot-mark"' not in real_page
    # The annotator API says the same, outside the item's fixed fields.
    api = client.post(f"/annotate/api/{slug}/next/?pilot=1", content_type="application/json").json()
    assert api["pilot"] is True and api["item"]["id"] == item.public_id and "is_pilot" not in api["item"]
    assert client.post(f"/annotate/api/{slug}/next/?pilot=maybe").status_code == 400
    pilot_round_set(study=mixed, open_=False)
    refused = client.post(f"/annotate/api/{slug}/next/?pilot=1")
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "pilot_round_closed"


def test_adjudication_of_pilot_items_only_in_the_open_round(mixed, annotators, adjudicator):
    """A pilot disagreement reaches the adjudicators, marked pilot, only while the round is open."""
    pilot_round_set(study=mixed, open_=True)
    _label_round(mixed, annotators[:2], pilot=True, disagree_on_first=True)
    disputed = adjudication_queue(study=mixed, adjudicator=adjudicator)
    assert len(disputed) == 1 and Item.objects.get(public_id=disputed[0]).is_pilot
    client = Client()
    client.force_login(adjudicator)
    listing = client.get(f"/annotate/{mixed.slug}/adjudicate/").content.decode()
    assert "pilot-tag" in listing and disputed[0] in listing
    assert 'id="pilot-mark"' in client.get(f"/annotate/{mixed.slug}/adjudicate/{disputed[0]}/").content.decode()
    pilot_round_set(study=mixed, open_=False)
    assert adjudication_queue(study=mixed, adjudicator=adjudicator) == []
    assert client.get(f"/annotate/{mixed.slug}/adjudicate/{disputed[0]}/").status_code == 404


def test_machine_coder_never_takes_pilot_items_into_acceptance_or_agreement(mixed, annotators):
    """Machine labels on pilot items give no machine final label and no real agreement row."""
    real, pilot = _counts(mixed)
    assert machine_coding_job_create(study=mixed, model="m", dispatch=False).total == real
    pilot_round_set(study=mixed, open_=True)
    job = machine_coding_job_create(study=mixed, model="m2", dispatch=False)
    assert job.total == real + pilot  # the open pilot round is coded too
    _label_round(mixed, annotators[:2], pilot=False)
    _label_round(mixed, annotators[:2], pilot=True)
    FinalLabel.objects.all().delete()  # leave room for machine final labels everywhere
    for item in Item.objects.filter(study=mixed):
        MachineLabel.objects.create(job=job, item=item, model="m2", status="labelled",
                                    identified=True, surface_difference=False, no_difference=False,
                                    tags=[], exclusion="none")
    report = machine_labels_accept(study=mixed, model="m2", fields=["identified"])
    assert report.items["identified"] == real
    assert not FinalLabel.objects.filter(item__is_pilot=True).exists()
    assert FinalLabel.objects.filter(item__is_pilot=False, source="machine").count() == real
    rows, _ = machine_agreement(study=mixed, n_resamples=100)
    vs_human = [r for r in rows if r.comparison == "machine_vs_human" and r.field == "identified"]
    assert vs_human and {r.ci.n_items for r in vs_human} == {real}
    pilot_rows, _ = machine_agreement(study=mixed, n_resamples=100, is_pilot=True)
    assert {r.ci.n_items for r in pilot_rows if r.comparison == "machine_vs_human"} == {pilot}


def test_label_import_of_a_pilot_item_needs_the_open_round(mixed):
    """import_labels refuses a pilot item while the round is closed, and takes it when open."""
    item = Item.objects.filter(study=mixed, is_pilot=True).order_by("pk").first()
    text = f"item,identified,surface_difference,no_difference,exclusion\n{item.public_id},1,0,0,\n"
    with pytest.raises(LabelImportError) as err:
        labels_import(study=mixed, text=text, annotator_name="sheet")
    ((line, message),) = err.value.errors
    assert line == 2 and "pilot annotation round is closed" in message
    assert not Annotation.objects.filter(item=item).exists()
    pilot_round_set(study=mixed, open_=True)
    labels_import(study=mixed, text=text, annotator_name="sheet")
    assert Annotation.objects.filter(item=item).count() == 1


def test_command_and_overview_button_open_and_close_the_round(mixed, staff_client):
    """pilot_annotation --open/--close and the staff-only POST button flip the round; a plain
    researcher, a GET, a missing CSRF token or a bad action change nothing."""
    out = io.StringIO()
    call_command("pilot_annotation", mixed.slug, "--open", stdout=out)
    assert "opened" in out.getvalue() and f"{3 * PILOTS} pilot item(s)" in out.getvalue()
    assert pilot_round_is_open(mixed)
    out = io.StringIO()
    call_command("pilot_annotation", mixed.slug, "--open", stdout=out)
    assert "already opened" in out.getvalue()
    call_command("pilot_annotation", mixed.slug, "--close", stdout=io.StringIO())
    assert not pilot_round_is_open(mixed)
    with pytest.raises(CommandError, match="No study"):
        call_command("pilot_annotation", "no-such-study", "--open")

    url = f"/annotate/{mixed.slug}/overview/pilot-round/"
    page = staff_client.get(f"/annotate/{mixed.slug}/overview/").content.decode()
    assert "Open the pilot round" in page and 'id="pilot-round-state"' in page
    assert staff_client.get(url).status_code == 405
    assert staff_client.post(url, {"action": "open"}).status_code == 302
    assert pilot_round_is_open(mixed)
    page = staff_client.get(f"/annotate/{mixed.slug}/overview/").content.decode()
    assert "Close the pilot round" in page and 'id="n-pilot-items"' in page
    staff_client.post(url, {"action": "sideways"})
    assert pilot_round_is_open(mixed)

    researcher = make_user("res", "researchers")
    plain = Client()
    plain.force_login(researcher)
    assert plain.post(url, {"action": "close"}).status_code == 403
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(make_user("boss", staff=True))
    assert strict.post(url, {"action": "close"}).status_code == 403
    assert pilot_round_is_open(mixed)
    assert Participant.objects.filter(is_pilot=True).count() == PILOTS
