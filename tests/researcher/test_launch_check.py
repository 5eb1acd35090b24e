"""The launch check: manage.py launch_check and the researcher page's go/no-go list."""
from __future__ import annotations

from io import StringIO

import pytest
import yaml
from django.contrib.auth.models import Group, User
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from spotlight_study.participation.models import Participant
from spotlight_study.researcher.launch import GO, NO_GO, WARNING, launch_check
from spotlight_study.studies.models import StudyMember, TokenPattern
from spotlight_study.studies.selectors import study_get_with_settings
from spotlight_study.studies.services import study_import_file

from ..conftest import DEMO_FILE, Walker
from ..processes import free_port


def _annotators(n: int) -> None:
    group, _ = Group.objects.get_or_create(name="annotators")
    for i in range(n):
        User.objects.create_user(f"annotator-{i}", password="pw-for-tests-only").groups.add(group)


def _completed_pilot(client, slug: str) -> Participant:
    """A pilot participant who completed the whole flow (as `manage.py pilot` leaves one)."""
    walker = Walker(client, slug)
    walker.complete()
    participant = Participant.objects.get(prolific_pid=walker.pid)
    assert participant.status == Participant.Status.COMPLETED
    participant.is_pilot = True
    participant.save(update_fields=["is_pilot"])
    return participant


def _run(*args) -> tuple[str, int]:
    out = StringIO()
    try:
        call_command("launch_check", *args, stdout=out)
    except CommandError as exc:
        return out.getvalue(), exc.returncode
    return out.getvalue(), 0


def _free_port_url() -> str:
    return f"http://127.0.0.1:{free_port()}"  # nothing listens there


def _status(report, check: str) -> str:
    return next(item.status for item in report.items if item.check == check)


def test_demo_study_is_go_after_a_pilot(client, live_server, settings):
    """The demo study with k annotators, a webhook secret and a completed pilot prints "go"."""
    settings.PROLIFIC_WEBHOOK_SECRET = "webhook-secret-for-tests"
    study = study_import_file(path=DEMO_FILE)
    _annotators(study.annotators_per_item)
    out, code = _run(study.slug, "--base-url", live_server.url)
    assert code == 1 and "[no-go]   Pilot" in out and out.rstrip().endswith("no-go (1 blocking item(s))")
    _completed_pilot(client, study.slug)
    out, code = _run(study.slug, "--base-url", live_server.url)
    assert code == 0, out
    assert out.rstrip().splitlines()[-1] == "go"
    assert f"[go]      Study URL: {live_server.url}/s/{study.slug}/ answers (HTTP 400)." in out
    assert "[warning] Prolific link: Not linked" in out  # a warning, not a no-go


def test_typo_file_is_no_go_with_reasons(tmp_path, db):
    """launch_check on a study file with the issue's typos prints no-go and names each typo."""
    data = yaml.safe_load(DEMO_FILE.read_text())
    data["annotation"]["annotators_per_itme"] = data["annotation"].pop("annotators_per_item")
    data["settings"][0]["target_descripton"] = data["settings"][0].pop("target_description")
    data["titel"] = data.pop("title")
    data["settings"][0]["patterns"][0]["tokens"] = ["banana"]
    data["settings"][1]["patterns"][0]["group"] = 2
    path = tmp_path / "typos.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True))
    out, code = _run(str(path))
    assert code == 1
    assert out.rstrip().splitlines()[-1].startswith("no-go")
    for reason in (
        "annotation.annotators_per_itme: Unknown field. Did you mean `annotators_per_item`?",
        "settings[0].target_descripton: Unknown field. Did you mean `target_description`?",
        "titel: Unknown field. Did you mean `title`?",
        "settings[0].patterns[0]: `banana` occurs in none",
        "settings[1].patterns[0]: `maize, beans` occurs in",
    ):
        assert f"[no-go]   Study file: {reason}" in out


def test_valid_file_gets_design_warnings_and_timeout_check(tmp_path, db):
    """A valid study file shows its design warnings; a timeout below the maximum makes it invalid."""
    data = yaml.safe_load(DEMO_FILE.read_text())
    data["target_sample_size"] = 50
    path = tmp_path / "uneven.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True))
    out, code = _run(str(path))
    assert code == 0 and "[warning] Design: target_sample_size 50 is not a multiple of the 4 cells" in out
    data["abandonment_timeout_minutes"] = data["maximum_minutes"] - 15
    path.write_text(yaml.safe_dump(data, allow_unicode=True))
    out, code = _run(str(path))
    assert code == 1
    assert "[no-go]   Study file: abandonment_timeout_minutes: Must be at least maximum_minutes (45)" in out


def _bad_pattern(study):
    TokenPattern.objects.filter(setting__study=study, is_distractor=False, setting__key="farming").update(
        tokens=["maize", "banana"]
    )


def _same_codes(study):
    study.no_consent_code = study.completion_code
    study.save()


def _short_timeout(study):
    study.abandonment_timeout_minutes = study.maximum_minutes - 1
    study.save()


def _no_pilot(study):
    Participant.objects.filter(study=study, is_pilot=True).delete()


def _few_annotators(study):
    User.objects.filter(username="annotator-0").update(is_active=False)


@pytest.mark.parametrize(
    "breakage,check,words,path",
    [
        (_bad_pattern, "Token patterns", "`banana` occurs in none", "settings[1].patterns[0]"),
        (_same_codes, "Completion codes", "share a completion code", "completion_codes.no_consent"),
        (_short_timeout, "Abandonment timeout", "is shorter than maximum_minutes", "abandonment_timeout_minutes"),
        (_no_pilot, "Pilot", "No completed pilot participant", None),
        (_few_annotators, "Annotators", "needs k = 2 annotators", None),
    ],
    ids=["pattern", "codes", "timeout", "pilot", "annotators"],
)
def test_each_blocking_problem_is_a_no_go(client, demo_study, settings, breakage, check, words, path):
    """Each problem turns its own item to no-go, and only that item; a problem of the stored
    definition also names its path, as an import of the study's file would (issue 35)."""
    settings.PROLIFIC_WEBHOOK_SECRET = "webhook-secret-for-tests"
    _annotators(2)
    _completed_pilot(client, demo_study.slug)
    before = launch_check(study=study_get_with_settings(slug=demo_study.slug), check_url=False)
    assert _status(before, check) == GO
    breakage(demo_study)
    report = launch_check(study=study_get_with_settings(slug=demo_study.slug), check_url=False)
    assert not report.go
    definition = [f"Study definition: {path}"] if path else []
    assert [item.check for item in report.items if item.status == NO_GO] == [*definition, check]
    assert words in next(item.detail for item in report.items if item.check == check)


def test_unreachable_or_missing_study_url_is_no_go(demo_study, settings):
    """A base URL where nothing answers, or none at all, makes the URL check a no-go."""
    settings.PROLIFIC_STUDY_BASE_URL = ""
    report = launch_check(study=demo_study, base_url=_free_port_url(), timeout_s=2)
    assert _status(report, "Study URL") == NO_GO
    assert "cannot be reached" in next(i.detail for i in report.items if i.check == "Study URL")
    report = launch_check(study=demo_study)
    assert "set PROLIFIC_STUDY_BASE_URL" in next(i.detail for i in report.items if i.check == "Study URL")


def test_missing_webhook_secret_and_link_are_warnings(demo_study, settings):
    """Without a webhook secret or a Prolific link the items warn but do not block."""
    settings.PROLIFIC_WEBHOOK_SECRET = ""
    report = launch_check(study=demo_study, check_url=False)
    assert _status(report, "Webhook secret") == WARNING
    assert _status(report, "Prolific link") == WARNING


def test_researcher_page_shows_the_same_list(client, staff_client, demo_study):
    """The researcher study page lists the launch check items with their results."""
    page = staff_client.get(f"/researcher/{demo_study.slug}/").content.decode()
    assert 'id="launch-check"' in page and "Before you launch: no-go" in page
    report = launch_check(study=study_get_with_settings(slug=demo_study.slug), check_url=False)
    for item in report.items:
        assert f"<td>{item.check}</td><td><strong>{item.label}</strong></td>" in page
    assert "?launch=full" in page


def test_full_check_on_the_page_fetches_the_study_url(staff_client, demo_study, settings):
    """?launch=full fetches the study URL from the configured public origin."""
    settings.PROLIFIC_STUDY_BASE_URL = _free_port_url()
    page = staff_client.get(f"/researcher/{demo_study.slug}/?launch=full").content.decode()
    assert "<td>Study URL</td><td><strong>no-go</strong></td>" in page
    assert "cannot be reached" in page


@pytest.mark.own_membership
def test_demo_setup_prints_k_annotator_logins(db, demo_data, tmp_path):
    """demo_setup creates and prints one annotator login per annotator k needs, plus the
    adjudicator, and makes them members of the study in their role (without the test shim that
    makes global-group users members of every study): a second run changes nothing."""
    demo_data["annotation"]["annotators_per_item"] = 3
    path = tmp_path / "k3.yaml"
    path.write_text(yaml.safe_dump(demo_data, allow_unicode=True))
    call_command("import_study", str(path), "--as-slug", "k-three", stdout=StringIO())
    out = StringIO()
    call_command("demo_setup", "--slug", "k-three", stdout=out)
    text = out.getvalue()
    for name in ("annotator1", "annotator2", "annotator3", "adjudicator", "researcher"):
        assert f"user '{name}'" in text
    assert "annotator4" not in text
    annotators = User.objects.filter(groups__name="annotators", is_active=True)
    assert sorted(annotators.values_list("username", flat=True)) == ["annotator1", "annotator2", "annotator3"]
    report = launch_check(study=study_get_with_settings(slug="k-three"), check_url=False)
    assert _status(report, "Annotators") == GO
    call_command("demo_setup", "--slug", "k-three", stdout=StringIO())
    members = StudyMember.objects.filter(study__slug="k-three")
    assert sorted(members.values_list("user__username", "role")) == [
        ("adjudicator", "adjudicator"), ("annotator1", "annotator"), ("annotator2", "annotator"),
        ("annotator3", "annotator"),
    ]
    client = Client()
    client.force_login(User.objects.get(username="annotator1"))
    assert client.get(reverse("annotation:queue", args=["k-three"])).status_code == 200


def test_rejecting_failed_checks_is_a_warning(demo_study):
    """Review that rejects failed instruction checks warns (Prolific prefers a return); asking
    for a return is go."""
    from spotlight_study.prolific.models import ProlificStudy

    ps = ProlificStudy.objects.create(
        study=demo_study, prolific_id="a" * 24, failed_check_review="reject", rejection_category="FAILED_CHECK",
    )
    report = launch_check(study=demo_study, check_url=False)
    assert _status(report, "Failed checks") == WARNING
    detail = next(i.detail for i in report.items if i.check == "Failed checks")
    assert "reject only with" in detail and "--failed-check-review request_return" in detail
    ProlificStudy.objects.filter(pk=ps.pk).update(failed_check_review="request_return")
    assert _status(launch_check(study=demo_study, check_url=False), "Failed checks") == GO


def test_a_study_without_main_setting_is_a_no_go(demo_study):
    """A study whose main settings are gone is a no-go (it was only a design warning), and the
    stored definition names the path an import would refuse: settings."""
    from spotlight_study.studies.models import Setting

    Setting.objects.filter(study=demo_study, kind=Setting.Kind.MAIN).delete()
    report = launch_check(study=study_get_with_settings(slug=demo_study.slug), check_url=False)
    no_go = {item.check: item.detail for item in report.items if item.status == NO_GO}
    assert "no main setting" in no_go["Main settings"]
    assert no_go["Study definition: settings"] == "Ensure this field has at least 1 elements."


def test_a_valid_stored_definition_is_go(demo_study):
    """The demo study as imported passes the stored-definition check, and says so."""
    report = launch_check(study=study_get_with_settings(slug=demo_study.slug), check_url=False)
    assert _status(report, "Study definition") == GO
    assert _status(report, "Main settings") == GO
