"""manage.py analyze: the statistics on a study's current, annotated data, and the report link."""
import json

import pytest
from django.core.management import CommandError, call_command, execute_from_command_line
from django.test import Client
from statsmodels.stats.proportion import proportions_ztest

from analysis.__main__ import main as analysis_main
from spotlight_study.annotation.pilot_round import pilot_round_is_open
from spotlight_study.annotation.services.labels import LabelInput, label_save
from spotlight_study.annotation.services.queue import assignment_next
from spotlight_study.participation.models import TaskResponse

from ..annotation.conftest import make_user
from ..conftest import Walker


def _annotate_all(study, annotators, identified) -> None:
    """Each annotator labels every item the same way: ``identified(response)`` decides; the
    pilot answers too when the study's pilot annotation round is open."""
    rounds = (False, True) if pilot_round_is_open(study) else (False,)
    for user, pilot in ((u, p) for u in annotators for p in rounds):
        while (item := assignment_next(study=study, annotator=user, pilot=pilot)) is not None:
            r = item.response
            label_save(
                study=study,
                annotator=user,
                public_id=item.public_id,
                label=LabelInput(
                    identified=identified(r),
                    surface_difference=False,
                    no_difference=False,
                    tags=[],
                ),
            )


def test_analyze_reports_the_z_test_of_the_annotated_data(demo_study, tmp_path, staff_client):
    """After 8 participants and agreeing annotators, analyze reproduces statsmodels' z-test."""
    for _ in range(8):
        Walker(Client(), demo_study.slug).complete()
    annotators = [make_user(f"a{i}", "annotators") for i in range(2)]
    main = TaskResponse.objects.filter(position__gt=0).order_by("pk")
    # Pattern answers identified; every second no-pattern answer identified.
    # Chosen per setting: alternating over all settings together could leave one setting with
    # every no-pattern answer identified (the pks follow the random tie-break), and then the
    # z statistic is undefined (pooled proportion 1).
    chosen = set()
    for key in ("doctor", "farming"):
        ids = [r.pk for r in main if r.condition == "no_pattern" and r.setting.key == key]
        chosen.update(ids[::2])

    def identified(r):
        return r.position == 0 or r.condition == "pattern" or r.pk in chosen

    _annotate_all(demo_study, annotators, identified)
    call_command("analyze", demo_study.slug, "--out", str(tmp_path))
    results = json.loads((tmp_path / "results.json").read_text())
    assert (tmp_path / "data" / "responses.csv").exists() and (tmp_path / "report.html").exists()
    for setting in ("doctor", "farming"):
        r = results["identification"][setting]
        rows = [x for x in main if x.setting.key == setting]
        k_no = sum(1 for x in rows if x.condition == "no_pattern" and x.pk in chosen)
        n_no = sum(1 for x in rows if x.condition == "no_pattern")
        n_pat = sum(1 for x in rows if x.condition == "pattern")
        assert (r["k_pattern"], r["n_pattern"], r["k_no_pattern"], r["n_no_pattern"]) == (n_pat, n_pat, k_no, n_no)
        z, p = proportions_ztest([n_pat, k_no], [n_pat, n_no], alternative="larger")
        assert r["z"] == pytest.approx(z) and r["p"] == pytest.approx(p)
    assert results["exclusions"] == {}
    report = staff_client.get(f"/researcher/{demo_study.slug}/report/")
    assert report.status_code == 200
    assert results["input_sha256"] in b"".join(report.streaming_content).decode()


def test_analyze_before_annotation_fails_clearly(demo_study, tmp_path, staff_client):
    """Without final labels, analyze says the data cannot be analysed yet (status 2) and publishes nothing."""
    Walker(Client(), demo_study.slug).complete()
    with pytest.raises(CommandError, match="cannot be analysed yet.*annotated first") as err:
        call_command("analyze", demo_study.slug, "--out", str(tmp_path))
    assert err.value.returncode == 2
    response = staff_client.get(f"/researcher/{demo_study.slug}/report/")
    assert response.status_code == 404 and "No analysis report yet" in response.content.decode()


def test_analyze_without_answers_says_so_with_status_2(demo_study, tmp_path, staff_client):
    """A study nobody has answered yet gives a clear message and status 2, not a traceback."""
    with pytest.raises(CommandError, match="no participant has answered a main task yet") as err:
        call_command("analyze", demo_study.slug, "--out", str(tmp_path))
    assert err.value.returncode == 2
    response = staff_client.get(f"/researcher/{demo_study.slug}/report/")
    assert response.status_code == 404


@pytest.mark.parametrize("answered", [False, True], ids=["no answers", "answers without labels"])
def test_analyze_on_the_command_line_exits_2_without_traceback(demo_study, tmp_path, capsys, answered):
    """Run as ``manage.py analyze``, unanalysable data print one error line and exit with status 2."""
    if answered:
        Walker(Client(), demo_study.slug).complete()
    with pytest.raises(SystemExit) as exit_info:
        execute_from_command_line(["manage.py", "analyze", demo_study.slug, "--out", str(tmp_path)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("CommandError: The data cannot be analysed yet: responses.csv")
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_python_m_analysis_on_an_empty_export_exits_2(demo_study, tmp_path, capsys):
    """The platform's export of a study without answers, read by ``python -m analysis``: status 2."""
    call_command("export_results", demo_study.slug, "--out", str(tmp_path / "export"))
    assert analysis_main([str(tmp_path / "export"), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err == ("error: responses.csv has no rows: no participant has answered a main task yet, "
                   "so there is nothing to analyse\n")
    assert not (tmp_path / "out").exists()


def _console(slug: str, out_dir) -> str:
    from io import StringIO

    out = StringIO()
    call_command("analyze", slug, "--out", str(out_dir), stdout=out)
    return out.getvalue()


def test_analyze_console_rounds_z_and_p_as_the_report(demo_study, tmp_path):
    """The console's z, p and Holm p are the report's rounded figures, never the raw floats."""
    from analysis.document import fmt_num, fmt_p

    for _ in range(8):
        Walker(Client(), demo_study.slug).complete()
    main = TaskResponse.objects.filter(position__gt=0).order_by("pk")
    chosen = set()
    for key in ("doctor", "farming"):  # half of each setting's no-pattern answers identified
        chosen.update([r.pk for r in main if r.condition == "no_pattern" and r.setting.key == key][::2])
    annotators = [make_user(f"a{i}", "annotators") for i in range(2)]
    _annotate_all(demo_study, annotators,
                  lambda r: r.position == 0 or r.condition == "pattern" or r.pk in chosen)
    out = _console(demo_study.slug, tmp_path)
    results = json.loads((tmp_path / "results.json").read_text())
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    for setting in ("doctor", "farming"):
        r = results["identification"][setting]
        assert r["z"] is not None, "half identified without the pattern, all with it: z is defined"
        z, p = fmt_num(r["z"]), fmt_p(r["p"])
        p_holm = fmt_p(results["holm"]["identification"][setting]["p_holm"])
        assert f"  {setting}: identified " in out
        assert f"z={z}, p={p}, p (Holm)={p_holm}" in out
        assert f"z = {z}, p = {p}" in report
        assert repr(r["z"]) not in out and repr(r["p"]) not in out


def test_analyze_console_says_why_z_is_undefined(demo_study, tmp_path):
    """With every answer identified (zero variance) the console gives the report's reason."""
    from analysis.report import identification_undefined_reason

    for _ in range(4):
        Walker(Client(), demo_study.slug).complete()
    annotators = [make_user(f"a{i}", "annotators") for i in range(2)]
    _annotate_all(demo_study, annotators, lambda r: True)
    out = _console(demo_study.slug, tmp_path)
    results = json.loads((tmp_path / "results.json").read_text())
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    for setting, r in results["identification"].items():
        reason = identification_undefined_reason(r, "pattern")
        assert reason and reason.startswith("all participants in both groups had the same outcome")
        assert f"  {setting}: identified {r['k_no_pattern']}/{r['n_no_pattern']} without" in out
        assert f"z and p undefined: {reason}" in out
        assert f"undefined, because {reason}." in report
    assert "z=None" not in out and "p=None" not in out and "nan" not in out


def test_analyze_with_a_condition_nobody_is_in_says_which(demo_study, tmp_path):
    """One participant leaves each setting with one empty condition: status 2 names the gap."""
    Walker(Client(), demo_study.slug).complete()
    _annotate_all(demo_study, [make_user(f"a{i}", "annotators") for i in range(2)], lambda r: True)
    with pytest.raises(CommandError, match=r"setting '\w+' has no included participants in condition") as err:
        call_command("analyze", demo_study.slug, "--out", str(tmp_path))
    assert err.value.returncode == 2


def test_analyze_console_without_a_comparison_gives_the_report_note(tmp_path):
    """A design with no no-pattern group: the console prints the report's "No test" sentence."""
    from io import StringIO

    from analysis.inputs import prepare_data
    from analysis.pipeline import compute_results
    from analysis.report import NO_IDENTIFICATION_TEST
    from spotlight_study.researcher.management.commands.analyze import Command

    from ..analysis.test_pipeline import _three_setting_frames

    results = compute_results(prepare_data(*_three_setting_frames(("pattern",), n_participants=6)))
    out = StringIO()
    Command(stdout=out)._identification_lines(results)
    assert out.getvalue() == f"  Identification: {NO_IDENTIFICATION_TEST}\n"
