"""The house rules of docs/architecture.md, checked on the import graph.

- No import cycle between modules of ``spotlight_study`` and ``analysis``: every import counts,
  including the ones inside functions, because a lazy import only hides a cycle.
- The apps depend on each other only downwards, in the layers of ``[tool.importlinter]`` in
  pyproject.toml (checked by import-linter's layers contract).
- ``analysis`` imports neither Django nor ``spotlight_study``.
- No module is over 600 lines (migrations aside).

The graph is built by grimp, import-linter's graph library, from the source (nothing is imported).
"""
from __future__ import annotations

import logging
import re
from pathlib import Path

import grimp
import pytest
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

REPO = Path(__file__).resolve().parent.parent
MAX_LINES = 600


def _strongly_connected(graph: grimp.ImportGraph, modules: set[str]) -> list[list[str]]:
    """The strongly connected components of more than one module, sorted.

    Each component is a set of modules that import each other in a circle. Computed by
    ``scipy.sparse.csgraph.connected_components(connection="strong")``.
    """
    names = sorted(modules)
    position = {m: i for i, m in enumerate(names)}
    rows, cols = [], []
    for m in names:
        for imported in graph.find_modules_directly_imported_by(m) & modules:
            rows.append(position[m])
            cols.append(position[imported])
    matrix = csr_matrix(([1] * len(rows), (rows, cols)), shape=(len(names), len(names)))
    _, labels = connected_components(matrix, directed=True, connection="strong")
    groups: dict[int, list[str]] = {}
    for m, label in zip(names, labels):
        groups.setdefault(int(label), []).append(m)
    return sorted(g for g in groups.values() if len(g) > 1)


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("spotlight_study", "analysis", include_external_packages=True)


def _own_modules(graph: grimp.ImportGraph) -> set[str]:
    return {
        m
        for m in graph.modules
        if m.split(".")[0] in ("spotlight_study", "analysis") and ".migrations" not in m
    }


def test_no_import_cycle_between_modules(graph):
    cycles = _strongly_connected(graph, _own_modules(graph))
    assert cycles == [], "modules importing each other in a circle:\n" + "\n".join(
        " <-> ".join(c) for c in cycles
    )


def test_the_cycle_finder_finds_a_planted_cycle():
    g = grimp.ImportGraph()
    for m in ("p.a", "p.b", "p.c", "p.d"):
        g.add_module(m)
    g.add_import(importer="p.a", imported="p.b")
    g.add_import(importer="p.b", imported="p.c")
    g.add_import(importer="p.c", imported="p.a")
    g.add_import(importer="p.c", imported="p.d")
    assert _strongly_connected(g, set(g.modules)) == [["p.a", "p.b", "p.c"]]


def test_apps_depend_only_downwards():
    from importlinter import api

    # read_configuration + the CLI's exit code: 0 when every contract in pyproject.toml is kept.
    from importlinter.cli import lint_imports

    config = api.read_configuration(str(REPO / "pyproject.toml"))
    assert config["contracts_options"], "no import-linter contracts configured"
    # The CLI configures logging with dictConfig's default, which disables every logger that
    # exists: the app's own loggers stayed off for the rest of the worker's tests, and a later
    # test that reads a warning with caplog failed, or not, by the order the files ran in.
    loggers = [log for log in logging.root.manager.loggerDict.values() if isinstance(log, logging.Logger)]
    disabled = {log: log.disabled for log in loggers}
    try:
        assert lint_imports(config_filename=str(REPO / "pyproject.toml"), no_cache=True) == 0
    finally:
        for log, was in disabled.items():
            log.disabled = was
    assert not logging.getLogger("spotlight_study.stimuli.jobs.runner").disabled


def test_analysis_imports_no_django_and_no_app(graph):
    forbidden = [
        (m, imported)
        for m in _own_modules(graph)
        if m.startswith("analysis")
        for imported in graph.find_modules_directly_imported_by(m)
        if imported.split(".")[0] in ("django", "rest_framework", "spotlight_study")
    ]
    assert forbidden == []


def test_no_module_is_over_600_lines():
    too_long = []
    for top in ("spotlight_study", "analysis", "bench"):
        for path in sorted((REPO / top).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            n = len(path.read_text(encoding="utf-8").splitlines())
            if n > MAX_LINES:
                too_long.append(f"{path.relative_to(REPO)}: {n} lines")
    assert too_long == [], "split these by topic:\n" + "\n".join(too_long)


def test_the_documented_imports_of_analysis_are_the_real_ones(graph):
    """docs/architecture.md's dotted arrows ``X -.-> analysis`` name exactly the apps (and the
    kernel) whose modules import ``analysis`` directly."""
    kernel_modules = {"csvsafe", "exceptions", "identifiers", "errors", "log_scrubbing",
                      "navigation", "compiled_sql", "postgres_backend", "accounts", "middleware",
                      "login_protection"}
    importers = set()
    for m in _own_modules(graph):
        if not m.startswith("spotlight_study."):
            continue
        if any(i.split(".")[0] == "analysis" for i in graph.find_modules_directly_imported_by(m)):
            part = m.split(".")[1]
            importers.add("kernel" if part in kernel_modules else part)
    doc = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\s*(\w+) -\.-> analysis$", doc, flags=re.MULTILINE))
    assert documented == importers
