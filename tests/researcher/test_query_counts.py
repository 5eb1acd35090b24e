"""The researcher's pages run as many queries for 40 participants as for 5 (no N+1 query).

Each page is requested twice and the second request counted, so that one-off writes (the
overview makes the annotation items of new answers) are not; the data grows between the two
counts by participants who answered, were labeled by two annotators (agreeing or not) and, when
the annotators agree, have a final label.
"""
from __future__ import annotations

import secrets
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from spotlight_study.annotation.models import Annotation, FinalLabel, Item, StudyAnnotator
from spotlight_study.annotation.services.queue import items_sync
from spotlight_study.participation.models import Participant, SurveyAnswer, TaskResponse
from spotlight_study.studies.models import Setting

from ..annotation.conftest import make_user

pytestmark = pytest.mark.django_db


def _add_participants(study, n: int, *, start: int) -> None:
    """``n`` participants with a training and every main answer saved, a survey answer, and
    two annotators' labels on each answer (final where they agree); rows written directly."""
    settings = sorted(study.settings.all(), key=lambda s: (s.kind != Setting.Kind.TRAINING, s.position))
    mains = [s for s in settings if s.kind == Setting.Kind.MAIN]
    now = timezone.now()
    statuses = [Participant.Status.COMPLETED, Participant.Status.IN_PROGRESS, Participant.Status.RETURNED]
    people = Participant.objects.bulk_create(
        Participant(
            study=study,
            prolific_pid=secrets.token_hex(12),
            prolific_study_id=secrets.token_hex(12),
            prolific_session_id=secrets.token_hex(12),
            cell_index=i % 2,
            cell_plan=[{"setting": s.key, "condition": "pattern"} for s in mains],
            assignment_counts={"0": i, "1": i},
            assignment_seed=i,
            shuffle_seed=i,
            status=statuses[i % 3],
            step="done" if i % 3 == 0 else "task",
            task_index=0,
            consented_at=now,
            finished_at=now if i % 3 == 0 else None,
            instruction_check_passed=i % 4 != 0,
            is_pilot=i % 5 == 0,
        )
        for i in range(start, start + n)
    )
    TaskResponse.objects.bulk_create(
        TaskResponse(
            participant=p,
            setting=s,
            position=k,
            condition="pattern",
            group1_order=[],
            group2_order=[],
            served_at=now - timedelta(seconds=60),
            last_served_at=now - timedelta(seconds=60),
            answer=f"answer {p.pk} {k}" if p.pk % 3 else "same text",
            answered_at=now,
            time_on_task_ms=60_000 if p.pk % 2 else 3_000,
            paste_count=int(p.pk % 7 == 0),
        )
        for p in people
        for k, s in enumerate(settings)
    )
    SurveyAnswer.objects.bulk_create(
        SurveyAnswer(participant=p, condition="pattern", item="ease", response=1 + p.pk % 5)
        for p in people
    )
    items_sync(study=study)
    annotators = [s.user for s in StudyAnnotator.objects.filter(study=study).select_related("user")]
    fresh = Item.objects.filter(study=study, annotations__isnull=True)
    labels, finals = [], []
    for item in fresh:
        agree = item.pk % 3 != 0
        for number, user in enumerate(annotators):
            labels.append(
                Annotation(
                    item=item, annotator=user, revision=1, source="web",
                    identified=agree or number == 0, surface_difference=False,
                    no_difference=False, tags=["tone"] if item.pk % 2 else [],
                )
            )
        if agree:
            finals.append(
                FinalLabel(
                    item=item, source=FinalLabel.Source.AGREEMENT, identified=True,
                    surface_difference=False, no_difference=False,
                    tags=["tone"] if item.pk % 2 else [], decided_at=now,
                )
            )
    Annotation.objects.bulk_create(labels)
    FinalLabel.objects.bulk_create(finals)


def _query_count(client, url: str) -> int:
    """Queries of the second of two GETs of ``url`` (which must answer 200)."""
    assert client.get(url).status_code == 200
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url)
    assert response.status_code == 200
    return len(ctx.captured_queries)


PAGES = (
    "/researcher/{slug}/",
    "/researcher/{slug}/monitor/",
    "/researcher/{slug}/monitor/rows/",
    "/researcher/{slug}/monitor/?flag=any&pilot=include",
    "/annotate/{slug}/overview/",
)


def test_researcher_pages_run_as_many_queries_for_40_participants_as_for_5(staff_client, demo_study):
    """Dashboard, monitor (page, rows, filtered) and annotation overview: same query count at 5
    and at 40 participants, with labels and final labels."""
    for number in (1, 2):
        StudyAnnotator.objects.create(
            study=demo_study, user=make_user(f"qc-annotator{number}", "annotators"),
            number=number, order_seed=number,
        )
    _add_participants(demo_study, 5, start=0)
    small = {page: _query_count(staff_client, page.format(slug=demo_study.slug)) for page in PAGES}
    _add_participants(demo_study, 35, start=5)
    assert Participant.objects.filter(study=demo_study).count() == 40
    assert FinalLabel.objects.filter(item__study=demo_study).exists()
    large = {page: _query_count(staff_client, page.format(slug=demo_study.slug)) for page in PAGES}
    assert large == small
