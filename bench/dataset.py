#!/usr/bin/env python
"""The researcher benchmark's data set, and its in-process measurements (run by researcher.py).

Run in a subprocess with the server's environment (``DATABASE_URL`` and the rest, see
``bench.server.production_env``) on a migrated database with the demo study imported:

    python bench/dataset.py --participants 10000 --out /tmp/figures.json

1. **Templates through the real code**: ``pilot_run`` sends 40 simulated participants (every
   counterbalancing cell, several behaviour profiles) through the services of the flow (consent, training, tasks, survey), so every row is as
   the app writes it.
2. **Clones by ``bulk_create``**: the completed templates are copied, round-robin, into
   ``--participants`` non-pilot participants with fresh Prolific IDs, with their task responses
   (training + one per main setting: 2 main answers each in the demo study) and survey answers.
3. **Labels**: ``items_sync`` makes the annotation items; two annotators label every item
   (an ``Annotation`` and its first ``AnnotationRevision`` each), by ``bulk_create``.
4. **Statistics**: ``ANALYZE`` on PostgreSQL, as autovacuum would (:func:`analyze_tables`).
5. **In process**: each researcher page through Django's test client as a logged-in researcher,
   with its query count (``CaptureQueriesContext``) and time, and ``export_results`` through
   ``call_command`` (by name: the command's module may move).

Writes the figures as JSON to ``--out``.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
SLUG = "spotlight-replication"
TEMPLATES = 40  # pilot participants run through the services; the completed ones are copied
BATCH = 2000


def _clone_fields(obj, skip: set[str]) -> dict:
    """The concrete field values of ``obj`` (by attname, so FKs stay ids), without ``skip``."""
    return {f.attname: getattr(obj, f.attname) for f in obj._meta.concrete_fields if f.attname not in skip}


def generate(n_participants: int, seed: int = 1) -> dict:
    """Fill the demo study with ``n_participants`` completed participants and two annotators'
    labels (see the module docstring); returns row counts and the time taken (s)."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.db import transaction

    from spotlight_study.annotation.models import Annotation, AnnotationRevision, Item, StudyAnnotator
    from spotlight_study.studies.models import StudyMember
    from spotlight_study.annotation.services.queue import items_sync
    from spotlight_study.participation.models import Participant, SurveyAnswer, TaskResponse
    from spotlight_study.participation.flags import normalize_answer
    from spotlight_study.participation.near_duplicates import text_key
    from spotlight_study.participation.pilot import pilot_run
    from spotlight_study.studies.models import Study

    t0 = time.perf_counter()
    rng = random.Random(seed)
    study = Study.objects.get(slug=SLUG)
    if study.status != Study.Status.LIVE:
        Study.objects.filter(pk=study.pk).update(status=Study.Status.LIVE)
        study.refresh_from_db()
    pilot_run(study=Study.objects.prefetch_related("settings").get(pk=study.pk),
              participants=TEMPLATES, seed=seed)
    templates = list(Participant.objects.filter(study=study, status=Participant.Status.COMPLETED)
                     .prefetch_related("responses", "survey_answers"))
    if not templates:
        raise RuntimeError("pilot_run completed no participant to copy")
    skip_p = {"id"}
    with transaction.atomic():
        for start in range(0, n_participants, BATCH):
            batch = []
            for i in range(start, min(start + BATCH, n_participants)):
                t = templates[i % len(templates)]
                row = _clone_fields(t, skip_p)
                row.update(prolific_pid=secrets.token_hex(12), prolific_study_id=secrets.token_hex(12),
                           prolific_session_id=secrets.token_hex(12), is_pilot=False)
                batch.append(Participant(**row))
            made = Participant.objects.bulk_create(batch)
            if made[0].pk is None:  # SQLite before RETURNING support; not the case with Django 5
                raise RuntimeError("bulk_create returned no primary keys")
            responses, answers = [], []
            for offset, p in enumerate(made):
                t = templates[(start + offset) % len(templates)]
                for r in t.responses.all():
                    row = _clone_fields(r, {"id", "participant_id"})
                    row["answer"] = f"{r.answer} (copy {p.pk})"
                    # The key the answer's save writes (the identical-answer flag reads it).
                    row["text_key"] = text_key(normalize_answer(row["answer"])) if r.answered_at else None
                    responses.append(TaskResponse(participant_id=p.pk, **row))
                for a in t.survey_answers.all():
                    answers.append(SurveyAnswer(participant_id=p.pk, **_clone_fields(a, {"id", "participant_id"})))
            TaskResponse.objects.bulk_create(responses, batch_size=BATCH)
            SurveyAnswer.objects.bulk_create(answers, batch_size=5000)
    t_people = time.perf_counter() - t0

    User = get_user_model()
    annotators = []
    group, _ = Group.objects.get_or_create(name="annotators")
    for number in (1, 2):
        user, _ = User.objects.get_or_create(username=f"bench-annotator{number}")
        user.groups.add(group)
        # Roles are per study: without the membership the annotator pages answer 403.
        StudyMember.objects.get_or_create(study=study, user=user, role=StudyMember.Role.ANNOTATOR)
        StudyAnnotator.objects.get_or_create(study=study, user=user,
                                             defaults={"number": number, "order_seed": rng.getrandbits(62)})
        annotators.append(user)
    items_sync(study=study)
    items = list(Item.objects.filter(study=study).values_list("pk", flat=True))
    with transaction.atomic():
        for start in range(0, len(items), BATCH):
            labels = []
            for pk in items[start:start + BATCH]:
                for user in annotators:
                    identified = rng.random() < 0.6
                    labels.append(Annotation(item_id=pk, annotator=user, revision=1, source="web",
                                             identified=identified, surface_difference=rng.random() < 0.3,
                                             no_difference=not identified and rng.random() < 0.2, tags=[]))
            made = Annotation.objects.bulk_create(labels)
            AnnotationRevision.objects.bulk_create([
                AnnotationRevision(annotation_id=a.pk, revision=1, source="web", saved_at=a.created_at,
                                   identified=a.identified, surface_difference=a.surface_difference,
                                   no_difference=a.no_difference, tags=[])
                for a in made
            ])
    return {
        "participants": Participant.objects.filter(study=study, is_pilot=False).count(),
        "main_answers": TaskResponse.objects.filter(participant__study=study, participant__is_pilot=False,
                                                    position__gt=0).count(),
        "task_responses": TaskResponse.objects.filter(participant__study=study).count(),
        "survey_answers": SurveyAnswer.objects.filter(participant__study=study).count(),
        "items": len(items),
        "annotations": Annotation.objects.filter(item__study=study).count(),
        "generate_s": round(time.perf_counter() - t0, 1),
        "participants_s": round(t_people, 1),
    }


def analyze_tables() -> bool:
    """``ANALYZE`` on PostgreSQL (``True``), nothing on SQLite (``False``).

    A production PostgreSQL's autovacuum analyzes tables soon after a bulk change; without
    statistics (this machine's server runs with ``autovacuum = off``) the planner takes the
    freshly filled tables for empty and joins them by nested loops, which times the planner's
    ignorance rather than the pages. SQLite keeps no statistics unless asked, in production too.
    """
    from django.db import connection

    if connection.vendor != "postgresql":
        return False
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return True


def researcher_user():
    """The benchmark's researcher login, created with a fresh password and made owner of the
    generated study (roles are per study: a member's pages, the membership check included, are
    what is measured); (user, password). Call after :func:`generate`."""
    from django.contrib.auth import get_user_model

    from spotlight_study.studies.models import Study, StudyMember

    password = secrets.token_urlsafe(16)
    user, _ = get_user_model().objects.get_or_create(username="bench-researcher", defaults={"is_staff": True})
    user.is_staff = True
    user.set_password(password)
    user.save()
    StudyMember.objects.get_or_create(study=Study.objects.get(slug=SLUG), user=user, role=StudyMember.Role.OWNER)
    return user, password


PAGES = {
    "dashboard": f"/researcher/{SLUG}/",
    "monitor": f"/researcher/{SLUG}/monitor/",
    "monitor rows": f"/researcher/{SLUG}/monitor/rows/",
    "annotation overview": f"/annotate/{SLUG}/overview/",
    "zip download": f"/researcher/{SLUG}/export.zip",
}


def _profiled(call, top: int = 14) -> str:
    """Run ``call()`` under cProfile; the ``top`` functions by own time, and the project's own
    functions (``spotlight_study/``, middleware and role wrappers left out) by cumulative time."""
    import cProfile
    import io
    import pstats

    prof = cProfile.Profile()
    prof.runcall(call)
    text = io.StringIO()
    stats = pstats.Stats(prof, stream=text)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(r"spotlight_study/(?!middleware|accounts)", top)
    return "\n".join(line for line in text.getvalue().splitlines() if line.strip())


def measure_in_process(user, profile: bool = False) -> dict:
    """Each page of :data:`PAGES` through Django's test client: status, queries and ms of the
    first and the second of two requests (the second without one-off work such as
    ``items_sync`` or per-process caches), and ``export_results`` by ``call_command``.
    With ``profile``, a cProfile summary of one more request of each."""
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client()
    client.force_login(user)
    out = {}
    for name, path in PAGES.items():
        runs = []
        for _ in range(2):
            with CaptureQueriesContext(connection) as q:
                t0 = time.perf_counter()
                r = client.get(path)
                runs.append(((time.perf_counter() - t0) * 1000, len(q.captured_queries)))
        out[name] = {"status": r.status_code, "first_ms": round(runs[0][0], 1), "first_queries": runs[0][1],
                     "ms": round(runs[1][0], 1), "queries": runs[1][1]}
        if profile:
            out[name]["profile"] = _profiled(lambda: client.get(path))
    with tempfile.TemporaryDirectory() as tmp:
        def export() -> None:
            call_command("export_results", SLUG, "--out", tmp, stdout=open(os.devnull, "w"))

        t0 = time.perf_counter()
        export()
        s = time.perf_counter() - t0
        sizes = {p.name: p.stat().st_size for p in Path(tmp).iterdir()}
        out["export_results"] = {"s": round(s, 2), "bytes": sizes}
        if profile:
            out["export_results"]["profile"] = _profiled(export)
    return out


def main() -> None:
    """Generate the data set, measure in process, write the JSON figures (see the docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--participants", type=int, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--profile", action="store_true", help="add a cProfile summary of each page")
    args = ap.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "spotlight_study.settings")
    os.environ["ALLOWED_HOSTS"] = os.environ.get("ALLOWED_HOSTS", "127.0.0.1") + ",testserver"
    import django

    django.setup()
    counts = generate(args.participants)
    counts["analyzed"] = analyze_tables()
    user, password = researcher_user()
    figures = {"counts": counts, "in_process": measure_in_process(user, args.profile), "login": [user.username, password]}
    args.out.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
