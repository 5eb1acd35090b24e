"""``import_study`` refuses hostile study files quickly and cheaply: a billion-laughs YAML file,
nesting past 32 levels (YAML and JSON), a 100,000-digit integer and a text over 20,000
characters are each refused within 2 s and 200 MB, naming the file and the problem, with no
traceback, and nothing is imported.

Each file is imported by ``manage.py import_study`` in a subprocess; its wall time (around the
command, without Python's start) the process's peak resident memory (``VmHWM``) and what the command added to it are measured.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from spotlight_study.studies.models import Study

from ..conftest import DEMO_FILE
from ..processes import run_python
from ..stimuli.conftest import subprocess_env

RUN = """
import sys, time, django
django.setup()
from django.core.management import call_command
from django.core.management.base import CommandError
def peak_kb():
    # VmHWM: this process's peak resident memory (ru_maxrss can carry the parent's over fork).
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
baseline_kb = peak_kb()
start = time.monotonic()
try:
    call_command("import_study", sys.argv[1])
    outcome = "imported"
except CommandError as exc:
    outcome = "refused: " + str(exc)
print(f"ELAPSED {time.monotonic() - start:.3f}")
print(f"PEAK_KB {peak_kb()} BASE_KB {baseline_kb}")
print(outcome)
"""


def _demo_with(**changes) -> dict:
    data = yaml.safe_load(DEMO_FILE.read_text())
    data.update(changes)
    return data


def billion_laughs() -> str:
    """The demo file whose first main setting's group 1 is nine levels of ten aliases each:
    10**9 texts once expanded, about 20 KB on disk."""
    lines = ['x-lol-a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in "bcdefghi":
        prev = chr(ord(level) - 1)
        lines.append(f"x-lol-{level}: &{level} [{','.join(['*' + prev] * 10)}]")
    data = _demo_with(slug="laughs")
    data["settings"][0]["group1"] = "LAUGHS"
    demo = yaml.safe_dump(data, sort_keys=False).replace("group1: LAUGHS", "group1: *i", 1)
    return "\n".join(lines) + "\n" + demo


CASES = {
    "billion-laughs.yaml": (billion_laughs, "aliases expand to more than 100,000 values"),
    "deep.yaml": (lambda: "slug: deep\nx: " + "[" * 10_000 + "]" * 10_000 + "\n", "nested more than 32 levels"),
    "deep-block.yaml": (
        lambda: "slug: deep\n" + "".join(f"{'  ' * i}k{i}:\n" for i in range(60)) + "  " * 60 + "v: 1\n",
        "nested more than 32 levels",
    ),
    "deep.json": (lambda: '{"slug": "deep", "x": ' + "[" * 10_000 + "]" * 10_000 + "}", "nested"),
    "big-int.yaml": (lambda: "slug: bigint\ntarget_sample_size: " + "9" * 100_000 + "\n", "integer (line 2) has 100,000 digits"),
    "big-int.json": (lambda: '{"slug": "bigint", "target_sample_size": ' + "9" * 100_000 + "}", "integer has 100,000 digits"),
    "long-prompt.yaml": (  # the longest text a file within the size limit can hold
        lambda: yaml.safe_dump(_demo_with(task_prompt="x" * 500_000), width=80),
        "has 500,000 characters; at most 20,000",
    ),
    "huge.yaml": (lambda: yaml.safe_dump(_demo_with(task_prompt="x" * 10_000_000)), "bytes; a study file may have at most 524,288"),
    "recursive.yaml": (lambda: "slug: r\nx: &x [1, *x]\n", "alias refers to the value that contains it"),
}


def _import(path: Path) -> tuple[float, float, float, str]:
    """(seconds inside the command, peak MB of the process, MB the command added to the peak,
    its output) of ``import_study path``."""
    try:
        out = run_python("-c", RUN, str(path), env=subprocess_env(LOG_LEVEL="WARNING"), timeout=60,
                         merge_stderr=True).stdout
    except subprocess.TimeoutExpired:
        pytest.fail(f"import_study {path.name} ran for over 60 s")
    elapsed = float(out.split("ELAPSED ")[1].split()[0]) if "ELAPSED " in out else float("inf")
    if "PEAK_KB " not in out:
        return elapsed, float("inf"), float("inf"), out
    peak_kb, base_kb = (int(v) for v in out.split("PEAK_KB ")[1].split()[0:3:2])
    return elapsed, peak_kb / 1024, (peak_kb - base_kb) / 1024, out


@pytest.mark.parametrize("name", list(CASES))
def test_a_hostile_study_file_is_refused_within_2_s_and_200_mb(transactional_db, tmp_path, name):
    """Each hostile file: refused in under 2 s, under 200 MB, message naming the file and the
    problem, no traceback, no study."""
    make, problem = CASES[name]
    path = tmp_path / name
    path.write_text(make())
    elapsed, peak_mb, added_mb, out = _import(path)
    print(f"{name}: {path.stat().st_size:,} bytes, {elapsed:.3f} s, peak {peak_mb:.0f} MB "
          f"(Django's start included), {added_mb:.1f} MB added by the command")
    assert "refused: " in out, out[-2000:]
    assert name in out and problem in out, out[-2000:]
    assert "Traceback" not in out
    assert elapsed < 2.0
    assert peak_mb < 200 and added_mb < 50
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
        validate_study_data(_demo_with(consent_text="c" * 30_000))
    json.dumps(_demo_with())  # the demo data itself is plain JSON
