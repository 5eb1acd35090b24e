"""export_results: the documented columns, pseudonyms, and pre-filled exclusions."""
import csv

import pytest
from django.core.management import CommandError, call_command

from spotlight_study.results.exports import (
    PARTICIPANTS_COLUMNS,
    RESPONSES_COLUMNS,
    SURVEY_COLUMNS,
)
from spotlight_study.participation.models import Participant

from ..conftest import Walker


def _read(path):
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        return reader.fieldnames, list(reader)


def test_export_has_documented_columns_and_no_raw_pid(client, demo_study, tmp_path):
    """The three files have the documented columns, one row per participant x main setting."""
    done = [Walker(client, demo_study.slug) for _ in range(2)]
    for w in done:
        client.cookies.clear()
        w.complete()
    client.cookies.clear()
    partial = Walker(client, demo_study.slug)
    partial.enter()
    partial.consent()
    partial.instructions()
    partial.answer("It is about fishing.")  # fails the check; continues
    partial.answer("Paste", events='{"paste_count": 1, "paste_chars": 5}')

    call_command("export_results", demo_study.slug, "--out", str(tmp_path))
    cols, responses = _read(tmp_path / "responses.csv")
    assert cols == RESPONSES_COLUMNS
    assert len(responses) == 2 * 2 + 1
    scols, survey = _read(tmp_path / "survey.csv")
    assert scols == SURVEY_COLUMNS and len(survey) == 2 * 10
    assert {r["condition"] for r in survey} == {"pattern", "no_pattern", "background"}
    assert {r["item"] for r in survey} == {
        "ease", "effort", "confidence", "llm_use", "prompt_engineering", "programming", "data_analysis",
    }
    pcols, people = _read(tmp_path / "participants.csv")
    assert pcols == PARTICIPANTS_COLUMNS and len(people) == 3

    everything = "".join(p.read_text() for p in tmp_path.glob("*.csv"))
    for w in [*done, partial]:
        assert w.pid not in everything
    pseudonyms = {r["participant"] for r in people}
    assert len(pseudonyms) == 3 and all(p.startswith("p_") for p in pseudonyms)

    complete_rows = [r for r in responses if r["excluded"] == "0"]
    assert len(complete_rows) == 4
    for r in complete_rows:
        assert r["condition"] in {"pattern", "no_pattern"} and r["position"] in {"1", "2"}
        assert int(r["time_on_task_ms"]) >= 0
        assert r["identified"] == "" and r["exclusion_reason"] == ""
    (partial_row,) = [r for r in responses if r["excluded"] == "1"]
    assert partial_row["exclusion_reason"] == "failed_instruction_check"
    assert "pasted" in partial_row["flags"] and "failed_instruction_check" in partial_row["flags"]
    statuses = sorted(r["status"] for r in people)
    assert statuses == ["completed", "completed", "in_progress"]


def test_pseudonyms_are_stable_and_differ_between_studies(client, demo_study, demo_data):
    """The same PID gets the same pseudonym in one study and a different one in another."""
    from spotlight_study.participation.selectors import participant_pseudonym
    from spotlight_study.studies.services import study_import

    demo_data["slug"] = "second-study"
    other = study_import(data=demo_data)
    pid = "0123456789abcdef01234567"
    a = participant_pseudonym(study=demo_study, prolific_pid=pid)
    assert a == participant_pseudonym(study=demo_study, prolific_pid=pid)
    assert a != participant_pseudonym(study=other, prolific_pid=pid)


@pytest.mark.django_db
def test_export_unknown_study_fails_clearly(tmp_path):
    """export_results with an unknown slug fails with a message."""
    with pytest.raises(CommandError, match="No study with slug 'nope'"):
        call_command("export_results", "nope", "--out", str(tmp_path))
