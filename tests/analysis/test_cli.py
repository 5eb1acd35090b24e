"""``python -m analysis DIR --out OUTDIR`` on a simulated export of the reference study."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from analysis.__main__ import main

from ..processes import run_python
from .conftest import simulate_export

REPO = Path(__file__).resolve().parents[2]
TABLES = {
    "identification", "identification_with_distractors", "identification_rates", "identification_by_position",
    "time_on_task", "outcomes", "likert", "likert_with_distractors", "likert_paired", "likert_paired_with_distractors",
    "likert_distribution", "background", "exclusions", "participants",
}
FIGURES = {"identification_rate", "likert", "background"}


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return run_python("-m", "analysis", *args)


def strict_json(path: Path) -> dict:
    """Load JSON refusing NaN/Infinity, which strict JSON does not allow."""
    def refuse(token):
        raise AssertionError(f"non-standard JSON constant {token}")
    return json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    """The CLI run once, in a subprocess, on the simulated 40-participant export."""
    root = tmp_path_factory.mktemp("cli")
    export = simulate_export(root / "export")
    proc = run_cli(str(export), "--out", str(root / "out"))
    return export, root / "out", proc


def test_cli_succeeds_and_writes_every_file(cli_run):
    """Exit 0, a summary on stdout, results.json, all tables, both formats of all figures, both reports."""
    _, out, proc = cli_run
    assert proc.returncode == 0, proc.stderr
    assert "Analysed 36 participants (4 excluded)" in proc.stdout
    assert {p.stem for p in (out / "tables").glob("*.csv")} == TABLES
    for name in FIGURES:
        png = (out / "figures" / f"{name}.png").read_bytes()
        assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 5_000
        root = ET.parse(out / "figures" / f"{name}.svg").getroot()
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
        assert len(list(root.iter())) > 50  # drawn content, not an empty canvas
    assert (out / "report.md").stat().st_size > 1_000
    assert (out / "report.html").stat().st_size > 10_000


def test_results_json_has_the_documented_shape(cli_run):
    """results.json is strict JSON with the issue's keys and types for every section."""
    export, out, _ = cli_run
    results = strict_json(out / "results.json")
    assert list(results)[:6] == ["identification", "likert", "time_on_task", "other_differences",
                                 "exclusions", "input_sha256"]
    assert set(results["identification"]) == {"doctor", "farming"}
    for r in results["identification"].values():
        for key in ("n_no_pattern", "n_pattern", "k_no_pattern", "k_pattern"):
            assert type(r[key]) is int
        for key in ("rate_no_pattern", "rate_pattern", "z", "p", "cohens_h", "fisher_p"):
            assert type(r[key]) is float
        assert r["alternative"] == "larger"
        for key in ("ci_no_pattern", "ci_pattern"):
            lo, hi = r[key]
            assert 0 <= lo <= hi <= 1
    assert set(results["likert"]) == {"ease", "effort", "confidence"}
    for item, r in results["likert"].items():
        assert set(r) == {"U", "p", "alternative", "rbc", "n_pattern", "n_no_pattern"}
        assert r["alternative"] == {"ease": "greater", "effort": "less", "confidence": "greater"}[item]
        assert type(r["U"]) is float and type(r["n_pattern"]) is int and -1 <= r["rbc"] <= 1
    for by_condition in results["time_on_task"].values():
        assert set(by_condition) == {"pattern", "no_pattern"}
        for t in by_condition.values():
            assert set(t) == {"mean_s", "median_s", "sd_s", "n"}
            assert 30 < t["mean_s"] < 300  # seconds, not milliseconds
    for by_condition in results["other_differences"].values():
        assert all(type(v) is float and 0 <= v <= 1 for v in by_condition.values())
    assert all(type(v) is int for v in results["exclusions"].values())
    assert sum(results["exclusions"].values()) == 4
    per_file = {n: hashlib.sha256((export / n).read_bytes()).hexdigest() for n in ("responses.csv", "survey.csv")}
    manifest = "".join(f"{per_file[n]}  {n}\n" for n in ("responses.csv", "survey.csv"))
    assert results["input_sha256"] == hashlib.sha256(manifest.encode()).hexdigest()
    assert re.fullmatch(r"[0-9a-f]{64}", results["input_sha256"])


def test_cli_reports_input_errors_without_traceback(tmp_path, capsys):
    """Invalid input exits with status 2, a one-line message naming the problem and no output files."""
    export = simulate_export(tmp_path / "export", n_participants=8)
    text = (export / "responses.csv").read_text(encoding="utf-8")
    (export / "responses.csv").write_text(text.replace("exclusion_reason", "reason", 1), encoding="utf-8")
    assert main([str(export), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err == "error: responses.csv is missing required column(s): exclusion_reason\n"
    assert not (tmp_path / "out").exists()


def test_cli_options_and_distractor_condition(tmp_path, capsys):
    """CLI options reach the tests, a distractor group is analysed and drawn, and bad ITEM=ALT is a usage error."""
    export = simulate_export(tmp_path / "export", n_participants=20, distractors=True)
    assert main([str(export), "--out", str(tmp_path / "out"), "--alternative", "two-sided",
                 "--likert-alternative", "effort=greater"]) == 0
    results = strict_json(tmp_path / "out" / "results.json")
    assert set(results["identification_with_distractors"]) == {"doctor", "farming"}
    assert results["identification_with_distractors"]["doctor"]["alternative"] == "two-sided"
    assert "### Pattern with distractors" in (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "pattern + distractors" in (tmp_path / "out" / "figures" / "identification_rate.svg").read_text()
    assert results["identification"]["doctor"]["alternative"] == "two-sided"
    assert results["likert"]["effort"]["alternative"] == "greater"
    assert results["likert"]["ease"]["alternative"] == "greater"
    with pytest.raises(SystemExit) as exit_info:
        main([str(export), "--out", str(tmp_path / "o2"), "--likert-alternative", "effort=larger"])
    assert exit_info.value.code == 2
    assert "expected ITEM=ALTERNATIVE" in capsys.readouterr().err


def test_rerun_gives_identical_files(cli_run, tmp_path):
    """The same input gives byte-identical results.json, tables, SVGs and reports (no timestamps)."""
    export, out, _ = cli_run
    assert main([str(export), "--out", str(tmp_path / "again")]) == 0
    for rel in ["results.json", "report.md", "report.html", "tables/likert.csv", "figures/likert.svg",
                "figures/identification_rate.svg"]:
        assert (tmp_path / "again" / rel).read_bytes() == (out / rel).read_bytes(), rel


def test_package_imports_without_django_or_pyplot():
    """Importing and running the package loads neither Django nor matplotlib.pyplot."""
    code = ("import sys, analysis, analysis.figures, analysis.report, analysis.__main__; "
            "bad = [m for m in sys.modules if m.split('.')[0] == 'django' or m == 'matplotlib.pyplot']; "
            "print(bad); sys.exit(1 if bad else 0)")
    proc = run_python("-c", code, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_tables_are_written_with_the_exports_formula_guard(tmp_path):
    """A text cell of tables/*.csv that a spreadsheet would run (an exclusion reason
    '=HYPERLINK(...)') gets the exports' leading quote; numbers, negative ones too, do not."""
    import csv as csv_module

    from analysis.csv_guard import neutralize

    export = simulate_export(tmp_path / "export")
    path = export / "responses.csv"
    with path.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv_module.DictReader(handle))
    reason = '=HYPERLINK("http://x.example","see")'
    excluded = next(r for r in rows if r["excluded"] == "1")
    for row in rows:
        if row["participant"] == excluded["participant"]:
            row["exclusion_reason"] = neutralize(reason)  # as the platform's export writes it
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv_module.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    assert main([str(export), "--out", str(tmp_path / "out")]) == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert reason in results["exclusions"]  # the analysis read the original text back
    with (tmp_path / "out" / "tables" / "exclusions.csv").open(encoding="utf-8", newline="") as f:
        table = list(csv_module.DictReader(f))
    assert {"reason": "'" + reason, "participants": "1"} in table
    for name in (tmp_path / "out" / "tables").glob("*.csv"):
        with name.open(encoding="utf-8", newline="") as f:
            for record in csv_module.reader(f):
                for cell in record:
                    assert not cell.startswith(("=", "+", "@", "\t", "\r")), (name.name, cell)
