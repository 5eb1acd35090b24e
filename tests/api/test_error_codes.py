"""Every error code the apps can answer with is documented in docs/api.md, with its status.

The codes come from the classes themselves: every subclass of ``DomainError`` (after importing
every module of ``spotlight_study``), plus every ``code="..."`` that code passes when it raises
one. A new error class or code that docs/api.md does not list fails here, with the rows to add.
"""
from __future__ import annotations

import ast
import gc
import importlib
import pkgutil
import re
from pathlib import Path

import pytest
from rest_framework import exceptions as drf_exceptions

import spotlight_study
from spotlight_study.exceptions import DomainError

ROOT = Path(spotlight_study.__file__).resolve().parent
DOC = ROOT.parent / "docs" / "api.md"
# A row of the table of codes: | `code` | status | ...
ROW = re.compile(r"^\|\s*`(?P<code>[a-z0-9_]+)`\s*\|\s*(?P<status>\d{3})\s*\|", re.M)
# Modules that configure a process rather than define anything (importing them has effects).
NOT_IMPORTED = {"spotlight_study.wsgi", "spotlight_study.asgi", "spotlight_study.settings"}


def _import_every_module() -> None:
    """Import every module of ``spotlight_study`` except migrations, so every subclass exists."""
    for info in pkgutil.walk_packages([str(ROOT)], prefix="spotlight_study."):
        if ".migrations" in info.name or info.name in NOT_IMPORTED:
            continue
        importlib.import_module(info.name)


def _subclasses(cls: type) -> set[type]:
    out = set()
    for sub in cls.__subclasses__():
        out |= {sub} | _subclasses(sub)
    return out


def _documented() -> set[tuple[str, int]]:
    return {(m["code"], int(m["status"])) for m in ROW.finditer(DOC.read_text(encoding="utf-8"))}


def _class_codes() -> dict[tuple[str, int], set[str]]:
    """``{(code, http_status): {"app.errors.Class", ...}}`` of every DomainError subclass."""
    _import_every_module()
    codes: dict[tuple[str, int], set[str]] = {}
    for cls in _subclasses(DomainError):
        if not cls.__module__.startswith("spotlight_study."):
            continue  # a test's own subclass
        name = f"{cls.__module__.removeprefix('spotlight_study.')}.{cls.__qualname__}"
        codes.setdefault((cls.code, cls.http_status), set()).add(name)
    return codes


def _raised_codes(class_names: set[str]) -> dict[tuple[str, int | None], set[str]]:
    """``{(code, http_status or None): {"file:line", ...}}`` of the ``code="..."`` (and
    ``http_status=...``) keywords given to these classes where code raises them."""
    found: dict[tuple[str, int | None], set[str]] = {}
    for path in ROOT.rglob("*.py"):
        if "migrations" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if func not in class_names:
                continue
            given = {kw.arg: kw.value.value for kw in node.keywords if isinstance(kw.value, ast.Constant)}
            if isinstance(given.get("code"), str):
                status = given.get("http_status") if isinstance(given.get("http_status"), int) else None
                where = f"{path.relative_to(ROOT.parent)}:{node.lineno}"
                found.setdefault((given["code"], status), set()).add(where)
    return found


def test_every_domain_error_code_is_documented_with_its_status():
    """Each (code, http_status) of a DomainError subclass has a row in docs/api.md's table."""
    documented = _documented()
    missing = {key: names for key, names in _class_codes().items() if key not in documented}
    rows = "\n".join(
        f"| `{code}` | {status} | {', '.join(sorted(f'`{n}`' for n in names))} | R/A/P | ... |"
        for (code, status), names in sorted(missing.items())
    )
    assert not missing, f"docs/api.md does not list these error codes; add the rows:\n{rows}"


def test_every_code_passed_when_raising_is_documented():
    """A ``code="..."`` given to a DomainError class where it is raised is in docs/api.md too
    (with its ``http_status=`` when that is given as well)."""
    _import_every_module()
    classes = {"DomainError"} | {cls.__name__ for cls in _subclasses(DomainError)}
    documented = _documented()
    documented_codes = {code for code, _ in documented}
    missing = {
        key: where
        for key, where in _raised_codes(classes).items()
        if (key not in documented if key[1] is not None else key[0] not in documented_codes)
    }
    assert not missing, f"docs/api.md does not list these codes given where errors are raised: {missing}"


def test_the_table_lists_no_code_that_nothing_raises():
    """Every documented code is a DomainError code or one of DRF's (no stale rows)."""
    known = {code for code, _ in _class_codes()}
    known |= {code for code, _ in _raised_codes({"DomainError"} | {c.__name__ for c in _subclasses(DomainError)})}
    known |= {cls.default_code for cls in _subclasses(drf_exceptions.APIException) | {drf_exceptions.APIException}}
    stale = sorted({code for code, _ in _documented()} - known)
    assert not stale, f"docs/api.md lists codes that no error class has: {stale}"


def test_the_checks_see_a_new_undocumented_code():
    """A new app error class with an unlisted code is found and reported missing (not vacuous)."""

    class Undocumented(DomainError):
        code = "surely_not_documented"
        http_status = 418

    Undocumented.__module__ = "spotlight_study.someapp.errors"  # as if an app defined it
    try:
        names = _class_codes().get(("surely_not_documented", 418), set())
        assert any(name.startswith("someapp.errors.") for name in names)
        assert ("surely_not_documented", 418) not in _documented()
    finally:  # no other test may see the class: drop the last reference
        del Undocumented
        gc.collect()


@pytest.mark.parametrize("status", [400, 404, 409, 502])
def test_the_table_has_rows_for_the_statuses_the_apps_use(status):
    """The table is parsed at all: it has rows for each status the apps answer with."""
    assert any(s == status for _, s in _documented())
