"""Hostile study files, made on demand: the cases of ``test_hostile_files.py`` and of
``bench/hostile_files.py`` (which times them). Plain Python and PyYAML, no pytest, no Django.

``CASES`` maps a file name to ``(make, problem)``: ``make()`` returns the file's text and
``problem`` is a part of the message ``import_study`` must refuse it with.
"""
from __future__ import annotations

from pathlib import Path

import yaml

DEMO_FILE = Path(__file__).resolve().parents[2] / "fixtures" / "spotlight-replication.yaml"


def demo_with(**changes) -> dict:
    """The demo study file's data with ``changes`` applied to its top-level fields."""
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
    data = demo_with(slug="laughs")
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
        lambda: yaml.safe_dump(demo_with(task_prompt="x" * 500_000), width=80),
        "has 500,000 characters; at most 20,000",
    ),
    # Plain concatenation: PyYAML's emitter took up to 2 minutes to write 10 MB on a busy machine.
    "huge.yaml": (lambda: DEMO_FILE.read_text() + "\nx-padding: " + "x" * 10_000_000 + "\n",
                  "bytes; a study file may have at most 524,288"),
    "recursive.yaml": (lambda: "slug: r\nx: &x [1, *x]\n", "alias refers to the value that contains it"),
}
