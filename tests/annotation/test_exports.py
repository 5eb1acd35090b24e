"""Exports: annotations.csv, final labels, agreement, and the label columns of responses.csv."""

import csv

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from spotlight_study.annotation.services.labels import label_save
from spotlight_study.annotation.services.queue import assignment_next, items_sync
from spotlight_study.annotation.exports import (
    AGREEMENT_COLUMNS,
    ANNOTATIONS_COLUMNS,
    FINAL_LABELS_COLUMNS,
)
from spotlight_study.annotation.models import LABEL_FIELDS, FinalLabel, Item
from spotlight_study.results.exports import RESPONSES_COLUMNS

from ..conftest import Walker
from .conftest import label


def _read(path):
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        return reader.fieldnames, list(reader)


def _label_all(study, user, make):
    while (item := assignment_next(study=study, annotator=user)) is not None:
        label_save(study=study, annotator=user, public_id=item.public_id, label=make(item))


def test_annotations_csv_has_one_row_per_item_annotator_and_field(
    demo_study, answered, annotators, tmp_path
):
    """Row count = sum over items of their annotators x label fields; pseudonyms, no usernames."""
    demo_study.annotators_per_item = 3
    demo_study.save()
    a, b, c = annotators
    _label_all(demo_study, a, lambda item: label())
    _label_all(
        demo_study,
        b,
        lambda item: label(tags=["hard work"]) if item.setting.key == "farming" else label(),
    )
    for _ in range(2):  # c labels only two items
        item = assignment_next(study=demo_study, annotator=c)
        label_save(study=demo_study, annotator=c, public_id=item.public_id, label=label())
    call_command("export_annotations", demo_study.slug, "--out", str(tmp_path))
    cols, rows = _read(tmp_path / "annotations.csv")
    assert cols == ANNOTATIONS_COLUMNS
    n_items = Item.objects.count()
    assert n_items == 6
    assert len(rows) == (n_items * 2 + 2) * len(LABEL_FIELDS)
    assert {r["annotator"] for r in rows} == {"annotator_1", "annotator_2", "annotator_3"}
    assert {r["field"] for r in rows} == set(LABEL_FIELDS)
    everything = (tmp_path / "annotations.csv").read_text()
    assert all(u.username not in everything for u in annotators)
    assert all(r["saved_at"] for r in rows)
    fcols, finals = _read(tmp_path / "final_labels.csv")
    assert fcols == FINAL_LABELS_COLUMNS and len(finals) == n_items
    assert {r["status"] for r in finals} <= {"final", "in_progress", "needs_adjudication"}
    acols, agreement = _read(tmp_path / "agreement.csv")
    assert acols == AGREEMENT_COLUMNS
    row = next(r for r in agreement if r["field"] == "identified" and r["scope"] == "all")
    # Everyone said "identified" on every item: alpha and kappa are undefined, with a reason.
    assert row["percent_agreement"] == "1.0"
    assert row["krippendorff_alpha"] == "" and "same value" in row["krippendorff_alpha_note"]
    assert "exactly two annotators" in row["cohen_kappa_note"]
    tag_row = next(
        r for r in agreement if r["field"] == "tag:hard work" and r["scope"] == "farming"
    )
    assert tag_row["percent_agreement"] == "0.0"


def _web_label(client, slug, values_for):
    """Label every item the annotator is given through the HTML pages."""
    response = client.post(f"/annotate/{slug}/next/")
    count = 0
    while response.status_code == 302 and "/items/" in response["Location"]:
        url = response["Location"]
        page = client.get(url)
        assert page.status_code == 200
        item = Item.objects.get(public_id=url.rstrip("/").rsplit("/", 1)[1])
        response = client.post(url, {**values_for(item), "save_next": "1"})
        count += 1
    return count


def _form(identified, tags=(), exclusion="none", note=""):
    return {
        "identified": "1" if identified else "0",
        "surface_difference": "0",
        "no_difference": "0",
        "tags": list(tags),
        "exclusion": exclusion,
        "exclusion_note": note,
    }


def test_full_adjudication_flow_fills_responses_csv(
    demo_study, annotators, adjudicator, staff_client, tmp_path
):
    """Two annotators label on the site, an adjudicator decides the disagreements, and
    export_results' responses.csv carries the final labels."""
    slug = demo_study.slug
    walkers = []
    for training in ("Group 2 is at night.", "It is about fishing."):  # the second fails the check
        w = Walker(Client(), slug)
        w.complete(training=training)
        walkers.append(w)
    a, b, _ = annotators
    ca, cb = Client(), Client()
    ca.force_login(a)
    cb.force_login(b)
    assert (
        _web_label(
            ca, slug, lambda item: _form(True, ["weather"] if item.setting.key == "farming" else [])
        )
        == 6
    )
    # b disagrees on the doctor items only.
    assert (
        _web_label(
            cb,
            slug,
            lambda item: _form(
                item.setting.key != "doctor", ["weather"] if item.setting.key == "farming" else []
            ),
        )
        == 6
    )
    assert FinalLabel.objects.filter(source="agreement").count() == 4
    cj = Client()
    cj.force_login(adjudicator)
    listing = cj.get(f"/annotate/{slug}/adjudicate/").content.decode()
    doctor_ids = list(
        Item.objects.filter(setting__key="doctor").values_list("public_id", flat=True)
    )
    assert all(pid in listing for pid in doctor_ids)
    for pid in doctor_ids:
        page = cj.get(f"/annotate/{slug}/adjudicate/{pid}/")
        assert page.status_code == 200 and "Label B" in page.content.decode()
        done = cj.post(
            f"/annotate/{slug}/adjudicate/{pid}/", _form(False, exclusion="ai_generated")
        )
        assert done.status_code == 302
    assert FinalLabel.objects.filter(source="adjudication").count() == 2
    assert (
        'Awaiting a decision: <strong id="pending-count">0</strong>'
        in cj.get(f"/annotate/{slug}/adjudicate/").content.decode()
    )

    call_command("export_results", slug, "--out", str(tmp_path))
    cols, rows = _read(tmp_path / "responses.csv")
    assert cols == RESPONSES_COLUMNS and len(rows) == 4
    for r in rows:
        if r["setting"] == "doctor":
            assert (r["identified"], r["other_difference"], r["no_difference"]) == ("0", "0", "0")
        else:
            assert (r["identified"], r["other_difference"], r["no_difference"]) == ("1", "1", "0")
    # Both training answers were labeled "identified": the automatic failure is overturned, and
    # the adjudicated exclusion of the doctor answers shows as their reason.
    assert {r["exclusion_reason"] for r in rows if r["setting"] == "doctor"} == {"ai_generated"}
    assert {(r["excluded"], r["exclusion_reason"]) for r in rows if r["setting"] == "farming"} == {
        ("0", "")
    }
    failed_flags = [r for r in rows if "failed_instruction_check" in r["flags"]]
    assert len(failed_flags) == 2  # the automatic flag stays as evidence

    # The researcher's page shows agreement and offers the downloads.
    overview = staff_client.get(f"/annotate/{slug}/overview/")
    html = overview.content.decode()
    assert overview.status_code == 200 and "Krippendorff" in html and "undefined (" in html
    download = staff_client.get(f"/annotate/{slug}/export/final_labels.csv")
    assert download.status_code == 200 and download["Content-Type"].startswith("text/csv")
    text = download.content.decode()
    assert "adjudication" in text and "agreement" in text
    assert all(w.pid not in text for w in walkers)
    assert staff_client.get(f"/annotate/{slug}/export/nope.csv").status_code == 404


@pytest.mark.parametrize(
    "training,identified,exclusion,reason",
    [
        (
            "It is about fishing.",
            None,
            "none",
            "failed_instruction_check",
        ),  # not annotated: automatic
        ("It is about fishing.", True, "none", ""),  # annotation overturns the automatic failure
        (
            "Group 2 fishes at night.",
            False,
            "none",
            "failed_instruction_check",
        ),  # annotation fails it
        ("Group 2 fishes at night.", True, "failed_instruction_check", "failed_instruction_check"),
        ("Group 2 fishes at night.", True, "copy_pasted", "copy_pasted"),  # applies to all answers
    ],
)
def test_training_final_label_decides_the_instruction_check(
    demo_study, annotators, tmp_path, training, identified, exclusion, reason
):
    """A final label of the training answer confirms or overturns the automatic instruction check."""
    Walker(Client(), demo_study.slug).complete(training=training)
    items_sync(study=demo_study)
    if identified is not None:
        item = Item.objects.get(setting__kind="training")
        FinalLabel.objects.create(
            item=item,
            source="adjudication",
            identified=identified,
            surface_difference=False,
            no_difference=False,
            exclusion=exclusion,
            decided_at=item.created_at,
        )
    call_command("export_results", demo_study.slug, "--out", str(tmp_path))
    _, rows = _read(tmp_path / "responses.csv")
    assert len(rows) == 2
    assert {(r["excluded"], r["exclusion_reason"]) for r in rows} == {
        ("1" if reason else "0", reason)
    }
    assert {r["identified"] for r in rows} == {""}  # main answers not annotated yet


@pytest.mark.django_db
def test_export_annotations_unknown_study_fails_clearly(tmp_path):
    """export_annotations with an unknown slug fails with a message."""
    with pytest.raises(CommandError, match="No study with slug 'nope'"):
        call_command("export_annotations", "nope", "--out", str(tmp_path))
