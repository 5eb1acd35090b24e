"""The outputs of analysis runs in Django's storage named ``analysis`` (``STORAGES``).

The analysis package (``analysis/``, no Django) writes into a directory; this module copies that
directory into the storage, where every server finds it (the file system under ``var/`` on one
server, an S3-compatible store for several: docs/scaling.md), and reads it back for the views
and the zip download. Only the storage API is used (``save``, ``open``, ``delete``,
``exists``), so any backend works.
"""
from __future__ import annotations

import io
import zipfile
from pathlib import Path

from django.core.files import File
from django.core.files.storage import Storage, storages

#: Directories of a run's output that are not stored: ``data/`` is the export that was analysed
#: (participants' answers), which the export pages serve under their own rules.
NOT_STORED = ("data",)


def analysis_storage() -> Storage:
    """The storage named ``analysis`` in ``STORAGES`` (settings.py)."""
    return storages["analysis"]


def run_prefix(*, slug: str, run_id: int) -> str:
    """Where run ``run_id`` of study ``slug`` keeps its files: ``analysis/<slug>/<run_id>/``."""
    return f"analysis/{slug}/{run_id}/"


def outputs_store(*, source_dir: str | Path, prefix: str) -> list[dict]:
    """Copy every file under ``source_dir`` (but :data:`NOT_STORED`) to the storage under ``prefix``.

    A file already stored under the same name (a run continued after its worker died) is
    replaced. Returns the manifest, ``[{"name": "figures/likert.svg", "size": bytes}]`` sorted
    by name (``/``-separated names relative to ``source_dir``). Raises ``OSError`` (or the
    backend's own error, e.g. botocore's ``ClientError``) if a file cannot be read or stored.
    """
    storage = analysis_storage()
    root = Path(source_dir)
    manifest = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        name = path.relative_to(root).as_posix()
        if name.split("/", 1)[0] in NOT_STORED:
            continue
        key = prefix + name
        if storage.exists(key):
            storage.delete(key)
        with path.open("rb") as fh:
            saved = storage.save(key, File(fh, name=path.name))
        if saved != key:  # a backend that renamed instead of replacing would lose the link
            raise OSError(f"the storage stored {key} as {saved}")
        manifest.append({"name": name, "size": path.stat().st_size})
    return manifest


def output_open(*, prefix: str, name: str) -> File:
    """The stored file ``name`` of the run at ``prefix``, opened for reading (binary).

    The caller checks ``name`` against the run's manifest first. Raises ``FileNotFoundError``
    (or the backend's error) if it is missing from the storage.
    """
    return analysis_storage().open(prefix + name, "rb")


def outputs_zip(*, prefix: str, names: list[str], folder: str) -> bytes:
    """A zip of the stored files ``names`` of the run at ``prefix``, inside the folder ``folder``.

    Built in memory: a run's outputs are a few megabytes (the figures twice, PNG and SVG).
    """
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in names:
            with output_open(prefix=prefix, name=name) as fh:
                archive.writestr(f"{folder}/{name}", fh.read())
    return buffer.getvalue()
