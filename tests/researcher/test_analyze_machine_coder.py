"""manage.py analyze with a preregistered plan and a machine coder: hash, deviations, agreement, decision."""
from __future__ import annotations

import html
import io
import json
import secrets

import pytest
from django.core.management import CommandError, call_command
from sklearn.metrics import cohen_kappa_score

from spotlight_study.annotation.models import FinalLabel, MachineLabel
from tests.openai_server import FakeCoder

from ..annotation.conftest import make_user
from ..prereg.test_preregister import PLANNER, _preregister
from .test_analyze import _annotate_all


@pytest.fixture
def coder(settings):
    """The fake coding server, with the app pointed at it (manual job runner)."""
    api_key = f"sk-test-{secrets.token_hex(16)}"
    server = FakeCoder(api_key).start()
    settings.OPENAI_BASE_URL = server.url
    settings.OPENAI_API_KEY = api_key
    settings.OPENAI_MAX_RETRIES = 0
    settings.STIMULI_JOB_RUNNER = "manual"
    yield server
    server.stop()


def _pilot_annotated_by_two_humans(study, tmp_path) -> tuple[str, int]:
    """Preregister, run a pilot of 8 and let two annotators label every answer; (hash, planned N)."""
    sha = _preregister(study, tmp_path / "prereg", *PLANNER)
    planned = json.loads((tmp_path / "prereg" / "plan.json").read_text())["sample_size"]["planned_n"]
    call_command("pilot", study.slug, "--participants", "8", "--seed", "11")
    call_command("pilot_annotation", study.slug, "--open", stdout=io.StringIO())
    _annotate_all(
        study, [make_user(f"a{i}", "annotators") for i in range(2)],
        lambda r: bool(r.participant.instruction_check_passed) if r.position == 0 else r.condition == "pattern",
    )
    return sha, planned


def test_analyze_reports_the_plan_the_deviations_and_the_machine_coder_decision(demo_study, tmp_path, coder):
    """Preregister, pilot, two humans and llm_annotate, analyze: hash, fewer N, kappas with CI, decision."""
    sha, planned = _pilot_annotated_by_two_humans(demo_study, tmp_path)
    call_command("llm_annotate", demo_study.slug, "--model", "gpt-test", "--sync", stdout=io.StringIO())
    assert MachineLabel.objects.filter(item__study=demo_study).exists()

    out, stdout = tmp_path / "analysis", io.StringIO()
    call_command("analyze", demo_study.slug, "--out", str(out), "--include-pilot", "--margin", "0.2",
                 stdout=stdout)
    results = json.loads((out / "results.json").read_text())
    assert results["preregistration"]["plan_sha256"] == sha
    n = results["participants"]["included"]
    assert n < planned
    assert results["preregistration"]["deviations"]["sample_size"] == {
        "analysed": n, "planned": planned, "difference": n - planned}

    mc = results["machine_coder"]
    assert mc["models"] == ["gpt-test"] and mc["margin"] == 0.2 and mc["confidence_level"] == 0.95
    identified = {(r["comparison"], r["rater_b"]): r for r in mc["comparisons"] if r["field"] == "identified"}
    assert sorted(c for c, _ in identified) == ["human_vs_human", "machine_vs_final", "machine_vs_human",
                                                "machine_vs_human"]
    # kappa(machine, final) is sklearn's kappa of the stored labels, over the items with both.
    finals = {f.item_id: f.identified for f in FinalLabel.objects.filter(item__study=demo_study)}
    machine = dict(MachineLabel.objects.filter(item__study=demo_study).values_list("item_id", "identified"))
    both = sorted(set(finals) & {i for i, v in machine.items() if v is not None})
    vs_final = identified[("machine_vs_final", "final")]
    assert vs_final["rater_a"] == "llm:gpt-test" and vs_final["n_items"] == len(both)
    assert vs_final["kappa"] == pytest.approx(cohen_kappa_score([machine[i] for i in both],
                                                                [finals[i] for i in both]))
    assert all(r["ci_low"] is None or r["ci_low"] <= r["kappa"] <= r["ci_high"] for r in mc["comparisons"])

    decision = next(d for d in mc["decisions"] if d["field"] == "identified")
    # The humans agree on every answer (kappa 1); the fake coder departs from them on the pilot's
    # answers, so the lower bound of kappa(machine, final) falls below 1 - 0.2.
    assert decision["human_kappa"] == pytest.approx(1.0) and decision["human_pairs"] == 1
    assert decision["non_inferior"] is False
    assert decision["machine_ci_low"] == vs_final["ci_low"] < decision["human_kappa"] - 0.2
    assert decision["statement"].startswith(
        "identified: the machine coder is not shown to be non-inferior to a second human coder")
    undecided = next(d for d in mc["decisions"] if d["field"] == "surface_difference")
    assert undecided["non_inferior"] is None and "cannot decide" in undecided["statement"]
    for name in ("report.md", "report.html"):
        text = (out / name).read_text()
        assert sha in text and "Deviations from the preregistered plan" in text
        assert f"N analysed {n} vs planned {planned} ({planned - n} fewer than planned)." in text
        assert "Machine coder" in text and "Model gpt-test" in text and "machine_vs_final" in text
        assert "minus the margin (0.2" in text
    page = (out / "report.html").read_text()
    assert all(html.escape(d["statement"]) in page for d in mc["decisions"])
    assert f"Machine coder llm:gpt-test: {decision['statement']}" in stdout.getvalue()


def test_analyze_without_machine_labels_says_so(demo_study, tmp_path, coder):
    """No llm_annotate: the report says plainly that there are no machine labels; results.json has none."""
    _pilot_annotated_by_two_humans(demo_study, tmp_path)
    stdout = io.StringIO()
    call_command("analyze", demo_study.slug, "--out", str(tmp_path / "out"), "--include-pilot", stdout=stdout)
    assert "machine_coder" not in json.loads((tmp_path / "out" / "results.json").read_text())
    for name in ("report.md", "report.html"):
        assert "No machine labels" in (tmp_path / "out" / name).read_text()
    assert "No machine labels" in stdout.getvalue()
    with pytest.raises(CommandError, match="margin must be between 0 and 1") as err:
        call_command("analyze", demo_study.slug, "--out", str(tmp_path / "bad"), "--include-pilot",
                     "--margin", "1.5")
    assert err.value.returncode == 2
