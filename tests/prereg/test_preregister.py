"""manage.py preregister: the frozen plan, its hash, its versions, and the analysis citing it."""
from __future__ import annotations

import hashlib
import io
import json
import re

import pytest
from django.core.management import CommandError, call_command

from analysis import plan_sample_size
from analysis.__main__ import main as analysis_main
from analysis.plan_hash import plan_sha256
from spotlight_study.annotation.models import Exclusion
from spotlight_study.prereg.models import PlanVersion
from spotlight_study.prereg.plan import EXCLUSION_RULES, study_definition
from spotlight_study.studies.models import Setting, Study
from spotlight_study.studies.selectors import study_cells, study_get_with_settings

from ..annotation.conftest import make_user
from ..researcher.test_analyze import _annotate_all

PLANNER = ["--p-control", "0.3", "--p-treatment", "0.6", "--dropout", "0.1"]


def _preregister(study, out, *extra) -> str:
    """Run preregister and return the plan hash it printed."""
    from io import StringIO

    stdout = StringIO()
    call_command("preregister", study.slug, "--out", str(out), *extra, stdout=stdout)
    return re.search(r"Plan SHA-256 ([0-9a-f]{64})", stdout.getvalue()).group(1)


def test_preregister_writes_the_plan_and_prints_its_canonical_hash(demo_study, tmp_path):
    """plan.json, plan.md and plan_osf.txt are written; the printed hash is sha256 of plan.json's bytes."""
    sha = _preregister(demo_study, tmp_path, *PLANNER, "--osf")
    raw = (tmp_path / "plan.json").read_bytes()
    plan = json.loads(raw)
    assert hashlib.sha256(raw).hexdigest() == sha == plan_sha256(plan)
    version = PlanVersion.objects.get(study=demo_study)
    assert (version.version, version.plan_sha256, version.plan) == (1, sha, plan)
    assert version.created_at is not None

    expected_n = plan_sample_size(0.3, 0.6, dropout=0.1, cells=len(study_cells(demo_study)),
                                  conditions=2).n_total
    assert plan["sample_size"]["planned_n"] == version.planned_n == expected_n
    assert "NormalIndPower" in plan["sample_size"]["derivation"]
    alternatives = {t["id"]: t["alternative"] for t in plan["tests"]}
    assert alternatives == {
        "identification/doctor": "larger", "identification/farming": "larger",
        "likert/ease": "greater", "likert/effort": "less", "likert/confidence": "greater",
        "likert_paired/ease": "greater", "likert_paired/effort": "less", "likert_paired/confidence": "greater",
    }
    assert {t["family"] for t in plan["tests"] if t["kind"] == "identification"} == {"identification"}
    assert plan["correction"]["method"] == "holm"
    assert plan["study"]["definition_sha256"] == plan_sha256(study_definition(demo_study))

    md = (tmp_path / "plan.md").read_text()
    assert sha in md and "Setting doctor" in md and "failed_instruction_check" in md
    osf = (tmp_path / "plan_osf.txt").read_text()
    positions = [osf.index(f"\n{h}\n") for h in
                 ("Hypotheses", "Design Plan", "Sampling Plan", "Variables", "Analysis Plan")]
    assert positions == sorted(positions) and sha in osf


def test_the_hash_is_stable_across_two_runs(demo_study, tmp_path):
    """Preregistering the same study with the same options twice gives one version and the same hash."""
    first = _preregister(demo_study, tmp_path / "one", *PLANNER)
    second = _preregister(demo_study, tmp_path / "two", *PLANNER)
    assert first == second
    assert (tmp_path / "one" / "plan.json").read_bytes() == (tmp_path / "two" / "plan.json").read_bytes()
    assert PlanVersion.objects.filter(study=demo_study).count() == 1


def test_the_definition_hash_follows_what_participants_see(demo_study):
    """A changed text of a setting changes the definition hash; an annotator-only field does not."""
    before = plan_sha256(study_definition(demo_study))
    setting = Setting.objects.get(study=demo_study, key="doctor")
    setting.target_description = "changed for annotators only"
    setting.save()
    assert plan_sha256(study_definition(study_get_with_settings(slug=demo_study.slug))) == before
    setting.group1_texts = [*setting.group1_texts[:-1], "A different text."]
    setting.save()
    assert plan_sha256(study_definition(study_get_with_settings(slug=demo_study.slug))) != before


def test_a_live_study_plan_needs_a_reason_and_every_version_is_kept(demo_study, tmp_path, capsys):
    """Once live, a changed plan is refused without --reason; with one it is version 2 with its own hash."""
    first = _preregister(demo_study, tmp_path / "v1", "--planned-n", "48")
    Study.objects.filter(pk=demo_study.pk).update(status=Study.Status.LIVE)
    with pytest.raises(CommandError, match="cannot be edited once the study is live.*--reason"):
        call_command("preregister", demo_study.slug, "--out", str(tmp_path / "v2"), "--planned-n", "100")
    assert PlanVersion.objects.filter(study=demo_study).count() == 1
    assert not (tmp_path / "v2").exists()

    second = _preregister(demo_study, tmp_path / "v2", "--planned-n", "100",
                          "--reason", "The lab doubled the budget.")
    assert second != first
    versions = list(PlanVersion.objects.filter(study=demo_study).order_by("version"))
    assert [v.plan_sha256 for v in versions] == [first, second]
    assert versions[1].plan["amendment"] == {"reason": "The lab doubled the budget.", "supersedes": first,
                                             "version": 2}
    assert (versions[0].plan["sample_size"]["planned_n"], versions[1].planned_n) == (48, 100)
    assert versions[1].study_status == "live"

    call_command("preregister", demo_study.slug, "--list")
    listing = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in listing] == ["v1", "v2"]
    assert first in listing[0] and second in listing[1] and "The lab doubled the budget." in listing[1]


@pytest.mark.parametrize("options, message", [
    ([], "Give the planned N"),
    (["--p-control", "0.6", "--p-treatment", "0.3"], "must be larger than p_control"),
    (["--planned-n", "0"], "at least 1"),
    (["--planned-n", "10", "--alpha", "1.5"], "strictly between 0 and 1"),
])
def test_bad_options_are_refused_and_store_nothing(demo_study, tmp_path, options, message):
    """Without a planned N, or with values out of range, preregister says why and stores nothing."""
    with pytest.raises(CommandError, match=message):
        call_command("preregister", demo_study.slug, "--out", str(tmp_path), *options)
    assert not PlanVersion.objects.exists() and not (tmp_path / "plan.json").exists()


def test_unknown_study_and_missing_out_are_refused(demo_study):
    """An unknown slug and a missing --out give one-line messages."""
    with pytest.raises(CommandError, match="No study with slug 'nope'"):
        call_command("preregister", "nope", "--list")
    with pytest.raises(CommandError, match="Give --out DIR"):
        call_command("preregister", demo_study.slug, "--planned-n", "5")


def test_the_planned_exclusion_rules_are_the_exports_reasons():
    """The plan names every reason the export can give: the three automatic ones and the codebook's."""
    expected = {"failed_instruction_check", "failed_check_page", "incomplete"} | (set(Exclusion.values) - {"none"})
    assert [r for r, _ in EXCLUSION_RULES] and {r for r, _ in EXCLUSION_RULES} == expected


def test_analyze_of_a_preregistered_pilot_cites_the_plan_and_its_deviations(demo_study, tmp_path, settings):
    """Preregister, pilot of 8, two annotators, analyze --include-pilot: the report cites the hash and N."""
    sha = _preregister(demo_study, tmp_path / "prereg", *PLANNER)
    planned = json.loads((tmp_path / "prereg" / "plan.json").read_text())["sample_size"]["planned_n"]
    call_command("pilot", demo_study.slug, "--participants", "8", "--seed", "11")
    call_command("pilot_annotation", demo_study.slug, "--open", stdout=io.StringIO())
    annotators = [make_user(f"a{i}", "annotators") for i in range(2)]
    _annotate_all(
        demo_study, annotators,
        lambda r: bool(r.participant.instruction_check_passed) if r.position == 0 else r.condition == "pattern",
    )
    out = tmp_path / "analysis"
    call_command("analyze", demo_study.slug, "--out", str(out), "--include-pilot")

    results = json.loads((out / "results.json").read_text())
    dev = results["preregistration"]["deviations"]
    assert results["preregistration"]["plan_sha256"] == sha
    # Seed 11: none of the 8 drops out and one fails the instruction check.
    n = results["participants"]["included"]
    assert n == 7 and dev["sample_size"] == {"analysed": 7, "planned": planned, "difference": 7 - planned}
    assert {e["reason"]: e["participants"] for e in dev["exclusions"]}["failed_instruction_check"] == 1
    assert all(e["planned"] for e in dev["exclusions"])
    assert dev["tests_differ"] == [] and dev["exploratory"] == []
    for name in ("report.md", "report.html"):
        text = (out / name).read_text()
        assert sha in text and "Deviations from the preregistered plan" in text
        assert f"N analysed 7 vs planned {planned} ({planned - 7} fewer than planned)." in text

    # python -m analysis on the same export and plan file reaches the same comparison.
    assert analysis_main([str(out / "data"), "--out", str(tmp_path / "cli"),
                          "--plan", str(tmp_path / "prereg" / "plan.json")]) == 0
    cli = json.loads((tmp_path / "cli" / "results.json").read_text())
    assert cli["preregistration"] == results["preregistration"]


def test_analyze_no_plan_leaves_the_plan_out(demo_study, tmp_path, settings):
    """analyze --no-plan analyses as before, without the deviation section."""
    _preregister(demo_study, tmp_path / "prereg", "--planned-n", "48")
    call_command("pilot", demo_study.slug, "--participants", "4", "--seed", "11")
    call_command("pilot_annotation", demo_study.slug, "--open", stdout=io.StringIO())
    _annotate_all(demo_study, [make_user("a0", "annotators"), make_user("a1", "annotators")],
                  lambda r: r.position == 0 or r.condition == "pattern")
    call_command("analyze", demo_study.slug, "--out", str(tmp_path / "out"), "--include-pilot", "--no-plan")
    assert "preregistration" not in json.loads((tmp_path / "out" / "results.json").read_text())


def test_analyze_refuses_a_plan_changed_in_the_database_after_it_was_frozen(demo_study, tmp_path, settings):
    """A stored plan edited after preregister (alpha 0.05 -> 0.10) makes analyze refuse, naming
    both hashes, and write no report; with --no-plan it analyses without citing it."""
    sha = _preregister(demo_study, tmp_path / "prereg", "--planned-n", "48")
    call_command("pilot", demo_study.slug, "--participants", "4", "--seed", "11")
    call_command("pilot_annotation", demo_study.slug, "--open", stdout=io.StringIO())
    _annotate_all(demo_study, [make_user("a0", "annotators"), make_user("a1", "annotators")],
                  lambda r: r.position == 0 or r.condition == "pattern")
    version = PlanVersion.objects.get(study=demo_study)
    assert '"alpha":0.05' in version.canonical_json
    # An edit behind the app's back (the app never changes a plan row): SQL, the shell, a restore.
    PlanVersion.objects.filter(pk=version.pk).update(
        canonical_json=version.canonical_json.replace('"alpha":0.05', '"alpha":0.1')
    )
    out = tmp_path / "out"
    with pytest.raises(CommandError) as info:
        call_command("analyze", demo_study.slug, "--out", str(out), "--include-pilot")
    message = str(info.value)
    assert "Plan v1 of spotlight-replication was changed after it was frozen" in message
    tampered = hashlib.sha256(
        PlanVersion.objects.get(pk=version.pk).canonical_json.encode()
    ).hexdigest()
    assert sha in message and tampered in message and "Nothing was analysed" in message
    assert not (out / "results.json").exists()
    call_command("analyze", demo_study.slug, "--out", str(out), "--include-pilot", "--no-plan")
    assert "preregistration" not in json.loads((out / "results.json").read_text())
