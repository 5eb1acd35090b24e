"""manage.py pilot: simulated participants through the real flow, kept apart from real ones."""
import csv
import io
import re

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone

from spotlight_study.annotation.models import Annotation, FinalLabel, Item
from spotlight_study.annotation.services.labels import label_save
from spotlight_study.annotation.services.queue import assignment_next
from spotlight_study.participation import flags
from spotlight_study.participation.models import Participant, SurveyAnswer, TaskResponse
from spotlight_study.participation.pilot import pilot_run
from spotlight_study.participation.selectors import cell_counts
from spotlight_study.participation.services import instruction_check_passes
from spotlight_study.studies.models import Study
from spotlight_study.studies.selectors import main_settings, training_setting
from spotlight_study.studies.services import study_import

from ..annotation.conftest import label, make_user
from ..conftest import Walker


def _rows(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_pilot_goes_through_the_flow_with_varied_answers_times_and_checks(demo_study):
    """A pilot of 20 completes the flow with varied answers, plausible times, surveys and failed checks."""
    call_command("pilot", demo_study.slug, "--participants", "20", "--seed", "7")
    after = timezone.now()
    pilots = list(Participant.objects.filter(study=demo_study))
    assert len(pilots) == 20 and all(p.is_pilot for p in pilots)
    completed = [p for p in pilots if p.status == Participant.Status.COMPLETED]
    assert len(completed) == 18  # the two drop-outs stay in progress
    assert sum(1 for p in pilots if p.instruction_check_passed is False) == 2
    # Training answers agree with the real keyword check.
    keywords = training_setting(demo_study).check_keywords
    for r in TaskResponse.objects.filter(position=0).select_related("participant"):
        assert instruction_check_passes(answer=r.answer, keywords=keywords) == r.participant.instruction_check_passed

    main = list(TaskResponse.objects.filter(position__gt=0, answered_at__isnull=False))
    assert len({r.answer for r in main}) >= 10
    targets = {
        s.key: [t for p in s.patterns.all() if not p.is_distractor for t in p.tokens]
        for s in main_settings(demo_study)
    }
    naming = [r for r in main if any(f'"{t}"' in r.answer for t in targets[r.setting.key])]
    assert 0 < len(naming) < len(main)
    for r in TaskResponse.objects.filter(answered_at__isnull=False):
        assert r.served_at < r.answered_at <= after  # never dated after the pilot ended
        assert 500 <= r.time_on_task_ms <= 10 * 60 * 1000
        assert r.time_on_task_ms == int((r.answered_at - r.served_at).total_seconds() * 1000)
    for p in completed:
        assert p.started_at < p.consented_at < p.finished_at <= timezone.now()
        assert SurveyAnswer.objects.filter(participant=p).count() == 10
    # The profiles set off every flag at least once.
    rows = pilot_flag_keys(demo_study)
    assert set(flags.FLAG_KEYS) <= rows


def pilot_flag_keys(study) -> set[str]:
    """Every flag set on some pilot answer, as the export (with --include-pilot) computes them."""
    from spotlight_study.results.exports import export_rows

    return {
        f for row in export_rows(study=study, include_pilot=True)["responses"] for f in row["flags"].split(";") if f
    }


def test_export_leaves_pilots_out_unless_asked(demo_study, tmp_path):
    """export_results skips pilot participants; --include-pilot adds them marked pilot=1."""
    real = Walker(Client(), demo_study.slug)
    real.complete()
    call_command("pilot", demo_study.slug, "--participants", "4", "--seed", "1")
    call_command("export_results", demo_study.slug, "--out", str(tmp_path / "real"))
    people = _rows(tmp_path / "real" / "participants.csv")
    assert [p["pilot"] for p in people] == ["0"]
    assert len(_rows(tmp_path / "real" / "responses.csv")) == 2
    assert len(_rows(tmp_path / "real" / "survey.csv")) == 10
    call_command("export_results", demo_study.slug, "--out", str(tmp_path / "all"), "--include-pilot")
    people = _rows(tmp_path / "all" / "participants.csv")
    assert sorted(p["pilot"] for p in people) == ["0", "1", "1", "1", "1"]
    assert len(_rows(tmp_path / "all" / "responses.csv")) == 2 + 4 * 2


def test_pilots_take_no_place_in_a_cell(demo_study):
    """After a pilot of 7, eight real arrivals still fill the four cells two by two."""
    pilot_run(study=demo_study, participants=7, seed=3)
    assert cell_counts(study=demo_study, n_cells=4) == {0: 0, 1: 0, 2: 0, 3: 0}
    pilot_cells = sorted(
        Participant.objects.filter(is_pilot=True).values_list("cell_index", flat=True)
    )
    assert max(pilot_cells.count(i) for i in range(4)) - min(pilot_cells.count(i) for i in range(4)) <= 1
    for _ in range(8):
        Walker(Client(), demo_study.slug).enter()
    real = Participant.objects.filter(is_pilot=False)
    assert real.count() == 8
    first = real.order_by("started_at", "pk").first()
    assert first.assignment_counts == {str(i): 0 for i in range(4)}
    assert cell_counts(study=demo_study, n_cells=4) == {0: 2, 1: 2, 2: 2, 3: 2}
    assert sorted(real.values_list("cell_index", flat=True)) == [0, 0, 1, 1, 2, 2, 3, 3]


def test_pilot_runs_on_a_draft_study(demo_study):
    """A draft study takes no real participant, yet a pilot can try it."""
    Study.objects.filter(pk=demo_study.pk).update(status=Study.Status.DRAFT)
    demo_study.refresh_from_db()
    call_command("pilot", demo_study.slug, "--participants", "2", "--seed", "2")
    assert Participant.objects.filter(is_pilot=True, status=Participant.Status.COMPLETED).count() == 2
    response = Walker(Client(), demo_study.slug).enter()
    assert Participant.objects.filter(is_pilot=False).count() == 0, response.status_code


def test_delete_removes_every_pilot_row_and_keeps_real_data(demo_study, settings):
    """pilot --delete removes pilot participants, answers, surveys, items and labels; real data stay."""
    Walker(Client(), demo_study.slug).complete()
    call_command("pilot", demo_study.slug, "--participants", "3", "--seed", "5")
    annotators = [make_user(f"ann{i}", "annotators") for i in range(2)]
    # Pilot answers are labelled in the pilot annotation round, which the researcher opens.
    call_command("pilot_annotation", demo_study.slug, "--open", stdout=io.StringIO())
    labeled_pilot = 0
    for user in annotators:
        for pilot in (False, True):
            while (item := assignment_next(study=demo_study, annotator=user, pilot=pilot)) is not None:
                label_save(study=demo_study, annotator=user, public_id=item.public_id, label=label())
                labeled_pilot += item.response.participant.is_pilot
    assert labeled_pilot == 2 * 3 * 3  # 2 annotators x 3 pilots (none drops out) x 3 answers
    assert FinalLabel.objects.filter(item__response__participant__is_pilot=True).exists()
    real_items = set(Item.objects.filter(response__participant__is_pilot=False).values_list("pk", flat=True))

    call_command("pilot", demo_study.slug, "--delete")
    assert not Participant.objects.filter(is_pilot=True).exists()
    assert not TaskResponse.objects.filter(participant__is_pilot=True).exists()
    assert TaskResponse.objects.count() == 3 and SurveyAnswer.objects.count() == 10
    assert set(Item.objects.values_list("pk", flat=True)) == real_items and len(real_items) == 3
    assert Annotation.objects.count() == 2 * 3 and FinalLabel.objects.count() == 3
    assert Participant.objects.filter(is_pilot=False).count() == 1


def test_pilot_command_refuses_bad_input_and_changes_nothing(demo_study):
    """Unknown study, zero or too many participants: a clear error and no row."""
    with pytest.raises(CommandError, match="No study"):
        call_command("pilot", "no-such-study", "--participants", "3")
    with pytest.raises(CommandError, match="1 to 500"):
        call_command("pilot", demo_study.slug, "--participants", "0")
    with pytest.raises(CommandError, match="1 to 500"):
        call_command("pilot", demo_study.slug, "--participants", "501")
    assert not Participant.objects.exists()


def test_small_pilot_runs_go_on_through_the_profiles(demo_study):
    """Two pilots of 5 behave like one of 10: the tenth participant drops out."""
    first = pilot_run(study=demo_study, participants=5, seed=1)
    second = pilot_run(study=demo_study, participants=5, seed=2)
    assert (first.in_progress, second.in_progress) == (0, 1)
    assert (first.failed_check, second.failed_check) == (1, 0)


#: Words only the English answers use, and words each language's answers use.
_ENGLISH_WORDS = re.compile(r"\b(the|group|groups|texts|difference|same|more|than)\b", re.IGNORECASE)
_OWN_WORDS = {"de": re.compile(r"\bGruppen?\b"), "es": re.compile(r"\bgrupos?\b", re.IGNORECASE),
              "fr": re.compile(r"\bgroupes?\b", re.IGNORECASE)}


@pytest.mark.parametrize("code", ["de", "es", "fr"])
def test_a_pilot_of_a_german_spanish_or_french_study_answers_in_its_language(db, demo_data, code):
    """Simulated answers, training answers and survey comments of a study in German (Spanish,
    French) are written in that language; the instruction check still passes and fails as planned."""
    study = study_import(data={**demo_data, "slug": f"pilot-{code}", "language": code})
    call_command("pilot", study.slug, "--participants", "20", "--seed", "7")
    shown = {t for s in main_settings(study) for t in [*s.group1_texts, *s.group2_texts]}
    answers = [a for a in TaskResponse.objects.filter(participant__study=study, answered_at__isnull=False)
               .values_list("answer", flat=True) if a not in shown]  # the paster pastes a shown text
    comments = [c for c in Participant.objects.filter(study=study).values_list("comment", flat=True) if c]
    assert len(answers) >= 40 and comments
    for text in answers + comments:
        assert not _ENGLISH_WORDS.search(text), text
    assert all(_OWN_WORDS[code].search(text) for text in answers), answers
    pilots = Participant.objects.filter(study=study)
    assert sum(1 for p in pilots if p.instruction_check_passed is False) == 2
