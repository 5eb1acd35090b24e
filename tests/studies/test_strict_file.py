"""Strict study files: unknown keys at every level, pattern content checks, all errors at once."""
from __future__ import annotations

import re

import pytest
import yaml
from django.core.management import CommandError, call_command

from spotlight_study.studies.models import Study, TokenPattern
from spotlight_study.studies.errors import StudyFileError
from spotlight_study.studies.schema import validate_study_data


def _errors(data) -> dict[str, list[str]]:
    with pytest.raises(StudyFileError) as info:
        validate_study_data(data)
    return info.value.errors


def _texts_with_words(texts: list[str], words: list[str]) -> int:
    """Texts containing every word as a whole word: an implementation independent of spaCy."""
    return sum(all(re.search(rf"(?<!\w){re.escape(w)}(?!\w)", t) for w in words) for t in texts)


def _rename(mapping: dict, old: str, new: str) -> None:
    mapping[new] = mapping.pop(old)


def _typo_k(d):
    d["annotation"]["annotators_per_itme"] = d["annotation"].pop("annotators_per_item") + 1


def _typo_target(d):
    _rename(d["settings"][0], "target_description", "target_descripton")


def _typo_top_level(d):
    _rename(d, "abandonment_timeout_minutes", "abandonment_timout_minutes")


def _banana(d):
    d["settings"][1]["patterns"][0]["tokens"] = ["maize", "banana"]


def _wrong_group(d):
    d["settings"][1]["patterns"][0]["group"] = 2


def _expected_wrong_group(d) -> str:
    farming = d["settings"][1]
    n1 = _texts_with_words(farming["group1"], ["maize", "beans"])
    n2 = _texts_with_words(farming["group2"], ["maize", "beans"])
    assert n1 > n2 == 0  # the demo file's claim (group 1) is the true one
    return (
        f"`maize, beans` occurs in {n1} of the 10 texts of group 1 and {n2} of the 10 texts of "
        "group 2, but the pattern says more often in group 2."
    )


CATALOGUE = [
    (_typo_k, "annotation.annotators_per_itme", "Unknown field. Did you mean `annotators_per_item`?"),
    (_typo_target, "settings[0].target_descripton", "Unknown field. Did you mean `target_description`?"),
    (
        _typo_top_level,
        "abandonment_timout_minutes",
        "Unknown field. Did you mean `abandonment_timeout_minutes`?",
    ),
    (_banana, "settings[1].patterns[0]", "`banana` occurs in none of the setting's texts (as a whole token)."),
    (_wrong_group, "settings[1].patterns[0]", _expected_wrong_group),
]


@pytest.mark.parametrize("typo,path,message", CATALOGUE, ids=["k", "target", "top-level", "banana", "group"])
def test_error_catalogue(demo_data, typo, path, message):
    """Each typo seen in real study files is refused, named by its path, with a clear message."""
    expected = message(demo_data) if callable(message) else message
    typo(demo_data)
    errors = _errors(demo_data)
    assert expected in errors[path]


def test_all_typos_are_reported_together(demo_data):
    """A file with every typo of the catalogue reports each of them at once, top level included."""
    for typo, _path, _message in CATALOGUE[:-1]:
        typo(demo_data)
    demo_data["settings"][0]["patterns"][0]["group"] = 3  # a field error in a nested list too
    errors = _errors(demo_data)
    for _typo, path, _message in CATALOGUE[:-1]:
        assert path in errors
    assert "settings[0].patterns[0].group" in errors
    assert "abandonment_timeout_minutes" in errors  # now missing: required


def test_demo_file_passes_the_content_checks(demo_data):
    """The demo study's patterns all occur in their texts and lean to the group they claim."""
    validate_study_data(demo_data)


@pytest.mark.parametrize(
    "where",
    [
        lambda d: d["completion_codes"],
        lambda d: d["training"],
        lambda d: d["settings"][1]["distractor_patterns"][0],
        lambda d: d["survey"],
        lambda d: d["survey"]["condition_items"][0],
        lambda d: d["annotation"]["settings"]["doctor"],
    ],
    ids=["codes", "training", "distractor", "survey", "survey-item", "codebook"],
)
def test_unknown_key_is_refused_at_every_level(demo_data, where):
    """An unknown key is an error wherever it is nested."""
    where(demo_data)["colour"] = "blue"
    errors = _errors(demo_data)
    assert [msgs for path, msgs in errors.items() if path.endswith("colour")] == [["Unknown field."]]


def test_unknown_condition_intro_suggests_the_condition(demo_data):
    """A misspelled key of survey.condition_intros is named with the condition it resembles."""
    _rename(demo_data["survey"]["condition_intros"], "pattern", "patern")
    errors = _errors(demo_data)
    assert errors["survey.condition_intros.patern"] == ["Unknown condition. Did you mean `pattern`?"]


def test_cross_field_rules_are_reported_with_field_errors(demo_data):
    """A rule across fields (maximum below the estimate) is reported together with field errors."""
    demo_data["maximum_minutes"] = 5
    demo_data["settings"][0]["group1"] = []
    demo_data["conditions"] = ["no_pattern", "pattern", "pattern_with_distractors"]
    del demo_data["survey"]["condition_intros"]["pattern_with_distractors"]
    errors = _errors(demo_data)
    assert {"maximum_minutes", "settings[0].group1", "survey.condition_intros"} <= set(errors)


def test_token_in_another_case_is_suggested(demo_data):
    """A pattern token that occurs only in another case is refused with the text's spelling."""
    demo_data["training"]["patterns"][0]["tokens"] = ["Stars"]
    assert _errors(demo_data)["training.patterns[0]"] == [
        "`Stars` occurs in none of the setting's texts (as a whole token). Did you mean `stars`?"
    ]


def test_whole_tokens_only(demo_data):
    """A token found only inside longer words (beans in soybeans) does not count as occurring."""
    farming = demo_data["settings"][1]
    assert "soybeans" in " ".join(farming["group2"])
    farming["patterns"][0] = {"tokens": ["beans"], "group": 2}
    n1 = _texts_with_words(farming["group1"], ["beans"])
    message = _errors(demo_data)["settings[1].patterns[0]"][0]
    assert message.startswith(f"`beans` occurs in {n1} of the 10 texts of group 1 and 0 of the 10")


@pytest.mark.django_db
def test_unchecked_pattern_is_exempt_and_needs_a_reason(demo_data):
    """`unchecked: true` exempts a pattern from the content checks, but only with a reason."""
    demo_data["settings"][1]["distractor_patterns"][0] = {
        "tokens": ["banana"], "group": 1, "unchecked": True,
    }
    errors = _errors(demo_data)
    assert list(errors) == ["settings[1].distractor_patterns[0].unchecked_reason"]
    demo_data["settings"][1]["distractor_patterns"][0]["unchecked_reason"] = "A deliberately false hint."
    from spotlight_study.studies.services import study_import

    study_import(data=demo_data)
    banana = TokenPattern.objects.get(tokens=["banana"])
    assert banana.unchecked_reason == "A deliberately false hint."
    assert TokenPattern.objects.exclude(pk=banana.pk).filter(unchecked_reason="").count() == 6


@pytest.mark.django_db
def test_import_command_reports_every_typo_and_creates_nothing(tmp_path, demo_data):
    """import_study on a YAML file with the catalogue's typos names each one and imports nothing."""
    for typo, _path, _message in CATALOGUE:
        if typo is not _banana:
            typo(demo_data)
    path = tmp_path / "typos.yaml"
    path.write_text(yaml.safe_dump(demo_data, allow_unicode=True))
    with pytest.raises(CommandError) as info:
        call_command("import_study", str(path))
    text = str(info.value)
    for needle in ("annotators_per_itme", "target_descripton", "abandonment_timout_minutes", "maize, beans"):
        assert needle in text
    assert not Study.objects.exists()


@pytest.mark.django_db
def test_import_prints_design_warnings(tmp_path, demo_data, capsys):
    """Import prints a warning for more settings than conditions and for an uneven sample size."""
    third = dict(demo_data["settings"][1], key="farming2", title="Another harvest")
    demo_data["settings"].append(third)
    demo_data["target_sample_size"] = 50
    path = tmp_path / "three.yaml"
    path.write_text(yaml.safe_dump(demo_data, allow_unicode=True))
    out = _call("import_study", str(path))
    assert "Design warning: 3 main settings but 2 condition(s)" in out
    assert "target_sample_size 50 is not a multiple of the 12 cells" in out


def _call(*args) -> str:
    from io import StringIO

    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_reserved_slug_is_refused(db, demo_data):
    """The slug `team`, which names the team page, is refused with a message and nothing is imported."""
    from spotlight_study.studies.models import Study
    from spotlight_study.studies.errors import StudyFileError
    from spotlight_study.studies.services import study_import

    with pytest.raises(StudyFileError, match="slug.*reserved"):
        study_import(data=dict(demo_data, slug="team"))
    assert not Study.objects.filter(slug="team").exists()


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("dup.yaml", "slug: a\nestimated_minutes: 15\nestimated_minutes: 50\n",
         r"`estimated_minutes` is given twice in one mapping \(dup.yaml, line 3\)"),
        ("nested.yaml", "slug: a\ntraining:\n  key: t\n  key: u\n", r"`key` is given twice"),
        ("dup.json", '{"slug": "a", "slug": "b"}', r"`slug` is given twice in one object"),
        ("empty.yaml", "\n  \n", r"The file is empty"),
        ("broken.yaml", "slug: [a\n", r"broken.yaml"),
    ],
)
def test_file_level_problems_are_named(tmp_path, name, text, message):
    """Repeated keys (YAML or JSON), an empty file and a syntax error are refused, naming the file."""
    from spotlight_study.studies.errors import StudyFileError
    from spotlight_study.studies.schema import parse_study_file

    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(StudyFileError) as err:
        parse_study_file(path)
    assert list(err.value.errors) == ["(file)"]
    assert re.search(message, " ".join(err.value.errors["(file)"]))
