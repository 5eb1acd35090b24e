"""The web download: export.zip with the export's CSV files, the wide file and a README."""
from __future__ import annotations

import csv
import io
import zipfile

import pytest
from django.test import Client

from spotlight_study.results.exports import results_export
from spotlight_study.participation.models import Participant
from spotlight_study.participation.pilot import pilot_run
from spotlight_study.participation.selectors import participant_pseudonym

from ..annotation.conftest import make_user
from ..conftest import Walker
from .test_analyze import _annotate_all

EXPORT_FILES = ("responses.csv", "survey.csv", "participants.csv")


def _url(study) -> str:
    return f"/researcher/{study.slug}/export.zip"


def _zip(response) -> zipfile.ZipFile:
    assert response.status_code == 200, response.content[:300]
    assert response["Content-Type"] == "application/zip"
    return zipfile.ZipFile(io.BytesIO(response.content))


def _csv(archive: zipfile.ZipFile, name: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(archive.read(name).decode("utf-8"), newline="")))


@pytest.fixture
def study_with_data(demo_study):
    """The demo study with 3 real participants (2 completed, 1 at consent) and 4 pilots."""
    walkers = [Walker(Client(), demo_study.slug) for _ in range(3)]
    walkers[0].complete()
    walkers[1].complete(training="=HYPERLINK(\"http://x\")")
    walkers[2].enter()
    pilot_run(study=demo_study, participants=4)
    return demo_study


def test_zip_holds_exactly_what_export_results_writes(staff_client, study_with_data, tmp_path):
    """The three CSV files in the zip are byte for byte those of export_results."""
    archive = _zip(staff_client.get(_url(study_with_data)))
    assert sorted(archive.namelist()) == sorted(
        [*EXPORT_FILES, "participants_wide.csv", "README.txt"]
    )
    paths = results_export(study=study_with_data, out_dir=tmp_path)
    for name in EXPORT_FILES:
        assert archive.read(name) == paths[name.removesuffix(".csv")].read_bytes(), name
    # The formula-safe writer is in use (the training answer began with "=").
    assert "'=HYPERLINK" in archive.read("participants.csv").decode()


def test_wide_file_has_one_row_per_participant(staff_client, study_with_data):
    """participants_wide.csv: one row per participant, answers, times and survey side by side."""
    archive = _zip(staff_client.get(_url(study_with_data)))
    wide = _csv(archive, "participants_wide.csv")
    people = _csv(archive, "participants.csv")
    responses = _csv(archive, "responses.csv")
    survey = _csv(archive, "survey.csv")
    assert [r["participant"] for r in wide] == [r["participant"] for r in people]
    assert len(wide) == 3
    for r in responses:
        row = next(w for w in wide if w["participant"] == r["participant"])
        key = r["setting"]
        assert row[f"{key}_answer"] == r["answer"]
        assert row[f"{key}_condition"] == r["condition"]
        assert float(row[f"{key}_time_on_task_s"]) == pytest.approx(int(r["time_on_task_ms"]) / 1000)
        for label in ("identified", "other_difference", "no_difference", "excluded", "exclusion_reason"):
            assert row[f"{key}_{label}"] == r[label]
    for a in survey:
        row = next(w for w in wide if w["participant"] == a["participant"])
        assert row[f"survey_{a['condition']}_{a['item']}"] == a["response"]
    unfinished = next(w for w in wide if w["status"] == "in_progress")
    assert unfinished["doctor_answer"] == "" and unfinished["duration_s"] == ""
    assert all(float(w["duration_s"]) >= 0 for w in wide if w["status"] == "completed")


def test_wide_file_carries_final_labels(staff_client, demo_study):
    """Once answers have final labels, the wide file's label columns hold them."""
    for _ in range(2):
        Walker(Client(), demo_study.slug).complete()
    annotators = [make_user(f"dl-annotator{i}", "annotators") for i in range(2)]
    _annotate_all(demo_study, annotators, lambda r: r.position == 0 or r.pk % 2 == 0)
    archive = _zip(staff_client.get(_url(demo_study)))
    wide = _csv(archive, "participants_wide.csv")
    responses = _csv(archive, "responses.csv")
    assert {r["identified"] for r in responses} == {"0", "1"}
    for r in responses:
        row = next(w for w in wide if w["participant"] == r["participant"])
        assert row[f"{r['setting']}_identified"] == r["identified"]


def test_readme_names_every_column_of_every_file(staff_client, study_with_data):
    """README.txt describes each column present in each CSV file of the zip."""
    archive = _zip(staff_client.get(_url(study_with_data), {"include_pilot": "1"}))
    readme = archive.read("README.txt").decode()
    assert "(no description)" not in readme
    sections = readme.split("\n\n")
    for name in (*EXPORT_FILES, "participants_wide.csv"):
        header = next(csv.reader(io.StringIO(archive.read(name).decode())))
        section = next(s for s in sections if s.startswith(f"{name} ("))
        described = [line.split(":", 1)[0] for line in section.splitlines()[2:]]
        assert described == header, name


def test_pilot_is_left_out_unless_asked_for(staff_client, study_with_data):
    """Without include_pilot the zip has no pilot participant; with include_pilot=1 it has all."""
    pilots = {
        participant_pseudonym(study=study_with_data, prolific_pid=p.prolific_pid)
        for p in Participant.objects.filter(is_pilot=True)
    }
    assert len(pilots) == 4
    default = _zip(staff_client.get(_url(study_with_data)))
    for name in (*EXPORT_FILES, "participants_wide.csv"):
        assert not pilots & {r["participant"] for r in _csv(default, name)}, name
    assert "Pilot participants are left out." in default.read("README.txt").decode()
    response = staff_client.get(_url(study_with_data), {"include_pilot": "1"})
    assert "with-pilot" in response["Content-Disposition"]
    wide = _csv(_zip(response), "participants_wide.csv")
    assert pilots <= {r["participant"] for r in wide} and len(wide) == 7


def test_no_prolific_id_in_the_zip(staff_client, study_with_data):
    """No file of the zip contains a participant's Prolific ID."""
    archive = _zip(staff_client.get(_url(study_with_data), {"include_pilot": "1"}))
    text = "".join(archive.read(n).decode() for n in archive.namelist())
    for pid in Participant.objects.values_list("prolific_pid", flat=True):
        assert pid not in text


def test_bad_include_pilot_gives_a_message(staff_client, demo_study):
    """An include_pilot other than 0 or 1 sends back to the study page with a message."""
    response = staff_client.get(_url(demo_study), {"include_pilot": "yes"}, follow=True)
    assert response.status_code == 200
    assert "include_pilot must be 1" in response.content.decode()


def test_download_is_refused_to_anonymous_and_non_researchers(demo_study):
    """Anonymous visitors go to the login page; annotators and adjudicators get 403."""
    response = Client().get(_url(demo_study))
    assert response.status_code == 302 and "login" in response["Location"]
    for username, group in (("ann-dl", "annotators"), ("adj-dl", "adjudicators")):
        other = Client()
        other.force_login(make_user(username, group))
        assert other.get(_url(demo_study)).status_code == 403


def test_unknown_study_is_404(staff_client, db):
    """A download for a study that does not exist is a 404."""
    assert staff_client.get("/researcher/no-such-study/export.zip").status_code == 404


def test_study_page_links_the_downloads(staff_client, demo_study):
    """The study page links the zip (with and without pilot) and the annotation CSV files."""
    html = staff_client.get(f"/researcher/{demo_study.slug}/").content.decode()
    assert f'href="{_url(demo_study)}"' in html
    assert f'href="{_url(demo_study)}?include_pilot=1"' in html
    for name in ("annotations", "final_labels", "agreement"):
        href = f"/annotate/{demo_study.slug}/export/{name}.csv"
        assert f'href="{href}"' in html
        assert staff_client.get(href).status_code == 200


def test_study_file_download_is_the_export_and_imports_back(staff_client, demo_study, tmp_path):
    """Staff download <slug>.yaml (attachment), exactly what export_study writes; it imports as a copy."""
    from django.core.management import call_command

    from spotlight_study.studies.export import study_file_data, study_file_text
    from spotlight_study.studies.models import Study

    html = staff_client.get(f"/researcher/{demo_study.slug}/").content.decode()
    url = f"/researcher/{demo_study.slug}/study-file.yaml"
    assert f'href="{url}">Download study file</a>' in html
    response = staff_client.get(url)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/yaml; charset=utf-8"
    assert response["Content-Disposition"] == f'attachment; filename="{demo_study.slug}.yaml"'
    assert response["Cache-Control"] == "no-store"
    text = response.content.decode("utf-8")
    assert text == study_file_text(study_file_data(demo_study))
    path = tmp_path / "downloaded.yaml"
    path.write_text(text, encoding="utf-8")
    call_command("import_study", str(path), "--as-slug", "downloaded-copy")
    copy = Study.objects.get(slug="downloaded-copy")
    assert study_file_data(copy) == {**study_file_data(demo_study), "slug": "downloaded-copy"}


def test_study_file_download_is_for_staff_only(demo_study):
    """Researchers who are not staff get 403 and no link; anonymous visitors go to the login page."""
    url = f"/researcher/{demo_study.slug}/study-file.yaml"
    response = Client().get(url)
    assert response.status_code == 302 and "login" in response["Location"]
    for username, group in (("res-sf", "researchers"), ("ann-sf", "annotators"), ("adj-sf", "adjudicators")):
        other = Client()
        other.force_login(make_user(username, group))
        assert other.get(url).status_code == 403
    researcher = Client()
    researcher.force_login(make_user("res-sf-page", "researchers"))
    page = researcher.get(f"/researcher/{demo_study.slug}/")
    assert page.status_code == 200 and "Download study file" not in page.content.decode()


def test_study_file_of_an_unknown_study_is_404_and_of_a_broken_one_says_why(staff_client, demo_study):
    """No study: 404. A study without a training setting: back to its page with the reason, no file."""
    assert staff_client.get("/researcher/no-such-study/study-file.yaml").status_code == 404
    demo_study.settings.filter(kind="training").delete()
    response = staff_client.get(f"/researcher/{demo_study.slug}/study-file.yaml", follow=True)
    assert response.status_code == 200
    assert "has no training setting; a study file needs one. Nothing was downloaded." in response.content.decode()
