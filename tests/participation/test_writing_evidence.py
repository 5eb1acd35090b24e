"""The writing-process evidence on the server: bad telemetry is clamped or dropped and never
stops an answer; the overlap with the shown texts and the near-duplicates are measured on save;
the SQL forms of the new flags equal the Python ones; the study file sets the thresholds."""
import copy
import itertools
import json
import secrets

import pytest
from django.test import Client
from django.utils import timezone
from rest_framework import serializers

from spotlight_study.participation import flag_queries, flags, writing
from spotlight_study.participation.forms import parse_telemetry
from spotlight_study.participation.models import Participant, TaskResponse
from spotlight_study.studies.export import study_file_data
from spotlight_study.studies.models import Setting, Study
from spotlight_study.studies.schema import AnswerFlagsSerializer
from spotlight_study.studies.services import study_import
from tests.conftest import Walker

pytestmark = pytest.mark.django_db

WRITING_COUNTS = (
    "typed_chars", "dropped_chars", "replaced_chars", "insertions", "deletions", "typing_ms",
    "largest_insert_chars", "away_before_paste_ms",
)


def _main_answer(walker: Walker, events: str):
    """Walk ``walker`` to the first main task and post an answer with ``events``."""
    walker.enter()
    walker.consent()
    walker.instructions()
    walker.answer("The first group fishes by day, the second at night.")
    return walker.answer("Group 2 describes the doctor as a woman more often.", events=events)


@pytest.mark.parametrize(
    "raw",
    [
        '{"typed_chars": -5, "typing_ms": -1, "deletions": -1e300}',
        '{"typed_chars": NaN, "typing_ms": Infinity, "insertions": -Infinity}',
        '{"typed_chars": 1e9, "insertions": 1000000000, "typing_ms": 1e18}',
        '{"typed_chars": "12", "typing_ms": true, "dropped_chars": [3], "replaced_chars": {"a": 1}}',
        '{"near_duplicate_score": 100, "shown_overlap_permille": 1000, "answer": "forged", '
        '"condition": "pattern", "events": [{"t": 1, "type": "paste", "condition": "x"}]}',
        '[1, 2, 3]',
        '{"events": ' + "[" * 5000 + "]" * 5000 + "}",
        "not json",
    ],
)
def test_bad_telemetry_is_clamped_or_dropped(raw):
    """Negative, NaN, huge, mistyped and forged values give bounded counts; nothing raises."""
    t = parse_telemetry(raw)
    for name in WRITING_COUNTS:
        value = getattr(t, name)
        assert isinstance(value, int) and 0 <= value <= 24 * 60 * 60 * 1000, (name, value)
    assert not hasattr(t, "near_duplicate_score") and not hasattr(t, "answer")
    assert all(set(e) <= {"t", "type", "chars"} for e in t.events)


def test_huge_counts_are_capped_at_their_bounds():
    t = parse_telemetry('{"typed_chars": 1e9, "typing_ms": 1e12, "largest_insert_chars": 1e9}')
    assert (t.typed_chars, t.typing_ms, t.largest_insert_chars) == (1_000_000, 86_400_000, 1_000_000)


@pytest.mark.parametrize(
    "events",
    [
        '{"typed_chars": NaN, "typing_ms": -3, "insertions": 1e9}',
        '{"near_duplicate_score": 0, "shown_overlap_permille": 0, "paste_count": "a lot"}',
        # About 200 KB of events (the body limit is 256 KB): all but the first 200 dropped.
        json.dumps({"typed_chars": 10, "events": [{"t": i, "type": "x" * 20} for i in range(5000)]}),
        '{"events": ' + "[" * 3000 + "]" * 3000 + "}",
    ],
)
def test_bad_telemetry_never_stops_the_answer(demo_study, events):
    """The answer is saved and the participant moves on; the server's own measures are its own."""
    w = Walker(Client(), demo_study.slug)
    response = _main_answer(w, events)
    assert response.status_code == 302
    r = TaskResponse.objects.get(participant__prolific_pid=w.pid, position=1)
    assert r.answer == "Group 2 describes the doctor as a woman more often."
    assert len(r.client_events) <= 200
    assert r.shown_overlap_permille == 0 and r.near_duplicate_score == 0
    assert r.insertions in (0, 1_000_000)


def test_a_megabyte_of_events_is_dropped_and_the_answer_saved(demo_study):
    """1 MB of forged events: the answer is saved, the evidence dropped whole (zeros, no events),
    no 500; flow.js never sends more than 200 events (about 10 KB)."""
    w = Walker(Client(), demo_study.slug)
    raw = json.dumps({"paste_count": 3, "typed_chars": 900, "events": [{"t": 1}] * 120_000})
    assert len(raw) > 1_000_000
    response = _main_answer(w, raw)
    assert response.status_code == 302
    r = TaskResponse.objects.get(participant__prolific_pid=w.pid, position=1)
    assert r.answered_at is not None and r.answer == "Group 2 describes the doctor as a woman more often."
    assert (r.paste_count, r.typed_chars, r.client_events) == (0, 0, [])


def test_a_body_over_the_request_limit_is_a_clear_413_not_a_500(demo_study, settings):
    """A body over DATA_UPLOAD_MAX_MEMORY_SIZE (2 MB) is refused as a whole with the 413 page,
    no 500, and nothing is saved."""
    w = Walker(Client(), demo_study.slug)
    response = _main_answer(w, "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 10))
    assert response.status_code == 413
    assert not TaskResponse.objects.filter(participant__prolific_pid=w.pid, position=1, answered_at__isnull=False)


def test_writing_counts_are_stored_as_the_browser_reported_them(demo_study):
    w = Walker(Client(), demo_study.slug)
    counts = dict(zip(WRITING_COUNTS, (120, 7, 3, 130, 12, 45_000, 7, 4_000)))
    _main_answer(w, json.dumps({**counts, "paste_count": 1, "paste_chars": 5}))
    r = TaskResponse.objects.get(participant__prolific_pid=w.pid, position=1)
    assert {name: getattr(r, name) for name in WRITING_COUNTS} == counts


def test_overlap_with_the_shown_texts():
    """A lightly edited copy of a shown text is mostly covered; an answer in own words, or one
    quoting a short phrase, is not."""
    shown = [
        "Under a bright morning sun, an old angler wades into the cold river, flicking his fly line.",
        "A young woman sits on the wooden dock at noon, squinting against the glare on the lake.",
    ]
    edited = "Under a bright morning sun an old fisher wades into the cold river, flicking his line."
    assert writing.shown_overlap_permille(edited, shown) >= 700
    own = "Group 1 is set in daylight while group 2 happens at night, with lamps and stars."
    assert writing.shown_overlap_permille(own, shown) == 0
    quote = "Group 1 mentions 'the cold river' and sunshine; group 2 is about darkness and lamps."
    assert writing.shown_overlap_permille(quote, shown) < 200
    assert writing.shown_overlap_permille("", shown) == 0


def _overlap_aligning_every_text(answer: str, shown: list[str]) -> int:
    """The overlap as first written: every shown text aligned with the answer."""
    from rapidfuzz.distance import Indel

    text = flags.normalize_answer(answer)
    if not text:
        return 0
    covered = bytearray(len(text))
    for other in map(flags.normalize_answer, shown):
        if len(other) < writing.COPIED_BLOCK_MIN_CHARS:
            continue
        for block in Indel.opcodes(text, other).as_matching_blocks():
            if block.size >= writing.COPIED_BLOCK_MIN_CHARS:
                covered[block.a:block.a + block.size] = b"\x01" * block.size
    return sum(covered) * 1000 // len(text)


def test_the_overlap_aligns_only_texts_sharing_a_run_and_gives_the_same_share():
    """Skipping the shown texts that share no run of 12 characters with the answer changes no
    result: 600 seeded answers over the demo study's texts (copies, edited and cut copies,
    mixtures of two texts, short quotes, own words) against aligning every text."""
    import random

    import yaml

    from tests.conftest import REPO

    seed = 20261207
    print(f"seed {seed}")
    rng = random.Random(seed)
    data = yaml.safe_load((REPO / "fixtures" / "spotlight-replication.yaml").read_text())
    settings_texts = [s["group1"] + s["group2"] for s in [data["training"], *data["settings"]]]
    words = " ".join(t for texts in settings_texts for t in texts).split()
    checked = 0
    for _ in range(600):
        shown = rng.choice(settings_texts)
        a, b = rng.sample(shown, 2)
        kind = rng.randrange(5)
        if kind == 0:
            answer = a
        elif kind == 1:  # an edited copy: words dropped and replaced
            answer = " ".join(w if rng.random() > 0.2 else rng.choice(words) for w in a.split())
        elif kind == 2:  # a cut of one text and a cut of another
            answer = a[: rng.randrange(len(a))] + " " + b[rng.randrange(len(b)):]
        elif kind == 3:  # a short quote inside own words
            start = rng.randrange(max(1, len(a) - 15))
            answer = "Group 2 talks about " + a[start:start + rng.randrange(5, 16)] + " more often."
        else:
            answer = " ".join(rng.choice(words) for _ in range(rng.randrange(3, 40)))
        assert writing.shown_overlap_permille(answer, shown) == _overlap_aligning_every_text(answer, shown), answer
        checked += 1
    assert checked == 600


def test_near_duplicates_are_scored_on_both_answers(demo_study):
    """The later answer gets its best similarity and raises the earlier one's; another setting
    and the participant's own answers are not compared."""
    texts = {
        "doctor": ["Group 2 describes the doctor as a woman more often.",
                   "Group 2 describes the doctor as a woman more often!!",  # lightly edited copy
                   "The two doctors differ: in the second group the texts are about friendly nurses."],
        "farming": ["Group 1 grows maize and beans, group 2 wheat.",
                    "Apples and pears grow in the orchards of the second group of farmers.",
                    "Farmers of group one harvest grain, the others pick fruit all day long."],
    }
    walkers = [Walker(Client(), demo_study.slug) for _ in range(3)]
    for i, w in enumerate(walkers):
        w.enter(); w.consent(); w.instructions()
        w.answer("The first group fishes by day, the second at night.")
        plan = Participant.objects.get(prolific_pid=w.pid).cell_plan
        for task in plan:
            w.answer(texts[task["setting"]][i])
    score = {
        (r.participant.prolific_pid, r.setting.key): r.near_duplicate_score
        for r in TaskResponse.objects.select_related("participant", "setting").filter(answered_at__isnull=False)
    }
    first, second, third = (w.pid for w in walkers)
    assert score[(second, "doctor")] >= 95
    assert score[(first, "doctor")] == score[(second, "doctor")]
    assert score[(third, "doctor")] < 70
    assert all(score[(w, "farming")] < 70 for w in (first, second, third))
    # Training answers: all three identical, each compared with the others.
    assert {score[(w, "angler")] for w in (first, second, third)} == {100}


def test_a_shared_answer_does_not_rewrite_the_answers_that_already_hold_its_score(demo_study):
    """Five participants write the same training answer: each save reads the others once and
    writes only the rows whose stored score it raises (the second save raises the first; later
    saves raise none), never one UPDATE per earlier answer."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    updates, locks = [], []
    for _ in range(5):
        w = Walker(Client(), demo_study.slug)
        w.enter(); w.consent(); w.instructions()
        w.page()
        with CaptureQueriesContext(connection) as queries:
            w.post({w.answer_field(): "The first group fishes by day, the second at night.", "client_events": ""})
        sql = [q["sql"] for q in queries.captured_queries]
        updates.append(sum(1 for q in sql if q.startswith("UPDATE participation_taskresponse SET near_duplicate_score")))
        # The beaten rows are locked in primary-key order before the UPDATE, so two saves that
        # raise the same rows cannot deadlock on PostgreSQL (SQLite has no FOR UPDATE).
        locks.extend(q for q in sql if q.startswith("SELECT id, near_duplicate_score FROM participation_taskresponse"))
    assert updates == [0, 1, 0, 0, 0]
    assert len(locks) == 1 and " WHERE id IN (" in locks[0]
    assert locks[0].endswith("ORDER BY id" + (" FOR UPDATE" if connection.vendor == "postgresql" else ""))
    assert set(TaskResponse.objects.filter(position=0).values_list("near_duplicate_score", flat=True)) == {100}


def _rows(study, values):
    setting = study.settings.filter(kind=Setting.Kind.MAIN).order_by("position").first()
    now = timezone.now()
    people = Participant.objects.bulk_create(
        Participant(
            study=study, prolific_pid=secrets.token_hex(12), prolific_study_id="s",
            prolific_session_id=secrets.token_hex(12), cell_index=0, cell_plan=[],
            assignment_counts={}, assignment_seed=1, shuffle_seed=1,
        )
        for _ in values
    )
    return TaskResponse.objects.bulk_create(
        TaskResponse(
            participant=p, setting=setting, position=1, condition="pattern", group1_order=[],
            group2_order=[], served_at=now, last_served_at=now, answered_at=now, time_on_task_ms=60_000,
            **v,
        )
        for p, v in zip(people, values)
    )


@pytest.mark.parametrize("thresholds", [flags.DEFAULT_THRESHOLDS, flags.FlagThresholds(600, 0.05, 0.95, 100, 1)])
def test_sql_writing_flags_equal_the_python_predicates_at_every_boundary(demo_study, thresholds):
    """Each new SQL flag column equals its predicate in flags.py over a grid of boundary values,
    unmeasured (NULL) similarities included."""
    grid = list(itertools.product(
        (0, 29, 30, 31, 100),  # typed_chars
        (0, 1, 1_200, 1_199, 60_000),  # typing_ms
        ((0, 0), (20, 0), (0, 19), (10, 10), (50, 40)),  # dropped, replaced
        (None, 0, 49, 50, 499, 500, 950),  # overlap, per mille
        (None, 0, 89, 90, 100),  # near-duplicate score
        (0, 999, 1_000, 2_999, 3_000),  # away before a paste, ms
    ))
    # Answers of 60 characters: the inserted share is (dropped + replaced) / 60.
    _rows(demo_study, [
        dict(answer=f"{i:060d}", typed_chars=t, typing_ms=ms, dropped_chars=d, replaced_chars=rp,
             shown_overlap_permille=o, near_duplicate_score=n, away_before_paste_ms=a)
        for i, (t, ms, (d, rp), o, n, a) in enumerate(grid[::7])
    ])
    columns = flag_queries.answer_flag_columns(short_time_flag_seconds=20, thresholds=thresholds)
    keys = list(columns)
    rows = TaskResponse.objects.values_list(*flags.EVIDENCE_FIELDS, *columns.values())
    assert len(rows) == len(grid[::7])
    for row in rows:
        evidence = flags.AnswerEvidence(**dict(zip(flags.EVIDENCE_FIELDS, row[: len(flags.EVIDENCE_FIELDS)])))
        sql = {key for key, value in zip(keys, row[len(flags.EVIDENCE_FIELDS):]) if value}
        python = set(flags.answer_flags(evidence, short_time_flag_seconds=20, identical=False, thresholds=thresholds))
        assert sql == python, evidence


def test_study_flag_counts_use_the_study_thresholds(demo_study):
    """Counts follow the study file's thresholds, as the export's flags do."""
    _rows(demo_study, [dict(answer="a" * 60, typed_chars=60, typing_ms=3_000)])  # 1,200 per minute
    count = lambda: sum(  # noqa: E731
        c[flags.TYPED_IMPLAUSIBLY_FAST] for c in flag_queries.study_flag_counts(study=demo_study)[False].by_participant.values()
    )
    assert count() == 0
    Study.objects.filter(pk=demo_study.pk).update(answer_flag_thresholds={"typed_chars_per_minute_max": 1000})
    demo_study.refresh_from_db()
    assert count() == 1


def test_the_schema_defaults_are_the_flag_module_defaults():
    """studies/schema.py may not import participation: its defaults are kept equal by this test."""
    fields = AnswerFlagsSerializer().fields
    assert {name: fields[name].default for name in flags.FlagThresholds._fields} == flags.DEFAULT_THRESHOLDS._asdict()
    assert set(fields) == set(flags.FlagThresholds._fields)


def test_study_file_thresholds_import_export_and_refusal(demo_data):
    """Set values are stored and used, the export writes every value (defaults filled in), and
    an out-of-range value is refused with a message naming it."""
    data = copy.deepcopy(demo_data)
    data["answer_flags"] = {"near_duplicate_similarity": 80, "typed_chars_per_minute_max": 900}
    study = study_import(data=data)
    assert flags.thresholds_of(study) == flags.DEFAULT_THRESHOLDS._replace(
        near_duplicate_similarity=80, typed_chars_per_minute_max=900
    )
    exported = study_file_data(study)["answer_flags"]
    assert exported == {**flags.DEFAULT_THRESHOLDS._asdict(), "near_duplicate_similarity": 80,
                        "typed_chars_per_minute_max": 900}
    plain = copy.deepcopy(demo_data)
    plain["slug"] = "no-thresholds"
    assert flags.thresholds_of(study_import(data=plain)) == flags.DEFAULT_THRESHOLDS
    bad = AnswerFlagsSerializer(data={"near_duplicate_similarity": 50})
    with pytest.raises(serializers.ValidationError, match="70"):
        bad.is_valid(raise_exception=True)
