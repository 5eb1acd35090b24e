"""``import_study`` refuses hostile study files cheaply: a billion-laughs YAML file, nesting past
32 levels (YAML and JSON), a 100,000-digit integer and a text over 20,000 characters are each
refused before any value is built from them, having read at most the file's own characters,
within 200 MB, naming the file and the problem, with no traceback, and nothing is imported.

Each file is imported by ``manage.py import_study`` in a subprocess, which counts what the
command did: the characters it read from the file, the Python values the YAML constructor or the
JSON object hook built, the scalars the size check looked at (each once, however far aliases
would expand them), the process's peak resident memory (``VmHWM``) and what the command added
to it. None of these depends on the machine's speed. The command's wall time is printed only; the speed target (each
file refused within 2 s) is ``bench/hostile_files.py``'s.
"""
from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from spotlight_study.studies.file_limits import MAX_FILE_BYTES
from spotlight_study.studies.models import Study

from ..processes import run_python
from ..stimuli.conftest import subprocess_env
from .hostile_files import CASES, DEMO_FILE, demo_with

RUN = """
import pathlib, sys, time, django
django.setup()
from django.core.management import call_command
from django.core.management.base import CommandError
import yaml
from spotlight_study.studies import file_limits, schema

def peak_kb():
    # VmHWM: this process's peak resident memory (ru_maxrss can carry the parent's over fork).
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

counts = {"chars_read": 0, "values_built": 0, "scalars_checked": 0}

def counted(name, function, measure=lambda result: 1):
    def wrapper(*args, **kwargs):
        result = function(*args, **kwargs)
        counts[name] += measure(result)
        return result
    return wrapper

# Wrappers that count and call the real function: nothing the command does is replaced.
pathlib.Path.read_text = counted("chars_read", pathlib.Path.read_text, len)
yaml.constructor.BaseConstructor.construct_object = counted(
    "values_built", yaml.constructor.BaseConstructor.construct_object)
schema._json_object_without_duplicates = counted("values_built", schema._json_object_without_duplicates)
file_limits._text_check = counted("scalars_checked", file_limits._text_check)

baseline_kb = peak_kb()
start = time.monotonic()
try:
    call_command("import_study", sys.argv[1])
    outcome = "imported"
except CommandError as exc:
    outcome = "refused: " + str(exc)
elapsed = time.monotonic() - start
print(f"ELAPSED {elapsed:.3f}")
print(f"PEAK_KB {peak_kb()} BASE_KB {baseline_kb}")
print("COUNTS " + " ".join(f"{k}={v}" for k, v in counts.items()))
print(outcome)
"""


@dataclass
class Imported:
    """What ``import_study`` did with one file (counted in its process, see the module doc)."""

    out: str
    seconds: float = float("inf")
    peak_mb: float = float("inf")
    added_mb: float = float("inf")
    counts: dict[str, int] = field(default_factory=dict)


def _import(path: Path) -> Imported:
    """Run ``import_study path`` in a subprocess and read what it reported."""
    try:
        out = run_python("-c", RUN, str(path), env=subprocess_env(LOG_LEVEL="WARNING"), timeout=60,
                         merge_stderr=True).stdout
    except subprocess.TimeoutExpired:
        pytest.fail(f"import_study {path.name} ran for over 60 s")  # a hang, not a speed target
    result = Imported(out=out)
    if "ELAPSED " in out:
        result.seconds = float(out.split("ELAPSED ")[1].split()[0])
    if "PEAK_KB " in out:
        peak_kb, base_kb = (int(v) for v in out.split("PEAK_KB ")[1].split()[0:3:2])
        result.peak_mb, result.added_mb = peak_kb / 1024, (peak_kb - base_kb) / 1024
    if "COUNTS " in out:
        line = out.split("COUNTS ")[1].splitlines()[0]
        result.counts = {k: int(v) for k, v in (pair.split("=") for pair in line.split())}
    return result


def _scalars(text: str) -> int:
    """How many scalars (texts, numbers, keys) the file itself spells out: an upper bound on the
    scalars a check that never follows an alias twice can look at. Counted from the file's text
    (a generous bound: every run of characters between YAML or JSON punctuation)."""
    return len(re.findall(r"[^\s\[\]{},:]+", text)) + 1


@pytest.mark.parametrize("name", list(CASES))
def test_a_hostile_study_file_is_refused_before_anything_is_built(transactional_db, tmp_path, name):
    """Each hostile file: refused having built no value and read at most its own characters,
    under 200 MB, message naming the file and the problem, no traceback, no study."""
    make, problem = CASES[name]
    path = tmp_path / name
    text = make()
    path.write_text(text)
    size = path.stat().st_size
    result = _import(path)
    out = result.out
    print(f"{name}: {size:,} bytes, {result.seconds:.3f} s (printed, not asserted), peak "
          f"{result.peak_mb:.0f} MB (Django's start included), {result.added_mb:.1f} MB added by the "
          f"command; {result.counts}")
    assert "refused: " in out, out[-2000:]
    assert name in out and problem in out, out[-2000:]
    assert "Traceback" not in out
    counts = result.counts
    assert set(counts) == {"chars_read", "values_built", "scalars_checked"}, out[-2000:]
    assert counts["values_built"] == 0  # refused before the YAML constructor or JSON built anything
    if size > MAX_FILE_BYTES:
        assert counts["chars_read"] == 0 and counts["scalars_checked"] == 0  # refused on its size, unread
    else:
        assert counts["chars_read"] == len(text)  # read once, and only this file
        # However far the aliases would expand (10**9 values for the billion laughs), the check
        # looks at no more scalars than the file spells out.
        assert counts["scalars_checked"] <= _scalars(text)
    assert result.peak_mb < 200 and result.added_mb < 50
    assert not Study.objects.exists()


def test_the_demo_file_is_within_every_limit(db):
    """The demo study file (which uses every field) passes the limits and imports."""
    from spotlight_study.studies.schema import parse_study_file
    from spotlight_study.studies.services import study_import

    study_import(data=parse_study_file(DEMO_FILE))
    assert Study.objects.count() == 1


def test_the_json_api_body_is_checked_too(db):
    """A study sent as data (the API's JSON route) with a 30,000-character text is refused by
    validation, naming the limit."""
    from spotlight_study.studies.errors import StudyFileError
    from spotlight_study.studies.schema import validate_study_data

    with pytest.raises(StudyFileError, match="30,000 characters; at most 20,000"):
        validate_study_data(demo_with(consent_text="c" * 30_000))
    json.dumps(demo_with())  # the demo data itself is plain JSON
