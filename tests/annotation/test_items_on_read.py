"""Items exist for every saved answer whenever queues, exports and imports read the study."""

import csv
import io

from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from spotlight_study.annotation.exports import export_csv_text
from spotlight_study.annotation.models import Annotation, Item, new_public_id
from spotlight_study.annotation.services.queue import items_sync
from spotlight_study.participation.models import TaskResponse

from .conftest import complete_participants, make_user


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_queue_counts_answers_before_anyone_pressed_next(demo_study, answered, annotators):
    """A fresh queue says 6 items are open although nobody has pressed 'Next item' yet."""
    assert Item.objects.count() == 0  # saving answers adds nothing to the participant's request
    page = _client(annotators[0]).get(f"/annotate/{demo_study.slug}/")
    assert page.status_code == 200
    assert page.context["queue"]["available"] == 6
    assert "Still open to you: 6" in page.content.decode()


def test_final_labels_csv_lists_every_answer_before_any_item_was_opened(demo_study, answered):
    """final_labels.csv has one in-progress row per saved answer (training and main) at once."""
    rows = list(csv.DictReader(io.StringIO(export_csv_text(study=demo_study, name="final_labels"))))
    assert len(rows) == TaskResponse.objects.filter(answered_at__isnull=False).count() == 6
    assert {r["kind"] for r in rows} == {"training", "main"}
    assert {r["status"] for r in rows} == {"in_progress"}


def test_import_labels_works_with_ids_from_the_export_before_anyone_annotated(
    demo_study, answered, tmp_path
):
    """Downloading final_labels.csv, labeling it and import_labels work from the first answer."""
    ids = _exported_ids(demo_study, tmp_path)
    assert len(ids) == 6
    _import_as_spreadsheet(demo_study, tmp_path, ids)
    assert Annotation.objects.filter(annotator__username="spreadsheet").count() == 6


def _exported_ids(study, tmp_path) -> list[str]:
    """The item column of final_labels.csv from export_annotations, as the file has it."""
    out = tmp_path / "export"
    call_command("export_annotations", study.slug, "--out", str(out))
    with open(out / "final_labels.csv", encoding="utf-8", newline="") as fh:
        return [row["item"] for row in csv.DictReader(fh)]


def _import_as_spreadsheet(study, tmp_path, ids: list[str]) -> None:
    """import_labels of a file labelling every id in ``ids`` alike, as annotator 'spreadsheet'."""
    lines = ["item,identified,surface_difference,no_difference,exclusion"]
    lines += [f"{pid},1,0,0,none" for pid in ids]
    path = tmp_path / "labels.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    call_command("import_labels", study.slug, str(path), "--annotator", "spreadsheet")


def test_import_labels_takes_ids_as_the_formula_safe_export_writes_them(
    demo_study, answered, tmp_path
):
    """An id that begins with '-' is exported as '-...; the import finds the item either way.

    Ids made since then never begin with '-', but older ones may (1 in 64 did), and CI once drew
    one at random.
    """
    call_command("export_annotations", demo_study.slug, "--out", str(tmp_path / "first"))  # makes the items
    first, second = Item.objects.order_by("pk")[:2]
    Item.objects.filter(pk=first.pk).update(public_id="-older-id-dash1")
    Item.objects.filter(pk=second.pk).update(public_id="-older-id-dash2")
    ids = _exported_ids(demo_study, tmp_path)
    assert "'-older-id-dash1" in ids
    # One as the file has it, one as a spreadsheet saves it (the mark dropped).
    _import_as_spreadsheet(demo_study, tmp_path, [i.replace("'-older-id-dash2", "-older-id-dash2") for i in ids])
    assert Annotation.objects.filter(annotator__username="spreadsheet").count() == 6
    assert Annotation.objects.filter(item__public_id__startswith="-").count() == 2


def test_new_item_ids_never_begin_with_a_formula_character():
    """2,000 fresh ids: none begins with '-' (without the rule about 31 would)."""
    assert not [i for i in (new_public_id() for _ in range(2000)) if i.startswith("-")]


def test_overview_counts_items_before_anyone_annotated(demo_study, answered):
    """The researcher's overview counts every saved answer as an item."""
    researcher = make_user("res", "researchers", staff=True)
    page = _client(researcher).get(f"/annotate/{demo_study.slug}/overview/")
    assert page.status_code == 200
    assert page.context["o"]["items"] == 6


def test_items_sync_needs_the_same_queries_for_few_and_many_answers(demo_study):
    """The backfill is bulk: its number of queries does not grow with the number of answers."""
    complete_participants(demo_study.slug, 1)
    with CaptureQueriesContext(connection) as few:
        assert items_sync(study=demo_study) == 3
    complete_participants(demo_study.slug, 4)
    with CaptureQueriesContext(connection) as many:
        assert items_sync(study=demo_study) == 12
    with CaptureQueriesContext(connection) as none_missing:
        assert items_sync(study=demo_study) == 0
    assert len(many) == len(few)
    assert len(none_missing) == 1


def test_pilot_delete_removes_items_made_by_the_backfill(demo_study):
    """Pilot answers become items when read and leave with them on 'pilot --delete'."""
    call_command("pilot", demo_study.slug, "--participants", "3", "--seed", "5")
    export_csv_text(study=demo_study, name="final_labels")
    assert Item.objects.filter(study=demo_study).count() > 0
    call_command("pilot", demo_study.slug, "--delete")
    assert Item.objects.filter(study=demo_study).count() == 0
    rows = list(csv.DictReader(io.StringIO(export_csv_text(study=demo_study, name="final_labels"))))
    assert rows == []
