"""CSV import of labels made elsewhere: all rows checked, bad lines reported, nothing changed."""

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from spotlight_study.annotation.services.labels import LabelInput, label_save
from spotlight_study.annotation.services.queue import assignment_next, items_sync
from spotlight_study.annotation.models import (
    Annotation,
    AnnotationRevision,
    CodebookTag,
    FinalLabel,
    Item,
)

HEADER = "item,identified,surface_difference,no_difference,tags,exclusion,exclusion_note\n"


def _ids(study):
    items = list(Item.objects.filter(study=study).select_related("setting").order_by("pk"))
    return items


def _write(tmp_path, text, name="labels.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _snapshot():
    return (
        Annotation.objects.count(),
        AnnotationRevision.objects.count(),
        FinalLabel.objects.count(),
        CodebookTag.objects.count(),
        User.objects.count(),
    )


def test_bad_rows_are_reported_by_line_and_nothing_changes(demo_study, answered, tmp_path):
    """Each bad row is named by its line number, and no label, tag or user is created."""
    items_sync(study=demo_study)
    items = _ids(demo_study)
    farming = next(i for i in items if i.setting.key == "farming")
    good = f"{items[0].public_id},1,0,0,,none,\n"
    text = (
        HEADER
        + good
        + "".join(
            [
                "no-such-item,1,0,0,,none,\n",  # line 3
                f"{items[1].public_id},maybe,0,0,,none,\n",  # line 4
                f"{items[2].public_id},1,0,0,,other,\n",  # line 5: other without note
                f"{farming.public_id},1,0,0,weather;tractors galore,none,\n",  # line 6: unknown tag
                f"{items[0].public_id},0,0,0,,none,\n",  # line 7: second label of item 0 by the same annotator
                f'{items[3].public_id},1,0,0,,none,"a note\nover two lines"\n',  # lines 8-9: fine
                f"{items[4].public_id},1,0,0,,bogus,\n",  # line 10
                f'{items[5].public_id},1,0,0,,other,"   \n  "\n',  # lines 11-12: a blank note
            ]
        )
    )
    before = _snapshot()
    with pytest.raises(CommandError) as info:
        call_command(
            "import_labels",
            demo_study.slug,
            str(_write(tmp_path, text)),
            "--annotator",
            "sheet-team",
        )
    message = str(info.value)
    assert "nothing was imported" in message
    for line, words in [
        (3, "no item 'no-such-item'"),
        (4, "identified: 'maybe'"),
        (5, "exclusion_note"),
        (6, "tractors galore"),
        (7, "already labeled by 'sheet-team' on line 2"),
        (10, "exclusion"),
        (11, "exclusion_note"),
    ]:
        assert f"line {line}: " in message and words in message, (line, message)
    for fine in (2, 8, 9, 12):
        assert f"line {fine}:" not in message
    assert _snapshot() == before


def test_clean_import_labels_items_and_feeds_agreement(demo_study, answered, tmp_path):
    """A clean file creates annotations for two annotators; agreeing items get final labels."""
    items_sync(study=demo_study)
    items = _ids(demo_study)
    rows = [HEADER.replace("\n", ",annotator\n")]
    for item in items:
        rows.append(f"{item.public_id},yes,no,no,,none,,sheet-a\n")
        rows.append(
            f"{item.public_id},{'yes' if item.setting.kind == 'main' else 'no'},no,no,,,,sheet-b\n"
        )
    out = call_command_output(demo_study, _write(tmp_path, "".join(rows)))
    assert "Imported 12 new and 0 changed" in out
    assert Annotation.objects.filter(source="import").count() == 12
    assert FinalLabel.objects.filter(source="agreement").count() == 4  # the training items disagree
    assert set(
        User.objects.filter(username__startswith="sheet-").values_list("username", flat=True)
    ) == {"sheet-a", "sheet-b"}
    assert not User.objects.get(username="sheet-a").has_usable_password()
    # Importing again replaces the labels (last save wins) and keeps the history.
    out = call_command_output(demo_study, _write(tmp_path, "".join(rows)))
    assert "Imported 0 new and 12 changed" in out
    assert AnnotationRevision.objects.count() == 24


def test_import_refuses_a_third_annotator_with_k_two(demo_study, answered, annotators, tmp_path):
    """An item that already has k annotators cannot get another one from a file."""
    a, b, _ = annotators
    for user in (a, b):
        while (item := assignment_next(study=demo_study, annotator=user)) is not None:
            label_save(
                study=demo_study,
                annotator=user,
                public_id=item.public_id,
                label=LabelInput(
                    identified=True, surface_difference=False, no_difference=False
                ),
            )
    item = Item.objects.first()
    before = _snapshot()
    with pytest.raises(CommandError, match=r"line 2: item .* would have 3 annotators"):
        call_command(
            "import_labels",
            demo_study.slug,
            str(_write(tmp_path, HEADER + f"{item.public_id},1,0,0,,none,\n")),
            "--annotator",
            "late",
        )
    assert _snapshot() == before


def test_new_tags_can_be_added_on_request(demo_study, answered, tmp_path):
    """With --add-tags unknown tags join the codebook instead of being errors."""
    items_sync(study=demo_study)
    farming = Item.objects.filter(setting__key="farming").first()
    path = _write(tmp_path, HEADER + f"{farming.public_id},1,0,0,Weather; Tractors Galore ,none,\n")
    call_command("import_labels", demo_study.slug, str(path), "--annotator", "x", "--add-tags")
    assert Annotation.objects.get().tags == ["tractors galore", "weather"]
    assert CodebookTag.objects.filter(name="tractors galore", setting=farming.setting).exists()


def test_header_problems_are_reported(demo_study, tmp_path):
    """Missing columns or a missing annotator name stop the import at line 1."""
    with pytest.raises(CommandError, match="line 1: missing column"):
        call_command(
            "import_labels",
            demo_study.slug,
            str(_write(tmp_path, "item,identified\n")),
            "--annotator",
            "x",
        )
    with pytest.raises(CommandError, match="--annotator"):
        call_command("import_labels", demo_study.slug, str(_write(tmp_path, HEADER)))
    with pytest.raises(CommandError, match="no such file"):
        call_command(
            "import_labels", demo_study.slug, str(tmp_path / "missing.csv"), "--annotator", "x"
        )


def call_command_output(study, path):
    from io import StringIO

    out = StringIO()
    call_command("import_labels", study.slug, str(path), stdout=out)
    return out.getvalue()
