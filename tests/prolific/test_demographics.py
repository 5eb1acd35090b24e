"""Prolific's demographic export: fetched over HTTP from the fake, stored by pseudonym, exported.

The participants go through the real flow; the fake Prolific serves their demographic export as
CSV with Prolific's headers. Figures in the analysis are tested in tests/analysis/test_sample.py.
"""
from __future__ import annotations

import csv
import io
import logging
import zipfile

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from analysis import run_analysis
from spotlight_study.participation.selectors import participant_pseudonym
from spotlight_study.privacy.services import participant_erase
from spotlight_study.prolific.errors import ProlificAPIError, ProlificValidationError
from spotlight_study.prolific.models import Demographics
from spotlight_study.prolific.payloads import parse_demographic_export
from spotlight_study.prolific.services.demographics import demographics_fetch
from spotlight_study.researcher.downloads import results_zip
from spotlight_study.results.exports import results_export

from ..annotation.conftest import make_user
from ..researcher.test_analyze import _annotate_all
from .conftest import arrive

PEOPLE = [
    {"Age": "34", "Sex": "Female", "Country_of_residence": "United Kingdom", "Language": "English"},
    {"Age": "61", "Sex": "Male", "Country_of_residence": "United States", "Language": "Spanish"},
    {"Age": "DATA_EXPIRED", "Sex": "CONSENT_REVOKED", "Country_of_residence": "United Kingdom"},
    {"Age": "45", "Sex": "Female", "Country_of_residence": "United Kingdom", "Language": "English"},
]


@pytest.fixture
def with_demographics(linked, fake_prolific):
    """Four participants who completed, each with a submission and a row of the export, plus a
    row of someone who never arrived here. Returns the participants."""
    people = []
    for values in PEOPLE:
        _, p = arrive(linked.study.slug, complete=True)
        sub = fake_prolific.add_submission(linked.prolific_id, participant_id=p.prolific_pid,
                                           submission_id=p.prolific_session_id, status="AWAITING REVIEW")
        fake_prolific.add_demographics(linked.prolific_id, sub, **values)
        people.append(p)
    stranger = fake_prolific.add_submission(linked.prolific_id, status="RETURNED")
    fake_prolific.add_demographics(linked.prolific_id, stranger, Age="40", Sex="Male")
    return people


def _pseudonym(linked, p) -> str:
    return participant_pseudonym(study=linked.study, prolific_pid=p.prolific_pid)


def test_client_sends_the_documented_request_and_parses_the_csv(prolific_client, fake_prolific):
    """POST studies/{id}/demographic-export/ with filters; Prolific's missing markers become empty."""
    study_id = fake_prolific.add_study()
    sub = fake_prolific.add_submission(study_id)
    fake_prolific.add_demographics(study_id, sub, Age="29", Sex="Female", Language="Welsh")
    (record,) = prolific_client.study_demographic_export(study_id)
    (call,) = [c for c in fake_prolific.calls if c.path.endswith("demographic-export/")]
    assert call.method == "POST" and call.body == {"filters": []}
    assert (record.submission_id, record.participant_id) == (sub["id"], sub["participant_id"])
    assert (record.age, record.sex, record.first_language) == (29, "Female", "Welsh")
    assert record.country_of_residence == "" and record.nationality == ""  # DATA_EXPIRED
    assert "time_taken" not in record.extra and "total_approvals" not in record.extra


def test_client_retries_a_5xx_and_reports_a_404(prolific_client, fake_prolific, sleeps):
    """A 503 is retried like the other idempotent calls; an unknown study is a ProlificAPIError."""
    study_id = fake_prolific.add_study()
    fake_prolific.fail("POST", f"studies/{study_id}/demographic-export/", 503, times=2)
    assert prolific_client.study_demographic_export(study_id) == []
    assert len(sleeps.delays) == 2
    with pytest.raises(ProlificAPIError) as err:
        prolific_client.study_demographic_export("f" * 24)
    assert err.value.status_code == 404


def test_export_limit_is_reported(prolific_client, fake_prolific):
    """A third different filter combination gets Prolific's 400, not retried."""
    study_id = fake_prolific.add_study()
    prolific_client.study_demographic_export(study_id)
    prolific_client.study_demographic_export(study_id, filters=[{"filter_id": "age"}])
    with pytest.raises(ProlificAPIError) as err:
        prolific_client.study_demographic_export(study_id, filters=[{"filter_id": "sex"}])
    assert err.value.status_code == 400
    assert fake_prolific.count("POST", r"studies/.*/demographic-export/") == 3


def test_an_answer_that_is_not_the_export_is_refused():
    """CSV without a submission id column is a clear validation error."""
    with pytest.raises(ProlificValidationError, match="Submission id"):
        parse_demographic_export("a,b\n1,2\n")


def test_fetch_stores_by_pseudonym_and_never_the_prolific_id(linked, with_demographics, caplog):
    """Only participants of the study are kept, keyed by pseudonym; no PID is stored or logged."""
    with caplog.at_level(logging.DEBUG):
        report = demographics_fetch(prolific_study_id=linked.pk)
    assert (report.rows, report.stored, report.unmatched) == (5, 4, 1)
    assert {"age", "sex", "country_of_residence", "first_language"} <= set(report.columns)
    stored = {d.pseudonym: d for d in Demographics.objects.all()}
    first, second, third, _ = with_demographics
    assert stored[_pseudonym(linked, first)].age == 34
    assert stored[_pseudonym(linked, second)].first_language == "Spanish"
    assert stored[_pseudonym(linked, third)].age is None and stored[_pseudonym(linked, third)].sex == ""
    dumped = repr(list(Demographics.objects.values())) + " ".join(r.getMessage() for r in caplog.records)
    for p in with_demographics:
        assert p.prolific_pid not in dumped
    # A second fetch replaces the rows rather than adding to them.
    demographics_fetch(prolific_study_id=linked.pk)
    assert Demographics.objects.count() == 4


def test_failed_fetch_changes_nothing(linked, with_demographics, fake_prolific):
    """A fetch that fails after retries leaves the stored demographics as they were."""
    demographics_fetch(prolific_study_id=linked.pk)
    fake_prolific.fail("POST", f"studies/{linked.prolific_id}/demographic-export/", 500, times=10)
    with pytest.raises(ProlificAPIError):
        demographics_fetch(prolific_study_id=linked.pk)
    assert Demographics.objects.count() == 4


def test_export_and_zip_carry_documented_demographic_columns(linked, with_demographics, tmp_path):
    """participants.csv and the zip get age, sex, country, first language; README documents them."""
    demographics_fetch(prolific_study_id=linked.pk)
    results_export(study=linked.study, out_dir=tmp_path)
    text = (tmp_path / "participants.csv").read_text(encoding="utf-8")
    rows = {r["participant"]: r for r in csv.DictReader(io.StringIO(text))}
    first = rows[_pseudonym(linked, with_demographics[0])]
    assert (first["age"], first["sex"], first["country_of_residence"], first["first_language"]) == (
        "34", "Female", "United Kingdom", "English")
    archive = zipfile.ZipFile(io.BytesIO(results_zip(study=linked.study)))
    readme = archive.read("README.txt").decode()
    for column in ("age", "sex", "country_of_residence", "first_language", "ethnicity"):
        assert f"\n{column}: " in readme
    assert "(no description)" not in readme
    everything = text + readme + "".join(archive.read(n).decode() for n in archive.namelist())
    for p in with_demographics:
        assert p.prolific_pid not in everything and p.prolific_session_id not in everything


def test_analysis_of_the_export_reports_the_demographics(linked, with_demographics, tmp_path, settings):
    """python -m analysis's run on the export alone gives the Participants section from Prolific data."""
    annotators = [make_user(f"a{i}", "annotators") for i in range(2)]
    _annotate_all(linked.study, annotators, lambda r: r.position == 0 or r.condition == "pattern")
    demographics_fetch(prolific_study_id=linked.pk)
    results_export(study=linked.study, out_dir=tmp_path / "export")
    results = run_analysis(tmp_path / "export", tmp_path / "out")
    sample = results["sample"]
    assert sample["demographics_fetched"] is True and sample["counts"]["in_export"] == 4
    assert sample["sex"] == {"Female": 2, "Male": 1, "not specified": 1}
    assert sample["age"]["n"] == 3 and sample["age"]["median"] == 45
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "## Participants" in report and "Demographics were not fetched" not in report
    for p in with_demographics:
        assert p.prolific_pid not in report


def test_command_and_button(linked, with_demographics, staff_client, capsys):
    """The command prints what it stored; the page's button does the same and shows the count."""
    call_command("prolific_demographics", linked.study.slug)
    assert "Demographics of 4 participant(s) stored from 5 row(s)" in capsys.readouterr().out
    Demographics.objects.all().delete()
    response = staff_client.post(f"/prolific/{linked.study.slug}/demographics/", follow=True)
    html = response.content.decode()
    assert "Demographics of 4 participant(s) stored" in html and Demographics.objects.count() == 4
    with pytest.raises(CommandError, match="No study with slug"):
        call_command("prolific_demographics", "no-such-study-here")


def test_erasure_removes_the_demographics(linked, with_demographics):
    """Erasing a participant deletes their demographics row, and a new fetch does not bring it back."""
    demographics_fetch(prolific_study_id=linked.pk)
    gone = with_demographics[0]
    result = participant_erase(study=linked.study, prolific_pid=gone.prolific_pid)
    assert result.action.rows["demographics"] == 1
    assert not Demographics.objects.filter(pseudonym=_pseudonym(linked, gone)).exists()
    demographics_fetch(prolific_study_id=linked.pk)
    assert not Demographics.objects.filter(pseudonym=_pseudonym(linked, gone)).exists()
    assert Demographics.objects.count() == 3
