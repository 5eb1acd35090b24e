"""The survey step asks typed items (issue 34, section 3): each type is rendered, checked on the
server with a clear message (nothing saved on a refusal), stored, and exported by type."""
from __future__ import annotations

import csv
import json
import re

import pytest

from spotlight_study.participation.models import Participant, SurveyAnswer
from spotlight_study.participation.pilot import pilot_run
from spotlight_study.results.exports import results_export
from spotlight_study.researcher.downloads import column_descriptions, wide_rows
from spotlight_study.results.exports import export_rows
from spotlight_study.studies.schema import parse_study_file
from spotlight_study.studies.selectors import study_get_with_settings
from spotlight_study.studies.services import study_import

from ..conftest import Walker
from ..studies.test_survey_items import GERMAN_FILE


@pytest.fixture
def german_study(db):
    """The German study of the survey tests, imported."""
    study_import(data=parse_study_file(GERMAN_FILE))
    return study_get_with_settings(slug="umfrage-de")


def _to_survey(client) -> Walker:
    walker = Walker(client, "umfrage-de")
    walker.enter()
    walker.consent()
    walker.instructions()
    for text in ("In der Nacht", "Geschlecht", "Mais und Bohnen"):
        walker.answer(text)
    walker.page()
    return walker


def _complete_answers(conditions) -> dict:
    data = {"b__ki_nutzung": "2", "b__beruf": "1", "b__anmerkung": "Schöne Studie",
            "comment": ""}
    for c in conditions:
        data.update({f"c__{c}__leicht": "4", f"c__{c}__sicherheit": "7", f"c__{c}__strategie": "2",
                     f"c__{c}__hilfen__o2": "on", f"c__{c}__minuten": "3,5"})
    return data


def test_each_type_is_rendered_with_its_own_control(client, german_study):
    """Radios for likert and choice (the German labels word for word), checkboxes for
    multi_choice, a number field with min and max, a text box, in German."""
    html = _to_survey(client).last_page.content.decode()
    assert html.count('name="c__pattern__sicherheit"') == 7
    assert "Überhaupt nicht sicher" in html and "Völlig sicher" in html
    assert html.count('name="c__no_pattern__strategie"') == 3
    assert 'type="checkbox" name="c__pattern__hilfen__o2"' in html
    assert re.search(r'<input type="number" name="c__pattern__minuten"[^>]* min="0" max="60"', html)
    assert '<textarea name="b__anmerkung"' in html
    assert "Wählen Sie alle zutreffenden" in html  # the checkbox hint, translated


def test_a_bad_answer_is_refused_with_a_message_and_nothing_saved(client, german_study):
    """A number outside min..max and a missing choice come back with German messages and the
    other answers kept; no survey answer is stored."""
    walker = _to_survey(client)
    conditions = [t["condition"] for t in Participant.objects.get().cell_plan]
    data = _complete_answers(conditions)
    data[f"c__{conditions[0]}__minuten"] = "600"
    del data[f"c__{conditions[1]}__strategie"]
    walker.post(data)
    html = walker.page().content.decode()
    assert "Bitte geben Sie eine Zahl von 0 bis 60 ein." in html
    assert "Bitte wählen Sie eine Antwort." in html
    assert 'value="600"' in html and "Schöne Studie" in html
    assert SurveyAnswer.objects.count() == 0


def test_answers_are_stored_and_exported_by_type(client, german_study, tmp_path):
    """A complete survey is saved; survey.csv holds the option as written, the joined options,
    the number and the text; the wide file has a 0/1 column per option; survey_items.json
    gives every item's type and words."""
    walker = _to_survey(client)
    conditions = [t["condition"] for t in Participant.objects.get().cell_plan]
    response = walker.post(_complete_answers(conditions))
    assert response.status_code == 302
    assert Participant.objects.get().status == Participant.Status.COMPLETED
    paths = results_export(study=german_study, out_dir=tmp_path)
    with paths["survey"].open(encoding="utf-8") as fh:
        rows = {(r["condition"], r["item"]): r["response"] for r in csv.DictReader(fh)}
    assert rows[("pattern", "sicherheit")] == "7"
    assert rows[("pattern", "strategie")] == "Nach Stichwörtern gesucht"
    assert rows[("pattern", "hilfen")] == "Die hervorgehobenen Wörter"
    assert rows[("no_pattern", "minuten")] == "3.5"
    assert rows[("background", "beruf")] == "Forschung"
    assert rows[("background", "anmerkung")] == "Schöne Studie"
    items = json.loads(paths["survey_items"].read_text(encoding="utf-8"))
    assert [i["type"] for i in items["items"]][:5] == ["scale", "likert", "choice", "multi_choice", "number"]
    columns, wide = wide_rows(study=german_study, rows=export_rows(study=german_study))
    assert "survey_pattern_hilfen.Die Überschrift" in columns
    assert wide[0]["survey_pattern_hilfen.Die hervorgehobenen Wörter"] == 1
    assert wide[0]["survey_pattern_hilfen.Die Überschrift"] == 0
    described = column_descriptions(study=german_study, columns_by_file={"participants_wide.csv": columns,
                                                                          "survey.csv": ["response"]})
    assert not [c for c, meaning in described["participants_wide.csv"] if meaning == "(no description)"]
    assert "multi_choice" in described["survey.csv"][0][1]


def test_pilot_answers_every_type(german_study):
    """Simulated pilots answer each typed item within its bounds (seed printed by pytest)."""
    seed = 3401
    print(f"seed {seed}")
    pilot_run(study=german_study, participants=4, seed=seed)
    answers = SurveyAnswer.objects.filter(participant__is_pilot=True)
    by_item = {}
    for a in answers:
        by_item.setdefault(a.item, []).append(a)
    assert all(1 <= a.response <= 7 for a in by_item["sicherheit"])
    assert all(a.value in ("Alle Texte gelesen", "Nach Stichwörtern gesucht", "Geraten") for a in by_item["strategie"])
    assert all(0 <= a.value <= 60 for a in by_item["minuten"])
    assert all(isinstance(a.value, list) for a in by_item["hilfen"])


def test_the_researchers_preview_shows_the_typed_items(staff_client, german_study):
    """The survey preview renders every typed control with the study's own words."""
    html = staff_client.get(f"/researcher/{german_study.slug}/preview/0/survey/").content.decode()
    assert "Völlig sicher" in html and 'type="checkbox"' in html and 'type="number"' in html
    assert "Was ist Ihnen sonst aufgefallen?" in html


def test_a_crafted_post_is_refused_without_an_error_page(client, german_study):
    """Numbers that are not finite, an unknown option value and checkbox values the page never
    offers give the refused page (no 500), and nothing is saved."""
    walker = _to_survey(client)
    conditions = [t["condition"] for t in Participant.objects.get().cell_plan]
    data = _complete_answers(conditions)
    data[f"c__{conditions[0]}__minuten"] = "inf"
    data[f"c__{conditions[1]}__minuten"] = "NaN"
    data[f"c__{conditions[0]}__strategie"] = "9"
    response = walker.post(data)
    assert response.status_code == 302
    html = walker.page().content.decode()
    assert walker.last_page.status_code == 200 and "errorlist" in html
    assert SurveyAnswer.objects.count() == 0
