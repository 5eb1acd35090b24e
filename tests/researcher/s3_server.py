"""A real S3-compatible server for the tests: moto's server mode (Apache-2.0, test lock only),
on 127.0.0.1 at a free port, in a thread of the test process, with one empty bucket.

The app reaches it over HTTP through django-storages' S3 backend and boto3, exactly as it
would reach a production store (docs/scaling.md); nothing is mocked in the app's process.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass

import pytest

#: Credentials the server accepts (moto checks none); test-only values.
ACCESS_KEY = "test-access-key-not-secret"
SECRET_KEY = "test-secret-key-not-secret"
REGION = "us-east-1"


@dataclass(frozen=True)
class S3Store:
    """The running server's ``endpoint_url`` and its ``bucket``."""

    endpoint_url: str
    bucket: str

    def client(self):
        """A boto3 S3 client of this server (to look at what the app stored)."""
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint_url, region_name=REGION,
                            aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY)

    def keys(self) -> list[str]:
        """Every key in the bucket, sorted."""
        pages = self.client().get_paginator("list_objects_v2").paginate(Bucket=self.bucket)
        return sorted(obj["Key"] for page in pages for obj in page.get("Contents", []))

    def storage_settings(self) -> dict:
        """``STORAGES["analysis"]`` for the test process (the settings' ``s3`` branch, with
        the credentials as options rather than the environment)."""
        return {"BACKEND": "storages.backends.s3.S3Storage", "OPTIONS": {
            "bucket_name": self.bucket, "endpoint_url": self.endpoint_url, "region_name": REGION,
            "access_key": ACCESS_KEY, "secret_key": SECRET_KEY, "default_acl": None,
            "file_overwrite": True, "location": "spotlight"}}

    def environment(self) -> dict[str, str]:
        """The environment a server process needs to use this store (settings.py's ``s3``)."""
        return {"ANALYSIS_STORAGE": "s3", "ANALYSIS_S3_BUCKET": self.bucket,
                "ANALYSIS_S3_ENDPOINT_URL": self.endpoint_url, "ANALYSIS_S3_REGION": REGION,
                "ANALYSIS_S3_PREFIX": "spotlight",
                "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY}


@pytest.fixture
def s3_store():
    """moto's S3 server on 127.0.0.1 with an empty bucket; stopped after the test."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    store = S3Store(endpoint_url=f"http://{host}:{port}", bucket=f"analysis-{uuid.uuid4().hex[:12]}")
    store.client().create_bucket(Bucket=store.bucket)
    try:
        yield store
    finally:
        server.stop()
