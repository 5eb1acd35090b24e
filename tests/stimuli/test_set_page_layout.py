"""The stimulus set page: its jobs, told apart, come before the outputs; the nav links to /stimuli/."""
from spotlight_study.stimuli.models import MiningJob
from spotlight_study.stimuli.services import mining_job_create


def test_jobs_with_progress_come_before_the_outputs(staff_client, mined_job):
    """The job table (with progress) precedes the long output preview on the set page."""
    html = staff_client.get(f"/stimuli/sets/{mined_job.stimulus_set_id}/").content.decode()
    jobs, progress, outputs = html.index('id="mining-jobs"'), html.index('class="progress"'), html.index("First outputs")
    assert jobs < progress < outputs


def test_jobs_are_told_apart_by_number_date_and_parameters(staff_client, mined_job):
    """Two jobs of the same method show their number, start date and parameters, newest first."""
    second = mining_job_create(stimulus_set=mined_job.stimulus_set, method="ctfidf", params={"top_k": 7})
    html = staff_client.get(f"/stimuli/sets/{mined_job.stimulus_set_id}/").content.decode()
    table = html.split('id="mining-jobs"')[1].split("</table>")[0]
    assert table.index(f"#{second.pk}") < table.index(f"#{mined_job.pk}")
    assert "<code>top_k=7</code>" in table
    assert MiningJob.objects.get(pk=mined_job.pk).params
    for name, value in MiningJob.objects.get(pk=mined_job.pk).params.items():
        assert f"<code>{name}={value}</code>" in table


def test_nav_links_to_stimuli(staff_client, db):
    """The researcher home's nav links to the stimuli pages."""
    html = staff_client.get("/researcher/").content.decode()
    nav = html.split('<nav class="site-nav"')[1].split("</nav>")[0]
    assert 'href="/stimuli/"' in nav
