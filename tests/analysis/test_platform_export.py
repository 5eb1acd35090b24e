"""The analysis of a study with the distractor condition and three settings, end to end.

The study is imported from ``fixtures/distractor-study.yaml`` with the platform's import service;
18 participants (one per counterbalancing cell) take part through the participation services; two
annotators label every answer alike; ``manage.py export_results`` writes the export that
``python -m analysis`` and ``manage.py analyze`` read. The expected numbers are computed here
with statsmodels and scipy from the labels and survey answers this test chose.
"""

from __future__ import annotations

import json
import math
import random
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.utils import timezone
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportions_ztest

from analysis.__main__ import main as analysis_main
from spotlight_study.annotation.services.labels import LabelInput, label_save
from spotlight_study.annotation.services.queue import assignment_next
from spotlight_study.participation.assignment import assignment_create
from spotlight_study.participation.models import TaskResponse
from spotlight_study.participation.services import Telemetry, step_token, survey_item_keys
from spotlight_study.participation.steps import step_save
from spotlight_study.participation.steps.task import task_serve
from spotlight_study.studies.selectors import study_get_with_settings
from spotlight_study.studies.services import study_import_file

from ..annotation.conftest import make_user
from ..conftest import new_id

FIXTURE = Path(__file__).parent / "fixtures" / "distractor-study.yaml"
SETTINGS = ("bakery", "commute", "garden")
TREATMENTS = {"pattern": "identification", "pattern_with_distractors": "identification_with_distractors"}
LIKERT_SECTIONS = {"pattern": ("likert", "likert_paired"),
                   "pattern_with_distractors": ("likert_with_distractors", "likert_paired_with_distractors")}
ALTERNATIVES = {"ease": "greater", "effort": "less", "confidence": "greater"}
N_PARTICIPANTS = 18  # one per cell: 6 orders of 3 settings x 3 condition rotations
IDENTIFY_RATE = {"no_pattern": 0.25, "pattern": 0.8, "pattern_with_distractors": 0.55}
SURVEY_SHIFT = {"no_pattern": 0, "pattern": 1, "pattern_with_distractors": 0}


def _take_part(study, rng: random.Random, index: int) -> None:
    """One participant, through the services: consent, training, three tasks, the survey."""
    p = assignment_create(study=study, prolific_pid=new_id(), prolific_study_id=new_id(),
                          prolific_session_id=new_id())
    p = step_save(participant_id=p.pk, token=step_token(p), decision="agree")
    p = step_save(participant_id=p.pk, token=step_token(p))
    clock = timezone.now()
    answers = ["They fish at night under the stars, in the dark."] + [
        f"Participant {index} sees a difference in task {n}." for n in (1, 2, 3)
    ]
    for answer in answers:
        task_serve(participant=p, study=study, now=clock)
        clock += timedelta(seconds=rng.randint(30, 240))
        p = step_save(participant_id=p.pk, token=step_token(p), answer=answer,
                      telemetry=Telemetry(), now=clock)
    responses = {}
    for condition, item in sorted(survey_item_keys(p)):
        shift = SURVEY_SHIFT.get(condition, 0) * (-1 if item == "effort" else 1)
        responses[(condition, item)] = min(5, max(1, 3 + shift + rng.randint(-1, 1)))
    step_save(participant_id=p.pk, token=step_token(p), responses=responses, comment="")


def _label_everything(study, labels: dict[int, dict]) -> None:
    """Two annotators give each answer the label in ``labels`` (keyed by response id)."""
    for user in (make_user("annotator-a", "annotators"), make_user("annotator-b", "annotators")):
        while (item := assignment_next(study=study, annotator=user)) is not None:
            chosen = labels[item.response_id]
            label_save(study=study, annotator=user, public_id=item.public_id,
                       label=LabelInput(identified=chosen["identified"], surface_difference=False,
                                        no_difference=chosen["no_difference"], tags=chosen["tags"]))


@pytest.fixture
def distractor_run(db, tmp_path, settings):
    """The study run, labelled and exported; returns the export directory and the chosen data."""
    study = study_get_with_settings(slug=study_import_file(path=FIXTURE).slug)
    rng = random.Random(20251201)
    for index in range(N_PARTICIPANTS):
        _take_part(study, rng, index)

    tags = {"bakery": "shop", "commute": "weather", "garden": "place"}
    rows = list(TaskResponse.objects.filter(participant__study=study).select_related("setting", "participant")
                .order_by("pk"))
    failing = rows[0].participant_id  # their training answer is labelled "not identified"
    labels = {}
    for r in rows:
        if r.position == 0:
            labels[r.pk] = {"identified": r.participant_id != failing, "no_difference": False, "tags": []}
            continue
        identified = rng.random() < IDENTIFY_RATE[r.condition]
        tagged = rng.random() < 0.4
        labels[r.pk] = {"identified": identified, "tags": [tags[r.setting.key]] if tagged else [],
                        "no_difference": not identified and not tagged and rng.random() < 0.5}
    _label_everything(study, labels)

    export = tmp_path / "export"
    call_command("export_results", study.slug, "--out", str(export))
    main_rows = [r for r in rows if r.position > 0 and r.participant_id != failing]
    return study, export, main_rows, labels, failing


def _expected_identification(main_rows, labels):
    """``{(setting, treatment): (k_t, n_t, k_np, n_np, z, p)}`` from statsmodels."""
    out = {}
    for setting in SETTINGS:
        by_condition = {c: [labels[r.pk]["identified"] for r in main_rows
                            if r.setting.key == setting and r.condition == c] for c in IDENTIFY_RATE}
        base = by_condition["no_pattern"]
        for treatment in TREATMENTS:
            group = by_condition[treatment]
            z, p = proportions_ztest([sum(group), sum(base)], [len(group), len(base)], alternative="larger")
            out[(setting, treatment)] = (sum(group), len(group), sum(base), len(base), z, p)
    return out


def test_distractor_study_with_three_settings_is_analysed_from_the_export(distractor_run, tmp_path):
    """Each pattern condition is compared with no_pattern per setting and per item, Holm across them."""
    study, export, main_rows, labels, failing = distractor_run
    assert analysis_main([str(export), "--out", str(tmp_path / "out")]) == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))

    assert results["exclusions"] == {"failed_instruction_check": 1}
    assert results["participants"] == {"total": N_PARTICIPANTS, "included": N_PARTICIPANTS - 1, "excluded": 1}
    assert results["design"]["settings"] == list(SETTINGS)
    assert results["design"]["compared"] == [["pattern", "no_pattern"], ["pattern_with_distractors", "no_pattern"]]

    expected = _expected_identification(main_rows, labels)
    for (setting, treatment), (k_t, n_t, k_np, n_np, z, p) in expected.items():
        r = results[TREATMENTS[treatment]][setting]
        assert (r[f"k_{treatment}"], r[f"n_{treatment}"], r["k_no_pattern"], r["n_no_pattern"]) == (k_t, n_t, k_np, n_np)
        assert r["z"] == _expected(z) and r["p"] == _expected(p)
    # One Holm family over the 3 settings x 2 pattern conditions with a defined p-value.
    defined = [k for k in expected if not math.isnan(expected[k][5])]
    _, p_holm, _, _ = multipletests([expected[k][5] for k in defined], method="holm")
    for key, adjusted in zip(defined, p_holm):
        setting, treatment = key
        assert results["holm"][TREATMENTS[treatment]][setting]["p_holm"] == pytest.approx(adjusted)
    for setting, treatment in set(expected) - set(defined):
        assert results["holm"][TREATMENTS[treatment]][setting]["p_holm"] is None

    # Survey: every included participant rated all three conditions.
    answers = {}
    for r in main_rows:
        for a in r.participant.survey_answers.all():
            answers.setdefault((a.item, a.condition), {})[r.participant_id] = a.response
    mw_keys, mw_p, wx_keys, wx_p = [], [], [], []
    for item, alternative in ALTERNATIVES.items():
        base = answers[(item, "no_pattern")]
        for treatment, (section, paired_section) in LIKERT_SECTIONS.items():
            treated = answers[(item, treatment)]
            mw = sps.mannwhitneyu(list(treated.values()), list(base.values()), alternative=alternative)
            r = results[section][item]
            assert (r[f"n_{treatment}"], r["n_no_pattern"], r["alternative"]) == (len(treated), len(base), alternative)
            assert r["U"] == pytest.approx(mw.statistic) and r["p"] == pytest.approx(mw.pvalue)
            pairs = sorted(treated)
            wx = sps.wilcoxon([treated[i] for i in pairs], [base[i] for i in pairs], alternative=alternative)
            paired = results[paired_section][item]
            assert paired["W"] == pytest.approx(wx.statistic) and paired["p"] == pytest.approx(wx.pvalue)
            assert paired["n_pairs"] == N_PARTICIPANTS - 1
            mw_keys.append((section, item))
            mw_p.append(mw.pvalue)
            wx_keys.append((paired_section, item))
            wx_p.append(wx.pvalue)
    for keys, ps in ((mw_keys, mw_p), (wx_keys, wx_p)):
        for (section, item), adjusted in zip(keys, multipletests(ps, method="holm")[1]):
            assert results["holm"][section][item]["p_holm"] == pytest.approx(adjusted)
    assert set(results["likert_distribution"]["ease"]) == {"pattern", "no_pattern", "pattern_with_distractors"}

    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "### Pattern with distractors" in report and "### Survey: pattern with distractors" in report
    assert f"Holm-adjusted across the {len(defined)} identification test(s)" in report
    assert "pattern + distractors" in (tmp_path / "out" / "figures" / "likert.svg").read_text(encoding="utf-8")

    # manage.py analyze exports the same data and gives the same results.
    call_command("analyze", study.slug, "--out", str(tmp_path / "via-command"))
    assert json.loads((tmp_path / "via-command" / "results.json").read_text(encoding="utf-8")) == results


def _expected(value: float):
    """statsmodels' value as results.json writes it: NaN (a group identified by all or by none of
    its participants, so z is undefined) is ``None``. The counterbalancing's tie-break is drawn with
    ``secrets``, so which participant lands in which cell, and whether such a group occurs, varies
    from run to run."""
    return None if math.isnan(value) else pytest.approx(value)
