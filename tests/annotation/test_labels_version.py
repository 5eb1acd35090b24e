"""The labels version (``LabelsVersion``, kept by the database's triggers) changes with every
change to a study's items, annotations and final labels, by whatever path, and the researcher's
overview, kept under it, never shows figures older than the labels (issue 39 §1)."""
from __future__ import annotations

from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from spotlight_study.annotation.label_table import labels_version
from spotlight_study.annotation.models import Annotation, AnnotationRevision, FinalLabel, Item
from spotlight_study.participation.models import Participant
from spotlight_study.annotation.models import OverviewSnapshot
from spotlight_study.annotation.overview import researcher_overview
from spotlight_study.annotation.overview_snapshot import summary_from_json, summary_to_json
from spotlight_study.studies.models import Study

from .test_pairwise_agreement import labeled_study  # noqa: F401 - the fixture


def _changes(study, write) -> int:
    """How much ``write()`` raised the study's version (and that its token stayed)."""
    token, before = labels_version(study=study)
    write()
    token_after, after = labels_version(study=study)
    assert token_after == token
    return after - before


def test_every_kind_of_write_raises_the_version_of_its_study_only(labeled_study, django_user_model):  # noqa: F811
    """A save, QuerySet.update(), raw SQL, a delete, bulk_create and a final label's change each
    raise the version; another study's stays where it was."""
    study = labeled_study
    token, version = labels_version(study=study)
    assert token and version > 0  # the fixture's labels made the row
    annotation = Annotation.objects.filter(item__study=study).order_by("pk").first()
    final = FinalLabel.objects.filter(item__study=study).order_by("pk").first()
    other = Study.objects.exclude(pk=study.pk).first()
    other_version = labels_version(study=other) if other else None

    annotation.identified = not annotation.identified
    assert _changes(study, annotation.save) > 0
    assert _changes(study, lambda: Annotation.objects.filter(pk=annotation.pk).update(identified=True)) > 0
    table = Annotation._meta.db_table
    with connection.cursor() as cursor:
        assert _changes(study, lambda: cursor.execute(
            f"UPDATE {table} SET no_difference = NOT no_difference WHERE id = %s", [annotation.pk])) > 0
    assert _changes(study, lambda: FinalLabel.objects.filter(pk=final.pk).update(exclusion="other")) > 0
    assert _changes(study, lambda: Item.objects.filter(pk=annotation.item_id).update(answer_digest="x")) > 0
    copy = Annotation(item=annotation.item, annotator=django_user_model.objects.create_user("extra"),
                      identified=True, surface_difference=False, no_difference=False)
    assert _changes(study, lambda: Annotation.objects.bulk_create([copy])) > 0
    assert _changes(study, lambda: Annotation.objects.filter(pk=copy.pk).delete()) > 0
    assert _changes(study, final.delete) > 0
    assert _changes(study, lambda: None) == 0  # a read changes nothing
    if other is not None:
        assert labels_version(study=other) == other_version


def test_the_overview_follows_a_label_changed_behind_the_apps_back(labeled_study):  # noqa: F811
    """The overview is kept under the version: a label changed by raw SQL (no model save, no
    updated_at) shows at once, and so does a deleted final label."""
    study = labeled_study
    before = researcher_overview(study=study)
    assert researcher_overview(study=study) == before  # kept: the same figures
    annotation = Annotation.objects.filter(item__study=study).order_by("pk").first()
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {AnnotationRevision._meta.db_table} WHERE annotation_id = %s", [annotation.pk])
        cursor.execute(f"DELETE FROM {Annotation._meta.db_table} WHERE id = %s", [annotation.pk])
    after = researcher_overview(study=study)
    labels = {a["username"]: a["labels"] for a in after["annotators"]}
    labels_before = {a["username"]: a["labels"] for a in before["annotators"]}
    assert labels[annotation.annotator.get_username()] == labels_before[annotation.annotator.get_username()] - 1
    FinalLabel.objects.filter(item__study=study).first().delete()
    assert researcher_overview(study=study)["status"]["final"] == after["status"]["final"] - 1


def test_a_participant_erased_with_labelled_answers_shows_in_the_overview(labeled_study):  # noqa: F811
    """Deleting a participant deletes their answers' items and labels (cascades Django runs as
    several statements): the version rises and the overview counts fewer items."""
    study = labeled_study
    before = researcher_overview(study=study)
    participant = Participant.objects.filter(study=study, responses__annotation_item__isnull=False).first()
    n_items = Item.objects.filter(response__participant=participant).count()
    assert n_items and _changes(study, participant.delete) > 0
    assert researcher_overview(study=study)["items"] == before["items"] - n_items


def test_another_process_reads_the_stored_overview_without_reading_a_label(labeled_study):  # noqa: F811
    """The summary stored as JSON reads back equal (agreement rows, kappa matrices, user ids);
    with this process's cache empty (another worker) the overview is the same and reads no
    annotation; after a label changes the stored one is not used."""
    study = labeled_study
    first = researcher_overview(study=study)
    snapshot = OverviewSnapshot.objects.get(study=study, is_pilot=False)
    assert first["agreement"] and first["kappa_matrices"]
    cache.clear()
    with CaptureQueriesContext(connection) as captured:
        again = researcher_overview(study=study)
    assert again == first
    assert not [q for q in captured.captured_queries if "annotation_annotation" in q["sql"]]
    summary = summary_from_json(snapshot.summary)
    assert summary_from_json(summary_to_json(summary)) == summary
    assert summary["agreement"] == first["agreement"] and summary["kappa_matrices"] == first["kappa_matrices"]

    annotation = Annotation.objects.filter(item__study=study).order_by("pk").first()
    Annotation.objects.filter(pk=annotation.pk).update(identified=not annotation.identified)
    cache.clear()
    changed = researcher_overview(study=study)
    assert changed["agreement"] != first["agreement"]
    assert OverviewSnapshot.objects.get(study=study, is_pilot=False).key != snapshot.key
