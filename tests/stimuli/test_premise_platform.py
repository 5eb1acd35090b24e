"""Premise on a platform PyPremise ships no program for: a clear message naming c-TF-IDF, from the
mining function, the job service, the mining command, the Stimuli pages and the launch check,
before any job starts. Other platforms are simulated through ``platform.machine()``."""
from __future__ import annotations

import platform
import sys

import pytest
from django.core.management import CommandError, call_command

from spotlight_study.researcher.launch import WARNING, launch_check
from spotlight_study.stimuli.errors import MiningError, StimuliError
from spotlight_study.stimuli.importers import ImportedGroups
from spotlight_study.stimuli.jobs.runner import job_run_now
from spotlight_study.stimuli.mining import mine_premise, premise_platform_problem
from spotlight_study.stimuli.models import JobStatus, MiningJob
from spotlight_study.stimuli.services import mining_job_create, stimulus_set_import
from spotlight_study.stimuli.tasks import MINING
from spotlight_study.studies.selectors import study_get_with_settings

HERE_SUPPORTED = premise_platform_problem(platform.machine(), sys.platform) is None


@pytest.fixture
def on_arm_linux(monkeypatch):
    """This process reports an aarch64 Linux machine (an ARM server) from now on."""
    monkeypatch.setattr(platform, "machine", lambda: "aarch64")
    monkeypatch.setattr(sys, "platform", "linux")


@pytest.fixture(autouse=True)
def manual_runner(settings):
    """Jobs are run by the test itself."""
    settings.STIMULI_JOB_RUNNER = "manual"


@pytest.mark.parametrize("machine,system", [("x86_64", "linux"), ("AMD64", "linux"),
                                            ("arm64", "darwin"), ("AMD64", "win32")])
def test_platforms_with_a_premise_program_have_no_problem(machine, system):
    """x86-64 Linux (and the macOS/Windows programs pypremise also ships): no problem."""
    assert premise_platform_problem(machine, system) is None


@pytest.mark.parametrize("machine,system", [("aarch64", "linux"), ("armv7l", "linux"),
                                            ("ppc64le", "linux"), ("x86_64", "darwin"), ("", "linux")])
def test_other_platforms_get_a_message_naming_c_tf_idf(machine, system):
    """ARM or POWER Linux, Intel macOS, an unknown machine: the message names the platform,
    x86-64 Linux and c-TF-IDF."""
    message = premise_platform_problem(machine, system)
    assert message and "c-TF-IDF" in message and "x86-64 Linux" in message and system in message
    assert (machine or "unknown machine") in message


def test_mine_premise_fails_at_once_on_arm_linux(on_arm_linux):
    """mine_premise raises MiningError with the message, without running the Premise program."""
    with pytest.raises(MiningError, match="c-TF-IDF"):
        mine_premise([["he", "smiles"]] * 3, [["she", "smiles"]] * 3)


def _set():
    g1 = [f"He treats patient {i}." for i in range(10)]
    g2 = [f"She treats patient {i}." for i in range(10)]
    return stimulus_set_import(title="pronouns", groups=ImportedGroups(g1, g2))


@pytest.mark.django_db
def test_no_premise_job_is_created_on_arm_linux_but_c_tf_idf_runs(on_arm_linux):
    """mining_job_create(method=premise) raises StimuliError and stores no job; a c-TF-IDF job
    on the same set succeeds."""
    stimulus_set = _set()
    with pytest.raises(StimuliError, match="c-TF-IDF"):
        mining_job_create(stimulus_set=stimulus_set, method="premise")
    assert not MiningJob.objects.exists()
    job = mining_job_create(stimulus_set=stimulus_set, method="ctfidf")
    job_run_now(MINING, job_id=job.pk)
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED and job.patterns.exists(), job.error


@pytest.mark.django_db
def test_a_premise_job_queued_elsewhere_fails_with_the_message(on_arm_linux, monkeypatch):
    """A Premise job queued by an x86-64 web server and run by an ARM worker fails at once,
    its error the message."""
    stimulus_set = _set()
    with monkeypatch.context() as m:
        m.setattr(platform, "machine", lambda: "x86_64")
        job = mining_job_create(stimulus_set=stimulus_set, method="premise")
    job_run_now(MINING, job_id=job.pk)
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED and "c-TF-IDF" in job.error, (job.status, job.error)


def test_mine_patterns_command_says_so(on_arm_linux, tmp_path):
    """manage.py mine_patterns --method premise: CommandError with the message."""
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("He treats.\nHe smiles.\n")
    b.write_text("She treats.\nShe smiles.\n")
    with pytest.raises(CommandError, match="c-TF-IDF"):
        call_command("mine_patterns", str(a), str(b), "--method", "premise", "--out", str(tmp_path / "p.json"))


@pytest.mark.django_db
def test_stimuli_pages_say_so_and_the_form_starts_on_c_tf_idf(staff_client, on_arm_linux):
    """The set list and a set's page show the message; the form's method is c-TF-IDF; posting
    Premise anyway shows the message and queues nothing."""
    stimulus_set = _set()
    for url in ("/stimuli/", f"/stimuli/sets/{stimulus_set.pk}/"):
        html = staff_client.get(url).content.decode()
        assert 'id="premise-platform"' in html and "c-TF-IDF" in html and "aarch64" in html, url
    html = staff_client.get(f"/stimuli/sets/{stimulus_set.pk}/").content.decode()
    assert '<option value="ctfidf" selected>' in html
    response = staff_client.post(f"/stimuli/sets/{stimulus_set.pk}/mine/", {"method": "premise"}, follow=True)
    assert "Premise cannot run on this server" in response.content.decode()
    assert not MiningJob.objects.exists()


@pytest.mark.skipif(not HERE_SUPPORTED, reason="this machine itself has no Premise program")
@pytest.mark.django_db
def test_stimuli_pages_say_nothing_where_premise_runs(staff_client):
    """On x86-64 Linux, no platform note, and the form starts on Premise as before."""
    stimulus_set = _set()
    html = staff_client.get(f"/stimuli/sets/{stimulus_set.pk}/").content.decode()
    assert 'id="premise-platform"' not in html and '<option value="premise" selected>' in html


def test_launch_check_warns_on_arm_linux_and_not_on_x86_64(demo_study, monkeypatch):
    """The launch check adds a "Pattern mining" warning with the message on aarch64 (not a
    no-go: mining is not needed to run a study), and no such item on x86-64 Linux."""
    study = study_get_with_settings(slug=demo_study.slug)
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(platform, "machine", lambda: "x86_64")
    assert "Pattern mining" not in [i.check for i in launch_check(study=study, check_url=False).items]
    monkeypatch.setattr(platform, "machine", lambda: "aarch64")
    items = {i.check: i for i in launch_check(study=study, check_url=False).items}
    assert items["Pattern mining"].status == WARNING and "c-TF-IDF" in items["Pattern mining"].detail
