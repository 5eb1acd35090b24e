"""import_labels under a declared codebook: the columns final_labels.csv writes, an unedited
final_labels.csv included, values checked against the codebook by line, nothing stored on error."""
from __future__ import annotations

import pytest

from spotlight_study.annotation.errors import LabelImportError
from spotlight_study.annotation.exports import export_csv_text
from spotlight_study.annotation.label_import.importer import labels_import
from spotlight_study.annotation.models import Annotation, Assignment, FinalLabel, Item
from spotlight_study.annotation.services.queue import items_sync

from .test_codebook_exports import _two_annotators_agree
from .test_codebook_labels import german_study  # noqa: F401 (fixture)


def test_an_unedited_final_labels_csv_imports_back(german_study):  # noqa: F811
    """The export, imported as a new annotator's labels, gives the same values."""
    _two_annotators_agree(german_study)
    text = export_csv_text(study=german_study, name="final_labels")
    before = {f.item.public_id: (f.values, f.notes) for f in FinalLabel.objects.select_related("item")}
    FinalLabel.objects.all().delete()
    Annotation.objects.all().delete()
    Assignment.objects.all().delete()
    report = labels_import(study=german_study, text=text, annotator_name="imported")
    assert report.created == 3
    after = {a.item.public_id: (a.values, a.notes) for a in Annotation.objects.select_related("item")}
    assert after == before


def test_a_bad_value_names_the_line_and_field_and_stores_nothing(german_study):  # noqa: F811
    """An option outside the codebook is refused by line as values.erkannt; case is ignored."""
    items_sync(study=german_study)
    item = Item.objects.order_by("pk").first()
    text = ("item,erkannt,tags,exclusion\n"
            f"{item.public_id},TEILWEISE,länge;STRASSE,none\n"
            f"{item.public_id},vielleicht,,none\n")
    with pytest.raises(LabelImportError) as info:
        labels_import(study=german_study, text=text, annotator_name="imp")
    assert info.value.errors[0][0] == 3 and "values.erkannt" in info.value.errors[0][1]
    assert not Annotation.objects.exists()
    labels_import(study=german_study, text=text.rsplit("\n", 2)[0] + "\n", annotator_name="imp")
    assert Annotation.objects.get().values == {"erkannt": "teilweise", "tags": ["Länge", "Straße"]}


def test_the_default_codebooks_unedited_final_labels_csv_imports_back(demo_study):
    """Without a codebook, final_labels.csv as exported (its extra columns ignored) imports."""
    from spotlight_study.annotation.services.labels import LabelInput, label_save
    from spotlight_study.annotation.services.queue import assignment_next

    from .conftest import complete_participants, make_user

    complete_participants(demo_study.slug, 1)
    for name in ("a1", "a2"):
        user = make_user(name, "annotators")
        while (item := assignment_next(study=demo_study, annotator=user)) is not None:
            label_save(study=demo_study, annotator=user, public_id=item.public_id, label=LabelInput(
                identified=True, surface_difference=False, no_difference=False, tags=["gear"]
                if item.setting.key == "angler" else []))
    text = export_csv_text(study=demo_study, name="final_labels")
    assert "other_difference" in text.splitlines()[0]
    FinalLabel.objects.all().delete()
    Annotation.objects.all().delete()
    Assignment.objects.all().delete()
    assert labels_import(study=demo_study, text=text, annotator_name="imported").created == 3
    assert sorted(tuple(a.tags) for a in Annotation.objects.all()) == [(), (), ("gear",)]
