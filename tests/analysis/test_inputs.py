"""Reading, validating and fingerprinting the export files."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest

from analysis import AnalysisInputError, input_sha256, load_export, prepare_data

from .conftest import RESPONSE_HEADER, SURVEY_HEADER, write_csv


def resp(participant, setting, condition, *, position=1, identified=1, other=0, none=0, time_ms=60000,
         excluded=0, reason="", **extra):
    """One responses.csv row as a dict."""
    return {"participant": participant, "setting": setting, "condition": condition, "position": position,
            "identified": identified, "other_difference": other, "no_difference": none,
            "time_on_task_ms": time_ms, "excluded": excluded, "exclusion_reason": reason, **extra}


def base_rows():
    """Two participants in two settings: each setting has one pattern and one no-pattern row."""
    return [
        resp("A", "doctor", "pattern", position=1),
        resp("A", "farming", "no_pattern", position=2, identified=0),
        resp("B", "doctor", "no_pattern", position=2, identified=0),
        resp("B", "farming", "pattern", position=1),
    ]


def survey_rows(participants=("A", "B")):
    rows = []
    for p in participants:
        for condition, value in (("pattern", 4), ("no_pattern", 2)):
            rows.append({"participant": p, "condition": condition, "item": "ease", "response": value})
        rows.append({"participant": p, "condition": "background", "item": "llm_use", "response": 3})
    return rows


def test_valid_minimal_export_loads_with_types(small_export):
    """A minimal valid export loads; outcomes and positions become ints and times floats."""
    data = load_export(small_export(base_rows(), survey_rows()))
    assert len(data.responses) == 4 and data.n_participants == 2 and data.n_included == 2
    assert data.responses["identified"].tolist() == [1, 0, 0, 1]
    assert data.responses["time_on_task_ms"].dtype == float
    assert data.responses["position"].dtype.kind == "i"
    assert data.survey["response"].tolist() == [4, 2, 3, 4, 2, 3]
    assert data.exclusions == {}


def test_missing_columns_are_named(small_export):
    """Every missing required column is named in the message."""
    header = [c for c in RESPONSE_HEADER if c not in ("condition", "no_difference")]
    directory = small_export(base_rows(), survey_rows(), response_header=header)
    with pytest.raises(AnalysisInputError,
                       match=r"responses\.csv is missing required column\(s\): condition, no_difference"):
        load_export(directory)


def test_missing_survey_column_is_named(small_export):
    """A survey.csv without 'response' is refused, naming the column."""
    directory = small_export(base_rows(), survey_rows(), survey_header=["participant", "condition", "item"])
    with pytest.raises(AnalysisInputError, match=r"survey\.csv is missing required column\(s\): response"):
        load_export(directory)


def test_unknown_condition_names_value_line_and_participant(small_export):
    """An unknown condition is quoted with its CSV line, participant and setting."""
    rows = base_rows()
    rows[1]["condition"] = "patern"
    with pytest.raises(AnalysisInputError) as err:
        load_export(small_export(rows, survey_rows()))
    message = str(err.value)
    assert "unknown condition value(s)" in message
    assert "line 3 (participant 'A', setting 'farming'): 'patern'" in message
    assert "allowed: pattern, no_pattern, pattern_with_distractors" in message


def test_line_numbers_count_multiline_answers(small_export):
    """Line numbers are physical CSV lines, so a multi-line answer above shifts them correctly."""
    rows = base_rows()
    rows[0]["answer"] = "first line\nsecond line\nthird line"
    rows[2]["condition"] = "nopattern"
    with pytest.raises(AnalysisInputError, match=r"line 6 \(participant 'B', setting 'doctor'\): 'nopattern'"):
        load_export(small_export(rows, survey_rows()))


def test_non_binary_outcome_is_refused(small_export):
    """An outcome other than 0/1 names the column, the row and the value."""
    rows = base_rows()
    rows[2]["other_difference"] = "2"
    with pytest.raises(AnalysisInputError,
                       match=r"'other_difference' must be binary \(0 or 1\): line 4 \(participant 'B', "
                             r"setting 'doctor'\): '2'"):
        load_export(small_export(rows, survey_rows()))


def test_unannotated_outcome_of_included_participant_is_refused(small_export):
    """An empty outcome of an included participant says the answers must be annotated first."""
    rows = base_rows()
    rows[3]["identified"] = ""
    with pytest.raises(AnalysisInputError,
                       match=r"'identified' is empty for included participant\(s\); the answers must be "
                             r"annotated first.*participant 'B', setting 'farming'"):
        load_export(small_export(rows, survey_rows()))


def test_excluded_rows_may_be_unannotated_and_are_counted_by_reason(small_export):
    """Excluded participants need no annotation, vanish from both files and are counted per reason."""
    rows = base_rows() + [
        resp("C", "doctor", "pattern", identified="", other="", none="", excluded=1, reason="failed instruction check"),
        resp("C", "farming", "no_pattern", identified="", other="", none="", excluded=1,
             reason="failed instruction check"),
        resp("D", "doctor", "no_pattern", excluded=0),
        resp("D", "farming", "pattern", identified="", excluded=1, reason="copy-pasted answers"),
        resp("E", "doctor", "pattern", excluded=1),
        resp("E", "farming", "no_pattern", excluded=1),
    ]
    data = load_export(small_export(rows, survey_rows(("A", "B", "C", "D", "E"))))
    assert data.exclusions == {"copy-pasted answers": 1, "failed instruction check": 1, "unspecified": 1}
    assert set(data.responses["participant"]) == {"A", "B"}
    assert set(data.survey["participant"]) == {"A", "B"}
    assert (data.n_participants, data.n_included) == (5, 2)


def test_several_reasons_of_one_participant_count_once(small_export):
    """A participant excluded for two different reasons is counted once, under both reasons joined."""
    rows = base_rows() + [
        resp("C", "doctor", "pattern", excluded=1, reason="paste"),
        resp("C", "farming", "no_pattern", excluded=1, reason="AI answer"),
    ]
    assert load_export(small_export(rows, survey_rows())).exclusions == {"AI answer; paste": 1}


def test_excluded_flag_must_be_binary(small_export):
    """'excluded' other than 0/1 is refused with its value."""
    rows = base_rows()
    rows[0]["excluded"] = "yes"
    with pytest.raises(AnalysisInputError, match=r"'excluded' must be 0 or 1: line 2 .*: 'yes'"):
        load_export(small_export(rows, survey_rows()))


def test_setting_with_empty_condition_group_is_named(small_export):
    """A setting without any included pattern participant names the setting and the condition."""
    rows = base_rows()
    rows[3]["condition"] = "no_pattern"
    rows[1]["condition"] = "no_pattern"
    with pytest.raises(AnalysisInputError,
                       match="setting 'farming' has no included participants in condition 'pattern'; "
                             "every setting needs both 'pattern' and 'no_pattern' groups"):
        load_export(small_export(rows, survey_rows()))


def test_condition_group_emptied_by_exclusions_says_so(small_export):
    """When exclusions empty a group, the message says the rows exist but are all excluded."""
    rows = base_rows()
    rows[3].update(excluded=1, reason="paste")  # B's farming/pattern row excludes B everywhere
    with pytest.raises(AnalysisInputError,
                       match=r"setting 'doctor' has no included participants in condition 'no_pattern' "
                             r"\(1 row\(s\) there, all excluded\)"):
        load_export(small_export(rows, survey_rows()))


def test_duplicate_participant_setting_rows_are_named(small_export):
    """A re-submitted page (same participant and setting twice) names both lines."""
    rows = base_rows() + [resp("A", "doctor", "pattern")]
    with pytest.raises(AnalysisInputError,
                       match=r"duplicate participant x setting rows .*participant 'A', setting 'doctor' at "
                             r"line 2, line 6"):
        load_export(small_export(rows, survey_rows()))


def test_time_and_position_are_checked(small_export):
    """A missing time or a zero position of an included participant is refused."""
    rows = base_rows()
    rows[0]["time_on_task_ms"] = ""
    with pytest.raises(AnalysisInputError, match="'time_on_task_ms' must be a non-negative number"):
        load_export(small_export(rows, survey_rows()))
    rows = base_rows()
    rows[0]["position"] = 0
    with pytest.raises(AnalysisInputError, match=r"'position' must be a whole number >= 1: line 2"):
        load_export(small_export(rows, survey_rows()))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"response": "6"}, r"'response' must be a whole number from 1 to 5: line 2 \(participant 'A', item 'ease'\): '6'"),
        ({"response": "4.5"}, r"'response' must be a whole number from 1 to 5"),
        ({"condition": "baseline"},
         r"survey\.csv: unknown condition value\(s\) \(allowed: pattern, no_pattern, pattern_with_distractors, "
         r"background\): line 2 .*'baseline'"),
        ({"participant": "Z"}, r"survey\.csv: participant\(s\) not found in responses\.csv: line 2 \(participant 'Z'"),
    ],
)
def test_survey_values_are_validated(small_export, change, message):
    """Survey responses outside 1-5, unknown conditions and unknown participants are refused."""
    survey = survey_rows()
    survey[0].update(change)
    with pytest.raises(AnalysisInputError, match=message):
        load_export(small_export(base_rows(), survey))


def test_survey_duplicates_and_one_sided_items_are_refused(small_export):
    """A duplicated survey answer, or an item answered for one condition only, is refused."""
    survey = survey_rows() + [{"participant": "A", "condition": "pattern", "item": "ease", "response": 5}]
    with pytest.raises(AnalysisInputError, match=r"duplicate participant x condition x item rows: participant 'A', "
                                                 r"condition 'pattern', item 'ease' at line 2, line 8"):
        load_export(small_export(base_rows(), survey))
    survey = [r for r in survey_rows() if r["condition"] != "no_pattern"]
    with pytest.raises(AnalysisInputError,
                       match="item 'ease' has no included responses for condition 'no_pattern'"):
        load_export(small_export(base_rows(), survey))


def test_extra_columns_are_ignored_and_empty_survey_is_allowed(small_export):
    """Unknown columns are ignored, and a survey with only a header gives an empty survey table."""
    header = RESPONSE_HEADER + ["browser"]
    rows = [dict(r, browser="firefox") for r in base_rows()]
    data = load_export(small_export(rows, [], response_header=header))
    assert "browser" not in data.responses.columns
    assert data.survey.empty


def test_missing_file_and_empty_file_are_reported(tmp_path):
    """A missing survey.csv or an empty responses.csv gives a clear message."""
    write_csv(tmp_path / "responses.csv", RESPONSE_HEADER, base_rows())
    with pytest.raises(AnalysisInputError, match=r"survey\.csv not found in"):
        load_export(tmp_path)
    write_csv(tmp_path / "survey.csv", SURVEY_HEADER, [])
    (tmp_path / "responses.csv").write_bytes(b"")
    with pytest.raises(AnalysisInputError, match=r"responses\.csv is empty \(no header row\)"):
        load_export(tmp_path)


def test_input_sha256_is_the_sha256sum_manifest(export_dir):
    """The fingerprint is sha256 of 'sha256sum responses.csv survey.csv' output and tracks every byte."""
    per_file = {name: hashlib.sha256((export_dir / name).read_bytes()).hexdigest()
                for name in ("responses.csv", "survey.csv")}
    manifest = f"{per_file['responses.csv']}  responses.csv\n{per_file['survey.csv']}  survey.csv\n"
    combined, files = input_sha256(export_dir)
    assert combined == hashlib.sha256(manifest.encode()).hexdigest()
    assert files == per_file
    assert load_export(export_dir).input_sha256 == combined
    survey = export_dir / "survey.csv"
    survey.write_bytes(survey.read_bytes() + b"\n")
    assert input_sha256(export_dir)[0] != combined


def test_prepare_data_accepts_dataframes_with_numbers_and_nan():
    """DataFrames with numeric and NaN cells validate like CSV text; messages then cite 'row N'."""
    responses = pd.DataFrame(base_rows())
    responses.loc[0, "identified"] = np.nan
    responses.loc[0, "excluded"] = 1
    responses.loc[1, "excluded"] = 1
    responses = pd.concat([responses, pd.DataFrame([resp("C", "doctor", "pattern"),
                                                    resp("C", "farming", "no_pattern", identified=1.0)])])
    data = prepare_data(responses, pd.DataFrame(survey_rows(("A", "B", "C"))))
    assert data.exclusions == {"unspecified": 1}
    assert sorted(data.responses["participant"].unique()) == ["B", "C"]
    responses.iloc[2, responses.columns.get_loc("identified")] = np.nan
    with pytest.raises(AnalysisInputError, match=r"annotated first \(or the participant excluded\): row 3 \(participant 'B'"):
        prepare_data(responses.reset_index(drop=True), pd.DataFrame(survey_rows()))


def test_export_without_rows_says_there_are_no_answers_yet(small_export):
    """A responses.csv with only its header (a study nobody answered yet) gets a clear message."""
    with pytest.raises(AnalysisInputError,
                       match=r"^responses\.csv has no rows: no participant has answered a main task yet"):
        load_export(small_export([], []))


def test_formula_guard_quote_is_removed_before_validation(tmp_path):
    """Cells the export prefixed with ' (formula guard) are read back as the original text."""
    reason = "=cmd|' /C calc'!A0"
    rows = base_rows() + [resp("E", "doctor", "pattern", excluded=1, reason=reason),
                          resp("E", "farming", "no_pattern", excluded=1, reason=reason)]
    for row in rows:
        if row["setting"] == "farming":
            row["setting"] = "-farming"  # a slug may begin with "-"
    guarded = [{k: (f"'{v}" if isinstance(v, str) and v[:1] in "=+-@'" else v) for k, v in r.items()}
               for r in rows]
    survey = [dict(r, item="'quoted") if r["item"] == "ease" else r for r in survey_rows()]
    guarded_survey = [dict(r, item="''quoted") if r["item"] == "'quoted" else r for r in survey]
    write_csv(tmp_path / "responses.csv", RESPONSE_HEADER, guarded)
    write_csv(tmp_path / "survey.csv", SURVEY_HEADER, guarded_survey)
    assert "'-farming" in (tmp_path / "responses.csv").read_text(encoding="utf-8")
    data = load_export(tmp_path)
    assert set(data.responses["setting"]) == {"doctor", "-farming"}
    assert data.exclusions == {reason: 1}
    assert set(data.survey["item"]) == {"'quoted", "llm_use"}


def test_survey_condition_nobody_saw_is_refused(small_export):
    """Survey answers about a condition that no response row has are refused, naming it."""
    survey = survey_rows() + [{"participant": "A", "condition": "pattern_with_distractors", "item": "ease",
                               "response": 3}]
    with pytest.raises(AnalysisInputError,
                       match=r"condition\(s\) 'pattern_with_distractors' occur in the survey but in no row"):
        load_export(small_export(base_rows(), survey))


def test_every_condition_of_the_design_needs_a_group_in_every_setting(small_export):
    """With the distractor condition in the design, a setting without that group is named."""
    rows = base_rows() + [resp("C", "doctor", "pattern_with_distractors"), resp("C", "farming", "no_pattern")]
    with pytest.raises(AnalysisInputError,
                       match="setting 'farming' has no included participants in condition "
                             "'pattern_with_distractors'; every setting needs 'pattern', 'no_pattern' and "
                             "'pattern_with_distractors' groups"):
        load_export(small_export(rows, []))
