"""Migration 0007 moves pilot items labelled in the real queues into the pilot round, losing no
human label (annotation, revision, agreed or adjudicated final label)."""
from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from spotlight_study.annotation.models import (
    Annotation,
    AnnotationRevision,
    Assignment,
    FinalLabel,
    Item,
)
from spotlight_study.annotation.overview import agreement_report, researcher_overview
from spotlight_study.participation.models import TaskResponse
from spotlight_study.participation.pilot import pilot_run

from .conftest import complete_participants, make_user

BEFORE = [("annotation", "0005_machine_acceptance")]
AFTER = [("annotation", "0007_pilot_items_to_pilot_round")]
PILOT_SEED = 4


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def _old_state_labelled(apps, users, adjudicator) -> dict:
    """With the models as they were before the pilot round, make every answer an item of the
    one queue (pilots mixed in) and give it two labels with revisions; the first pilot item's
    labels disagree and an adjudicator decides it. Returns what was written, by response pk."""
    OldItem = apps.get_model("annotation", "Item")
    OldAssignment = apps.get_model("annotation", "Assignment")
    OldAnnotation = apps.get_model("annotation", "Annotation")
    OldRevision = apps.get_model("annotation", "AnnotationRevision")
    OldFinal = apps.get_model("annotation", "FinalLabel")
    OldSeat = apps.get_model("annotation", "StudyAnnotator")
    assert "is_pilot" not in {f.name for f in OldItem._meta.get_fields()}
    written = {}
    disputed = None
    answers = TaskResponse.objects.filter(answered_at__isnull=False).select_related("participant")
    study_id = answers.first().participant.study_id
    for number, user in enumerate(users, start=1):
        OldSeat.objects.create(study_id=study_id, user_id=user.pk, number=number, order_seed=number)
    for n, response in enumerate(answers.order_by("pk")):
        item = OldItem.objects.create(
            study_id=response.participant.study_id, response_id=response.pk,
            setting_id=response.setting_id, public_id=f"old{n:04d}", answer_digest="d" * 64,
        )
        dispute = response.participant.is_pilot and disputed is None
        values = []
        for k, user in enumerate(users):
            identified = not (dispute and k == 1)
            OldAssignment.objects.create(
                item=item, annotator_id=user.pk, state="submitted", reserved_at=response.answered_at,
                expires_at=response.answered_at, submitted_at=response.answered_at,
            )
            annotation = OldAnnotation.objects.create(
                item=item, annotator_id=user.pk, identified=identified, surface_difference=False,
                no_difference=False, tags=["kindness"] if k == 0 else [], exclusion="none",
                revision=2,
            )
            for revision in (1, 2):
                OldRevision.objects.create(
                    annotation=annotation, revision=revision, source="web",
                    saved_at=response.answered_at, identified=identified if revision == 2 else False,
                    surface_difference=False, no_difference=False, tags=[], exclusion="none",
                )
            values.append(identified)
        if dispute:
            disputed = item.public_id
            OldFinal.objects.create(
                item=item, source="adjudication", adjudicator_id=adjudicator.pk, identified=True,
                surface_difference=True, no_difference=False, tags=[], exclusion="none",
                decided_at=response.answered_at,
            )
        else:
            OldFinal.objects.create(
                item=item, source="agreement", identified=True, surface_difference=False,
                no_difference=False, tags=[], exclusion="none", decided_at=response.answered_at,
            )
        written[response.pk] = (item.public_id, response.participant.is_pilot, values)
    return {"items": written, "disputed": disputed}


@pytest.mark.django_db(transaction=True)
def test_migration_moves_labelled_pilot_items_into_the_pilot_round_and_keeps_every_label(demo_study):
    """Migrate back to 0005, label pilot and real items in one queue, migrate forward: the pilot
    items are marked pilot, out of the real figures, with every label and decision kept."""
    print(f"pilot seed {PILOT_SEED}")
    complete_participants(demo_study.slug, 2)
    pilot_run(study=demo_study, participants=3, seed=PILOT_SEED)
    users = [make_user(f"old{i}", "annotators") for i in range(2)]
    adjudicator = make_user("old-adj", "adjudicators")
    try:
        old_apps = _migrate(BEFORE)
        state = _old_state_labelled(old_apps, users, adjudicator)
        _migrate(AFTER)
    finally:
        _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())

    written = state["items"]
    n_pilot = sum(1 for _id, pilot, _v in written.values() if pilot)
    n_real = len(written) - n_pilot
    assert n_pilot == 9 and n_real == 6
    items = {i.response_id: i for i in Item.objects.filter(study=demo_study)}
    assert set(items) == set(written)
    for response_pk, (public_id, pilot, values) in written.items():
        item = items[response_pk]
        assert item.public_id == public_id and item.is_pilot is pilot
        labels = Annotation.objects.filter(item=item).order_by("annotator__username")
        assert [a.identified for a in labels] == values
        assert AnnotationRevision.objects.filter(annotation__item=item).count() == 4
        assert Assignment.objects.filter(item=item, state="submitted").count() == 2
    assert Annotation.objects.count() == 2 * len(written)
    assert FinalLabel.objects.count() == len(written)
    decided = FinalLabel.objects.get(item__public_id=state["disputed"])
    assert decided.source == "adjudication" and decided.adjudicator == adjudicator
    assert decided.surface_difference is True and decided.item.is_pilot

    # Now in the pilot round: the real figures count real items only; the pilot's apart.
    real = researcher_overview(study=demo_study)
    assert real["items"] == n_real and {a["labels"] for a in real["annotators"]} == {n_real}
    assert researcher_overview(study=demo_study, is_pilot=True)["items"] == n_pilot
    top = [r for r in agreement_report(study=demo_study) if r.field == "identified"
           and r.scope == "all" and r.comparison == "all"]
    assert top[0].result.n_items == n_real and top[0].result.percent_agreement.value == 1.0
