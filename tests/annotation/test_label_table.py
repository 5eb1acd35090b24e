"""The label table's reads and codes: the same rows as the ORM, the same agreement as lists."""

from django.db.models import TextField
from django.db.models.functions import Cast

from analysis.stats import agreement as agreement_stats
from spotlight_study.annotation.label_import.importer import labels_import
from spotlight_study.annotation.label_table import fetched_rows, label_table
from spotlight_study.annotation.models import Annotation, FinalLabel, Item
from spotlight_study.annotation.overview import agreement_report
from spotlight_study.annotation.selectors import codebook
from spotlight_study.annotation.services.queue import items_sync

from .test_pairwise_agreement import labeled_study  # noqa: F401 - the fixture

# Tags of each annotator per item (";"-separated as in the import), "" = labelled without tags.
TAGS = {
    "ann1": ["kindness", "", "kindness;hard work", "", "research", ""],
    "ann2": ["kindness", "hard work", "", "", "research;kindness", "kindness"],
}


def _tagged_study(demo_study, answered):
    items_sync(study=demo_study)
    items = list(Item.objects.filter(study=demo_study).order_by("pk"))
    lines = ["item,annotator,identified,surface_difference,no_difference,exclusion,tags"]
    for name, tags in TAGS.items():
        lines += [
            f"{it.public_id},{name},1,0,0,none,{t}" for it, t in zip(items, tags, strict=True)
        ]
    labels_import(study=demo_study, text="\n".join(lines) + "\n", add_tags=True)
    return demo_study, items


def test_fetched_rows_equal_the_querysets_rows(labeled_study):  # noqa: F811
    """Rows read from the cursor equal values_list's (booleans, None, JSON text, joins)."""
    Annotation.objects.filter(pk=Annotation.objects.order_by("pk").first().pk).update(
        tags=["kindness", "research"]
    )
    items = Item.objects.filter(study=labeled_study).order_by("pk").values_list(
        "pk", "setting_id", "final_label__source", "final_label__identified",
        "final_label__exclusion", Cast("final_label__tags", output_field=TextField()),
    )
    labels = Annotation.objects.filter(item__study=labeled_study).order_by("pk").values_list(
        "item_id", "annotator_id", "identified", "surface_difference", Cast("tags", TextField()),
        "exclusion",
    )
    assert FinalLabel.objects.filter(item__study=labeled_study).exists()
    assert fetched_rows(items) == list(items)
    assert fetched_rows(labels) == list(labels)
    assert any(row[3] is None for row in fetched_rows(items))  # items without a final label
    assert {type(row[2]) for row in fetched_rows(labels)} == {bool}


def test_tag_rows_equal_agreement_of_tag_presence_lists(demo_study, answered, annotators):
    """Each setting's tag rows are agreement() of tag_presence's lists, codebook tags first."""
    study, items = _tagged_study(demo_study, answered)
    rows = [r for r in agreement_report(study=study) if r.field.startswith("tag:")]
    assert rows
    table = label_table(study=study)
    annotators_ids = sorted(table.labels_per_annotator)
    by_item = {
        (a.item_id, a.annotator_id): a.tags for a in Annotation.objects.filter(item__in=items)
    }
    for setting in {it.setting for it in items}:
        scoped = [it for it in items if it.setting_id == setting.pk]
        tag_sets = [[by_item.get((it.pk, u)) for it in scoped] for u in annotators_ids]
        presence = agreement_stats.tag_presence(tag_sets)
        tags = codebook(setting)
        expected = tags + sorted(set(presence) - set(tags))
        got = [r for r in rows if r.scope == setting.key and r.comparison == "all"]
        assert [r.field for r in got] == [f"tag:{t}" for t in expected]
        for r in got:
            tag = r.field.removeprefix("tag:")
            ratings = presence.get(tag) or [
                [None if ts is None else False for ts in row] for row in tag_sets
            ]
            assert r.result == agreement_stats.agreement(ratings)
