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

import ast
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
                      "navigation", "compiled_sql", "postgres_backend", "sqlite_backend", "accounts", "middleware",
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


# --- loops between packages -------------------------------------------------------------------


def _package_edges(graph: grimp.ImportGraph, modules: set[str]) -> grimp.ImportGraph:
    """The import graph as Python runs it: importing ``a.b.c`` first runs the packages ``a``
    and ``a.b`` (their ``__init__``), so an import of a module is also an import of each
    package around it, except the packages the importer itself is inside (those are running
    already). A loop in this graph is a loop between packages, e.g. a module of
    ``participation`` importing ``participation.steps.statements`` while
    ``participation.steps``'s ``__init__`` imports that module back through ``machine``."""
    g = grimp.ImportGraph()
    for m in modules:
        g.add_module(m)
    for m in modules:
        for imported in graph.find_modules_directly_imported_by(m) & modules:
            g.add_import(importer=m, imported=imported)
            parts = imported.split(".")
            for n in range(1, len(parts)):
                package = ".".join(parts[:n])
                if package in modules and not (m == package or m.startswith(package + ".")):
                    g.add_import(importer=m, imported=package)
    return g


def test_no_import_loop_between_packages(graph):
    """No module imports a package whose ``__init__`` imports that module back (directly or
    through others): a loop between packages, as drafts <-> steps was."""
    modules = _own_modules(graph)
    cycles = _strongly_connected(_package_edges(graph, modules), modules)
    assert cycles == [], "packages importing each other in a circle:\n" + "\n".join(
        " <-> ".join(c) for c in cycles
    )


def test_the_package_loop_finder_finds_a_planted_loop():
    """A module importing a submodule of a package whose ``__init__`` imports the module back
    is a loop, though no two modules import each other."""
    g = grimp.ImportGraph()
    for m in ("p", "p.drafts", "p.steps", "p.steps.machine", "p.steps.statements"):
        g.add_module(m)
    g.add_import(importer="p.drafts", imported="p.steps.statements")
    g.add_import(importer="p.steps", imported="p.steps.machine")
    g.add_import(importer="p.steps.machine", imported="p.drafts")
    modules = set(g.modules)
    assert _strongly_connected(g, modules) == []
    assert _strongly_connected(_package_edges(g, modules), modules) == [
        ["p.drafts", "p.steps", "p.steps.machine"]
    ]


# --- concrete step names stay inside participation/steps/ ------------------------------------

STEPS_DIR = REPO / "spotlight_study" / "participation" / "steps"


def _step_keys() -> set[str]:
    """The built-in step keys, as ``participation/steps/keys.py`` spells them."""
    tree = ast.parse((STEPS_DIR / "keys.py").read_text(encoding="utf-8"))
    return {
        node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    }


def _constants(node: ast.AST) -> list[str]:
    """The string constants of ``node``, or of the tuple, list or set it is."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [v for element in node.elts for v in _constants(element)]
    return []


def step_mentions(source: str, keys: set[str]) -> list[tuple[int, str]]:
    """``[(line, code)]`` where ``source`` names a concrete step: ``X.Step`` (the old enum), a
    step key compared with, assigned to or passed as something called ``step``, or a dict's
    ``"step"`` entry holding a key. Other uses of the same words (a setting's ``"training"``
    kind, a Celery ``"task"``) are not about the step and pass."""
    found = []

    def about_step(node: ast.AST) -> bool:
        return "step" in ast.unparse(node).lower()

    for node in ast.walk(ast.parse(source)):
        hit = False
        if isinstance(node, ast.Attribute) and node.attr == "Step":
            hit = True
        elif isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            named = [o for o in operands if set(_constants(o)) & keys]
            hit = bool(named) and any(about_step(o) for o in operands if o not in named)
        elif isinstance(node, ast.keyword) and node.arg and "step" in node.arg.lower():
            hit = bool(set(_constants(node.value)) & keys)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            hit = bool(set(_constants(node.value)) & keys) and any(about_step(t) for t in targets)
        elif isinstance(node, ast.Dict):
            hit = any(
                _constants(k) == ["step"] and set(_constants(v)) & keys
                for k, v in zip(node.keys, node.values) if k is not None
            )
        if hit:
            found.append((node.lineno, ast.unparse(node)[:80]))
    return sorted(found)


def test_concrete_step_names_stay_inside_the_steps_package():
    """Outside participation/steps/ (migrations aside) no code names a concrete step: it asks
    the registry, so a new page kind touches no other module."""
    keys = _step_keys()
    assert {"consent", "task", "survey", "done"} <= keys
    mentions = []
    for path in sorted((REPO / "spotlight_study").rglob("*.py")):
        if "migrations" in path.parts or STEPS_DIR in path.parents:
            continue
        for line, code in step_mentions(path.read_text(encoding="utf-8"), keys):
            mentions.append(f"{path.relative_to(REPO)}:{line}: {code}")
    assert mentions == [], "ask the step registry instead:\n" + "\n".join(mentions)


def test_the_step_name_finder_finds_planted_mentions():
    """Each way of naming a step is found; the same words used for something else are not."""
    keys = {"consent", "task", "survey", "training"}
    planted = "\n".join([
        "if p.step == Participant.Step.TASK: pass",
        "if row['step'] in ('training', 'task'): pass",
        "Participant.objects.filter(step='survey')",
        "participant.step = 'consent'",
        "where = {'step': 'task'}",
    ])
    assert sorted(line for line, _ in step_mentions(planted, keys)) == [1, 2, 3, 4, 5]
    innocent = "\n".join([
        "x = {'task': 'participation.sessions_clear_expired'}",
        "if setting.kind == 'training': pass",
        "survey = data['survey']",
    ])
    assert step_mentions(innocent, keys) == []
