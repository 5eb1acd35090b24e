"""import_study --replace with a study built partly in the browser: --dry-run lists the changes,
a setting the file lacks is kept unless --drop-missing, and a frozen study is copied through
export_study and --as-slug."""
from __future__ import annotations

import pytest
import yaml
from django.core.management import CommandError, call_command

from spotlight_study.participation.models import Participant
from spotlight_study.stimuli.models import SettingSource
from spotlight_study.studies.export import study_file_data, study_file_text
from spotlight_study.studies.models import Setting, Study, TokenPattern

from ..conftest import DEMO_FILE, Walker


def snapshot() -> dict:
    """Every row a replace could touch, every column (versions and timestamps included)."""
    return {
        model.__name__: sorted(model.objects.values(), key=lambda r: r["id"])
        for model in (Study, Setting, TokenPattern, SettingSource, Participant)
    }


def write(tmp_path, data: dict, name: str = "study.yaml"):
    path = tmp_path / name
    path.write_text(study_file_text(data), encoding="utf-8")
    return path


def test_dry_run_lists_every_change_by_key_and_changes_nothing(built_study, tmp_path, capsys, client):
    """--replace --dry-run names added, removed and changed settings and each changed field, old → new."""
    Study.objects.filter(pk=built_study.pk).update(status="live")
    Walker(client, "full-study").enter()  # an arrival who never consented: the replace would delete it
    assert Participant.objects.count() == 1
    data = study_file_data(built_study)  # the file says draft, as the study did
    data["title"] = "A new title"
    data["consent_text"] = data["consent_text"] + " One more sentence at the very end of the consent."
    data["settings"][0]["title"] = "Doctors"
    data["settings"][0]["distractor_patterns"].pop()
    data["annotation"]["settings"]["farming"]["tags"].append("soil")
    data["settings"] = [s for s in data["settings"] if s["key"] != "pronouns"]
    new = {**data["settings"][0], "key": "doctor-copy", "title": "Doctors again"}
    data["settings"].append(new)
    data["annotation"]["settings"]["doctor-copy"] = data["annotation"]["settings"].pop("pronouns")
    path = write(tmp_path, data)
    before = snapshot()

    with pytest.raises(CommandError) as info:
        call_command("import_study", str(path), "--replace", "--dry-run")
    out = capsys.readouterr().out
    assert snapshot() == before
    assert 'title: "Spotting differences between groups of AI-written texts" → "A new title"' in out
    assert 'status: "live" → "draft"' in out
    assert 'consent_text: "…message system." → "…message system. One more sentence at the very end of the c…"' in out
    assert "setting 'doctor-copy': added" in out
    assert "setting 'pronouns' (built on the Stimuli pages): removed (not in the file)" in out
    assert "setting 'doctor': changed" in out and '    title: "Dr. Smith and Dr. Li" → "Doctors"' in out
    assert '    distractor_patterns: 3 items → 2 items (removed: {"tokens": ["Smith"], "group": 2, "unchecked"' in out
    assert "setting 'farming': changed\n    annotation.tags: 6 items → 7 items (added: \"soil\")" in out
    assert "setting 'pronouns-hand': changed\n    position: 3 → 2" in out
    assert "Nothing was changed." in out
    assert "would be refused" in str(info.value) and "'pronouns' (built on the Stimuli pages)" in str(info.value)

    call_command("import_study", str(path), "--replace", "--drop-missing", "--dry-run")
    out = capsys.readouterr().out
    assert "It would delete with the old definition 0 pilot participant(s) and 1 arrival(s)" in out
    assert snapshot() == before


def test_dry_run_of_the_exported_file_shows_no_change(built_study, tmp_path, capsys):
    """The study's own exported file changes nothing; a new slug would create a study."""
    path = tmp_path / "study.yaml"
    call_command("export_study", "full-study", "--out", str(path))
    before = snapshot()
    call_command("import_study", str(path), "--replace", "--dry-run")
    assert "  no changes\n" in capsys.readouterr().out
    call_command("import_study", str(path), "--as-slug", "other", "--dry-run")
    out = capsys.readouterr().out
    assert "would create study 'other'" in out and "doctor, farming, pronouns, pronouns-hand" in out
    assert snapshot() == before


def test_replace_refuses_to_drop_a_browser_built_setting(built_study, tmp_path):
    """--replace with the original file keeps the built settings: refused, names them and export_study."""
    before = snapshot()
    with pytest.raises(CommandError) as info:
        call_command("import_study", str(DEMO_FILE), "--as-slug", "full-study", "--replace")
    message = str(info.value)
    assert "'pronouns' (built on the Stimuli pages), 'pronouns-hand' (built on the Stimuli pages)" in message
    assert "manage.py export_study full-study --out FILE" in message and "--drop-missing" in message
    assert snapshot() == before


def test_drop_missing_deletes_them_and_the_exported_file_keeps_them(built_study, tmp_path):
    """An edited export keeps the built settings with their provenance; --drop-missing drops them."""
    path = tmp_path / "study.yaml"
    call_command("export_study", "full-study", "--out", str(path))
    data = yaml.safe_load(path.read_text())
    data["title"] = "Edited in the file"
    write(tmp_path, data)
    study = Study.objects.get(slug="full-study")
    provenance = Setting.objects.get(study=study, key="pronouns").provenance
    call_command("import_study", str(path), "--replace")
    study.refresh_from_db()
    assert study.title == "Edited in the file"
    assert Setting.objects.get(study=study, key="pronouns").provenance == provenance

    call_command("import_study", str(DEMO_FILE), "--as-slug", "full-study", "--replace", "--drop-missing")
    assert sorted(study.settings.values_list("key", flat=True)) == ["angler", "doctor", "farming"]


def test_drop_missing_needs_replace(built_study):
    """--drop-missing without --replace is an error, before anything is read or changed."""
    with pytest.raises(CommandError, match="--drop-missing only applies with --replace"):
        call_command("import_study", str(DEMO_FILE), "--drop-missing")


def test_frozen_browser_built_study_is_copied_through_export_and_as_slug(built_study, client, tmp_path):
    """The freeze message says export_study first; the exported file imports under a new slug, built settings and all."""
    Study.objects.filter(pk=built_study.pk).update(status="live")
    walker = Walker(client, "full-study")
    walker.enter()
    walker.consent()
    path = tmp_path / "study.yaml"
    call_command("export_study", "full-study", "--out", str(path))
    before = snapshot()
    with pytest.raises(CommandError) as info:
        call_command("import_study", str(path), "--replace")
    assert "export_study full-study --out FILE" in str(info.value)
    assert "import_study FILE --as-slug NEW-SLUG" in str(info.value)
    assert snapshot() == before

    call_command("import_study", str(path), "--as-slug", "full-study-v2")
    copy = Study.objects.get(slug="full-study-v2")
    assert not copy.participants.exists()
    keys = list(copy.settings.filter(kind="main").order_by("position").values_list("key", flat=True))
    assert keys == ["doctor", "farming", "pronouns", "pronouns-hand"]
    assert copy.settings.get(key="pronouns").provenance == built_study.settings.get(key="pronouns").provenance
    Study.objects.filter(pk=copy.pk).update(status="live")
    walker = Walker(client, "full-study-v2")
    walker.enter()
    walker.consent()
    walker.instructions()
    walker.answer("The first group fishes by day, the second at night.")
    for task in range(4):  # the two settings of the file and the two built in the browser
        walker.answer(f"Group 2 says she, group 1 says he (task {task + 1}).")
    walker.survey()
    participant = copy.participants.get()
    assert participant.status == Participant.Status.COMPLETED
    assert participant.responses.filter(setting__key="pronouns").exists()


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "No such file"),
        ("slug: [unclosed", "Not valid YAML"),
        ("- a list", "The top level must be a mapping"),
        ("slug: full-study\ntitle: Only a title\n", "consent_text: This field is required."),
        ("FOLDER", "Cannot read"),
    ],
    ids=["missing file", "bad yaml", "not a mapping", "invalid file", "a folder"],
)
def test_dry_run_bad_input_is_a_clear_error_and_changes_nothing(built_study, tmp_path, content, message):
    """An unreadable or invalid file gives the import's message, no traceback, no change."""
    path = tmp_path / "study.yaml"
    if content == "FOLDER":
        path.mkdir()
    elif content is not None:
        path.write_text(content, encoding="utf-8")
    before = snapshot()
    with pytest.raises(CommandError) as info:
        call_command("import_study", str(path), "--replace", "--dry-run")
    assert message in str(info.value)
    assert snapshot() == before
