"""Labels under a study's declared codebook: the label API and service check each field, the
item page renders the fields with a hotkey per option, agreement and adjudication per field."""
from __future__ import annotations

import pytest
from django.test import Client

from spotlight_study.annotation.models import Annotation, AnnotationRevision, FinalLabel
from spotlight_study.annotation.selectors import agreed_initial
from spotlight_study.annotation.services.adjudication import adjudication_save
from spotlight_study.annotation.services.labels import LabelInput, label_save
from spotlight_study.annotation.services.queue import assignment_next
from spotlight_study.studies.services import study_import

from ..codebooks import german_data
from .conftest import complete_participants, make_user


@pytest.fixture
def german_study(db, demo_data):
    """The German study with its codebook, one participant's three answers to label."""
    study = study_import(data=german_data(demo_data))
    complete_participants(study.slug, 1)
    return study


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _values(**values) -> LabelInput:
    return LabelInput(identified=False, surface_difference=False, no_difference=False,
                      values=values)


def test_api_label_with_an_unknown_option_is_400_naming_the_field_and_stores_nothing(german_study):
    """An option outside the codebook is 400 invalid_label naming values.erkannt; nothing saved."""
    user = make_user("ann-de", "annotators")
    item = assignment_next(study=german_study, annotator=user)
    url = f"/annotate/api/{german_study.slug}/items/{item.public_id}/label/"
    client = _client(user)
    response = client.put(url, {"values": {"erkannt": "vielleicht"}}, content_type="application/json")
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid_label" and "values.erkannt" in error["fields"]
    missing = client.put(url, {"values": {"tags": ["Länge"]}}, content_type="application/json")
    assert missing.status_code == 400 and "values.erkannt" in missing.json()["error"]["fields"]
    assert not Annotation.objects.exists() and not AnnotationRevision.objects.exists()


def test_api_label_matches_options_ignoring_case_and_stores_canonical(german_study):
    """``JA`` and ``erwähnt GESCHLECHT`` are stored as ja and Erwähnt Geschlecht."""
    user = make_user("ann-de", "annotators")
    item = assignment_next(study=german_study, annotator=user)
    url = f"/annotate/api/{german_study.slug}/items/{item.public_id}/label/"
    body = {"values": {"erkannt": "JA", "tags": ["erwähnt GESCHLECHT", "STRASSE"], "notiz": " gut "}}
    response = _client(user).put(url, body, content_type="application/json")
    assert response.status_code == 200, response.content
    saved = Annotation.objects.get()
    assert saved.values == {"erkannt": "ja", "tags": ["Erwähnt Geschlecht", "Straße"]}
    assert saved.notes == {"notiz": "gut"}
    assert response.json()["label"]["values"] == saved.values
    assert [f["key"] for f in response.json()["item"]["fields"]] == ["erkannt", "tags", "notiz"]


def test_the_default_codebook_api_answer_is_unchanged(demo_study):
    """A study without a codebook answers labels without values, notes or fields."""
    complete_participants(demo_study.slug, 1)
    user = make_user("ann-en", "annotators")
    item = assignment_next(study=demo_study, annotator=user)
    url = f"/annotate/api/{demo_study.slug}/items/{item.public_id}/label/"
    body = {"identified": True, "surface_difference": False, "no_difference": False}
    response = _client(user).put(url, body, content_type="application/json")
    assert response.status_code == 200, response.content
    assert "values" not in response.json()["label"] and "fields" not in response.json()["item"]


def _label_all(study, user, values_of) -> list:
    """Label every item the annotator gets, ``values_of(position)`` by the item's pk order."""
    items = []
    while (item := assignment_next(study=study, annotator=user)) is not None:
        items.append(item)
        label_save(study=study, annotator=user, public_id=item.public_id, label=_values(erkannt="ja"))
    items.sort(key=lambda i: i.pk)
    for position, item in enumerate(items):
        label_save(study=study, annotator=user, public_id=item.public_id,
                   label=_values(**values_of(position)))
    return items


def test_disagreement_on_one_field_goes_to_adjudication_of_that_field(german_study):
    """Two annotators agree on tags but not erkannt: no final label, erkannt left blank."""
    first, second = make_user("a1", "annotators"), make_user("a2", "annotators")
    item = _label_all(german_study, first, lambda i: {"erkannt": "ja", "tags": ["Länge"]})[0]
    _label_all(german_study, second,
               lambda i: {"erkannt": "teilweise" if i == 0 else "ja", "tags": ["länge"]})
    assert not FinalLabel.objects.filter(item=item).exists()
    initial, disagree = agreed_initial(item=item)
    assert disagree == {"erkannt"}
    assert initial == {"cb_erkannt": None, "cb_tags": ["Länge"]}
    adjudicator = make_user("adj", "adjudicators")
    adjudication_save(study=german_study, adjudicator=adjudicator, public_id=item.public_id,
                      label=_values(erkannt="teilweise", tags=["Länge"]))
    final = FinalLabel.objects.get(item=item)
    assert final.values == {"erkannt": "teilweise", "tags": ["Länge"]}


def test_agreeing_labels_become_the_final_label_with_joined_notes(german_study):
    """Equal values agree (notes are not compared); the final label joins the notes."""
    first, second = make_user("a1", "annotators"), make_user("a2", "annotators")
    item = _label_all(german_study, first, lambda i: {"erkannt": "nein", "notiz": "kurz"})[0]
    _label_all(german_study, second, lambda i: {"erkannt": "NEIN", "notiz": "knapp"})
    final = FinalLabel.objects.get(item=item)
    assert final.values == {"erkannt": "nein", "tags": []}
    assert final.notes == {"notiz": "kurz | knapp"}


def test_item_page_renders_the_fields_with_a_hotkey_per_option_and_saves(german_study):
    """The page shows each field's label and options with keys 1..6; a POST saves the values."""
    user = make_user("ann-page", "annotators")
    item = assignment_next(study=german_study, annotator=user)
    client = _client(user)
    url = f"/annotate/{german_study.slug}/items/{item.public_id}/"
    page = client.get(url).content.decode()
    assert "Unterschied erkannt" in page and "Weitere Unterschiede" in page
    for key in "123456":
        assert f'data-hotkey="{key}"' in page
    assert 'data-hotkey="7"' not in page
    response = client.post(url, {"cb_erkannt": "teilweise", "cb_tags": ["Länge"], "cb_notiz": "",
                                 "exclusion": "none", "exclusion_note": "", "base_revision": "0"})
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Annotation.objects.get().values == {"erkannt": "teilweise", "tags": ["Länge"]}
    bad = client.post(url, {"cb_tags": ["Länge"], "exclusion": "none", "base_revision": "1"})
    assert bad.status_code == 400 and Annotation.objects.get().revision == 1


def test_overview_and_adjudication_pages_show_the_codebook_fields(german_study, staff_client):
    """The overview gives agreement per field; the adjudication page marks the field that differs
    and saves the adjudicator's values."""
    first, second = make_user("a1", "annotators"), make_user("a2", "annotators")
    item = _label_all(german_study, first, lambda i: {"erkannt": "ja", "tags": ["Länge"]})[0]
    _label_all(german_study, second,
               lambda i: {"erkannt": "nein" if i == 0 else "ja", "tags": ["Länge"]})
    page = staff_client.get(f"/annotate/{german_study.slug}/overview/").content.decode()
    assert "Agreement per codebook field" in page
    assert "quadratic_kappa" in page and "krippendorff_alpha:ordinal" in page and "Länge" in page
    adjudicator = _client(make_user("adj", "adjudicators"))
    url = f"/annotate/{german_study.slug}/adjudicate/{item.public_id}/"
    page = adjudicator.get(url).content.decode()
    assert 'class="differs" id="competing-erkannt"' in page
    assert 'id="competing-tags"' in page and 'class="differs" id="competing-tags"' not in page
    response = adjudicator.post(url, {"cb_erkannt": "teilweise", "cb_tags": ["Länge"],
                                      "exclusion": "none", "exclusion_note": ""})
    assert response.status_code == 302, response.content.decode()[:1500]
    assert FinalLabel.objects.get(item=item).values == {"erkannt": "teilweise", "tags": ["Länge"]}
