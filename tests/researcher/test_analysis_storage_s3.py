"""The analysis storage on a real S3-compatible server (moto's server mode on 127.0.0.1) through
django-storages' S3 backend: a run's outputs land in the bucket, and the views read them back."""
from __future__ import annotations

import pytest

from spotlight_study.researcher.models import AnalysisRun
from spotlight_study.stimuli.models import JobStatus

from ..annotation.conftest import make_user
from .analysis_helpers import annotate_demo_study, body, run_here, zip_names
from .s3_server import s3_store  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db


def test_a_run_on_s3_stores_every_output_in_the_bucket(client, demo_study, settings, s3_store,  # noqa: F811
                                                       tmp_path):
    """With the S3 backend, every stored output is an object under the run's prefix, nothing is
    written under ANALYSIS_ROOT, and the report, a figure and the zip come from the bucket."""
    settings.ANALYSIS_ROOT = tmp_path / "local-disk"
    settings.STORAGES = {**settings.STORAGES, "analysis": s3_store.storage_settings()}
    annotate_demo_study(demo_study)
    run, _ = run_here(demo_study)
    assert run.status == JobStatus.SUCCEEDED, run.error
    names = sorted(f["name"] for f in run.files)
    assert s3_store.keys() == sorted(f"spotlight/{run.storage_prefix}{n}" for n in names)
    assert not (tmp_path / "local-disk").exists()
    client.force_login(make_user("s3-researcher", "researchers"))
    report = client.get(f"/researcher/{demo_study.slug}/report/")
    assert report.status_code == 200 and run.input_sha256 in body(report).decode()
    base = f"/researcher/{demo_study.slug}/analysis/{run.pk}"
    assert body(client.get(f"{base}/files/figures/likert.png"))[:4] == b"\x89PNG"
    assert len(zip_names(client.get(f"{base}.zip").content)) == len(names)
    assert AnalysisRun.objects.count() == 1
