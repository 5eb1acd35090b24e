"""A preregistered analysis plan, its fingerprint, and the deviations of a run from it.

The plan is a plain JSON object (format :data:`PLAN_FORMAT`, documented in
``docs/analysis.md``). The platform writes it with ``manage.py preregister``;
this module lists the confirmatory tests a design implies
(:func:`planned_tests`), reads one back (:func:`load_plan`) and compares a
finished analysis with it (:func:`compare_to_plan`). Its fingerprint, the
SHA-256 of its canonical JSON, is :mod:`analysis.plan_hash`. Pure Python: no
Django.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from .errors import AnalysisInputError
from .plan_hash import plan_sha256
from .survey_measures import TYPED_SECTIONS

__all__ = [
    "PLAN_FORMAT",
    "TEST_SECTIONS",
    "DESCRIPTIVE_SECTIONS",
    "check_plan",
    "compare_to_plan",
    "load_plan",
    "planned_tests",
]

#: Value of the plan's ``format`` key; a reader refuses any other.
PLAN_FORMAT = "spotlight-prereg/1"

#: Results sections that hold confirmatory tests: section -> (kind, treatment, test name).
TEST_SECTIONS = {
    "identification": ("identification", "pattern", "two-proportion z-test"),
    "identification_with_distractors": ("identification", "pattern_with_distractors",
                                        "two-proportion z-test"),
    "likert": ("likert", "pattern", "Mann-Whitney U test"),
    "likert_with_distractors": ("likert", "pattern_with_distractors", "Mann-Whitney U test"),
    "likert_paired": ("likert_paired", "pattern", "Wilcoxon signed-rank test"),
    "likert_paired_with_distractors": ("likert_paired", "pattern_with_distractors",
                                       "Wilcoxon signed-rank test"),
}

#: Descriptive results sections; they test nothing and are declared in a plan's ``descriptive``.
DESCRIPTIVE_SECTIONS = ("time_on_task", "other_differences", "no_difference",
                        "likert_distribution", "background")

_REQUIRED_KEYS = ("format", "alpha", "correction", "tests", "exclusion_rules", "sample_size")
_DIRECTION_WORDS = {"greater": "higher", "less": "lower", "two-sided": "different"}
_TREATMENT_WORDS = {"pattern": "the token pattern",
                    "pattern_with_distractors": "the token pattern with distractors"}


def planned_tests(
    settings: Sequence[str],
    conditions: Sequence[str],
    survey_items: Sequence[str],
    *,
    identification_alternative: str,
    likert_alternatives: Mapping[str, str],
    families: Mapping[str, Sequence[str]],
) -> list[dict]:
    """The confirmatory tests (one per hypothesis) that a design implies.

    Parameters
    ----------
    settings : sequence of str
        Main setting keys.
    conditions : sequence of str
        The study's conditions; each pattern condition is compared with
        ``no_pattern`` when both are present.
    survey_items : sequence of str
        Keys of the per-condition survey items (asked after each setting).
    identification_alternative : {"larger", "smaller", "two-sided"}
        Alternative of the identification z-tests.
    likert_alternatives : mapping of str to str
        Alternative (``"greater"``, ``"less"``, ``"two-sided"``) per item.
    families : mapping of str to sequence of str
        Holm families: family name -> results sections corrected together.

    Returns
    -------
    list of dict
        One dict per test with ``id`` (``"<section>/<setting or item>"``),
        ``section``, ``name``, ``kind`` (``identification``, ``likert`` or
        ``likert_paired``), ``treatment``, ``test``, ``alternative``,
        ``family`` and ``hypothesis`` (one sentence). Identification tests
        come first, per setting, then the survey items.

    Raises
    ------
    KeyError
        If an item has no entry in ``likert_alternatives``.

    Notes
    -----
    Mirrors :func:`analysis.pipeline.compute_results`: the sections and ids
    are the keys of its ``results.json``, so :func:`compare_to_plan` can
    match plan and results one to one.

    References
    ----------
    .. [1] ``docs/analysis.md``, section "Preregistration".

    Examples
    --------
    >>> tests = planned_tests(["doctor"], ["pattern", "no_pattern"], ["ease"],
    ...                       identification_alternative="larger",
    ...                       likert_alternatives={"ease": "greater"},
    ...                       families={"identification": ["identification"],
    ...                                 "likert": ["likert"],
    ...                                 "likert_paired": ["likert_paired"]})
    >>> [t["id"] for t in tests]
    ['identification/doctor', 'likert/ease', 'likert_paired/ease']
    """
    family_of = {section: family for family, sections in families.items() for section in sections}
    treatments = [] if "no_pattern" not in conditions else [
        t for t in ("pattern", "pattern_with_distractors") if t in conditions]
    out = []
    for section, (kind, treatment, test) in TEST_SECTIONS.items():
        if treatment not in treatments:
            continue
        words = _TREATMENT_WORDS[treatment]
        for name in settings if kind == "identification" else survey_items:
            if kind == "identification":
                alternative = identification_alternative
                claim = {"larger": "more often", "smaller": "less often",
                         "two-sided": "at a different rate"}[alternative]
                hypothesis = (f"In setting {name}, participants shown {words} identify the target "
                              f"difference {claim} than participants without it (no_pattern).")
            else:
                alternative = likert_alternatives[name]
                paired = " (paired: the same participant in both conditions)" if kind == "likert_paired" else ""
                hypothesis = (f"Item {name} is rated {_DIRECTION_WORDS[alternative]} after {words} "
                              f"than without it{paired}.")
            out.append({"id": f"{section}/{name}", "section": section, "name": name, "kind": kind,
                        "treatment": treatment, "test": test, "alternative": alternative,
                        "family": family_of.get(section), "hypothesis": hypothesis})
    order = {"identification": 0, "likert": 1, "likert_paired": 2}
    return sorted(out, key=lambda t: order[t["kind"]])


def load_plan(path: str | Path) -> tuple[dict, str]:
    """Read a ``plan.json`` written by ``manage.py preregister``.

    Parameters
    ----------
    path : str or pathlib.Path
        The plan file.

    Returns
    -------
    plan : dict
        The parsed plan.
    sha256 : str
        :func:`plan_sha256` of it (independent of the file's whitespace).

    Raises
    ------
    AnalysisInputError
        If the file cannot be read, is not JSON, is not a plan of format
        :data:`PLAN_FORMAT`, or lacks one of its keys.

    Notes
    -----
    Only the structure is checked; a plan whose values disagree with the
    analysis shows up as deviations, not as an error.

    References
    ----------
    .. [1] ``docs/analysis.md``, section "Preregistration".

    Examples
    --------
    >>> plan, sha = load_plan("prereg/plan.json")  # doctest: +SKIP
    """
    path = Path(path)
    try:
        plan = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise AnalysisInputError(f"cannot read the plan {path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AnalysisInputError(f"the plan {path} is not valid UTF-8 JSON: {exc}") from None
    check_plan(plan, source=str(path))
    return plan, plan_sha256(plan)


def check_plan(plan, *, source: str = "the plan") -> None:
    """Refuse anything that is not a plan of format :data:`PLAN_FORMAT`.

    Parameters
    ----------
    plan : object
        Parsed JSON.
    source : str, default "the plan"
        Named in the message.

    Returns
    -------
    None

    Raises
    ------
    AnalysisInputError
        If ``plan`` is not a dict, has another ``format``, lacks a required
        key, or its ``tests``/``exclusion_rules`` are not lists of objects.

    Notes
    -----
    Required keys: ``format``, ``alpha``, ``correction``, ``tests``,
    ``exclusion_rules``, ``sample_size``.

    References
    ----------
    .. [1] ``docs/analysis.md``, section "Preregistration".

    Examples
    --------
    >>> check_plan({"format": "other"})
    Traceback (most recent call last):
    ...
    analysis.errors.AnalysisInputError: the plan is not a preregistered plan of format spotlight-prereg/1 (format: 'other')
    """
    if not isinstance(plan, dict) or plan.get("format") != PLAN_FORMAT:
        found = plan.get("format") if isinstance(plan, dict) else type(plan).__name__
        raise AnalysisInputError(
            f"{source} is not a preregistered plan of format {PLAN_FORMAT} (format: {found!r})")
    missing = [k for k in _REQUIRED_KEYS if k not in plan]
    if missing:
        raise AnalysisInputError(f"{source} lacks the key(s): {', '.join(missing)}")
    for key in ("tests", "exclusion_rules"):
        if not isinstance(plan[key], list) or not all(isinstance(x, dict) for x in plan[key]):
            raise AnalysisInputError(f"{source}: {key!r} must be a list of objects")


def _planned_n(plan: Mapping) -> int | None:
    value = (plan.get("sample_size") or {}).get("planned_n")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _result_tests(results: Mapping) -> dict[str, dict]:
    """Tests present in ``results``: id -> section, name, alternative."""
    out = {}
    for section in (*TEST_SECTIONS, *TYPED_SECTIONS):
        for name, entry in (results.get(section) or {}).items():
            out[f"{section}/{name}"] = {"section": section, "name": name,
                                        "alternative": entry.get("alternative"), "test": entry.get("test")}
    return out


def _families(families: Mapping[str, Iterable[str]]) -> dict[str, list[str]]:
    return {name: sorted(sections) for name, sections in sorted(families.items())}


def _exclusion_rows(plan: Mapping, results: Mapping) -> list[dict]:
    """Every planned exclusion rule with its count, then every applied reason not planned."""
    applied = dict(results.get("exclusions") or {})
    planned_reasons = [r.get("reason") for r in plan["exclusion_rules"]]
    return ([{"reason": r, "planned": True, "participants": int(applied.get(r, 0))}
             for r in planned_reasons]
            + [{"reason": r, "planned": False, "participants": int(n)}
               for r, n in applied.items() if r not in planned_reasons])


def _tests_that_differ(planned: list, ran: Mapping, used_family: Mapping) -> list[dict]:
    """Planned tests that ran with another alternative or in another correction family."""
    differ = []
    for test in planned:
        used = ran.get(test.get("id"))
        if used is None:
            continue
        if test.get("alternative") != used["alternative"]:
            differ.append({"id": test.get("id"), "what": "alternative",
                           "planned": test.get("alternative"), "used": used["alternative"]})
        if used["test"] is not None and test.get("test") != used["test"]:  # a typed item's test
            differ.append({"id": test.get("id"), "what": "test", "planned": test.get("test"),
                           "used": used["test"]})
        if test.get("family") != used_family.get(used["section"]):
            differ.append({"id": test.get("id"), "what": "correction family",
                           "planned": test.get("family"), "used": used_family.get(used["section"])})
    return differ


def compare_to_plan(
    plan: Mapping,
    results: Mapping,
    *,
    correction: Mapping,
    plan_hash: str | None = None,
) -> dict:
    """Compare a finished analysis with its preregistered plan.

    Parameters
    ----------
    plan : Mapping
        A plan (see :func:`check_plan`).
    results : Mapping
        ``results.json`` content from :func:`analysis.compute_results`.
    correction : Mapping
        The correction the analysis applied: ``{"method": str, "families":
        {family: [section, ...]}}``.
    plan_hash : str, optional
        The plan's SHA-256; computed with :func:`plan_sha256` when omitted.

    Returns
    -------
    dict
        - ``plan_sha256``: str;
        - ``sample_size``: ``{"analysed", "planned", "difference"}``
          (participants; ``difference`` = analysed - planned, None without a
          planned N);
        - ``exclusions``: list of ``{"reason", "planned", "participants"}``,
          every planned rule in plan order (0 when it excluded nobody), then
          every applied reason the plan does not name (``planned`` False);
        - ``alpha``: ``{"planned", "used"}``;
        - ``correction``: ``{"planned", "used"}`` (method and families);
        - ``tests_differ``: list of ``{"id", "what", "planned", "used"}``
          for each planned test run with another alternative or family, and
          for a different alpha or correction (``id`` None);
        - ``tests_not_run``: ids of planned tests absent from the results
          (e.g. a condition group without participants);
        - ``exploratory``: ids of tests and names of descriptive sections in
          the results that the plan does not contain;
        - ``count``: the number of deviations (N differing, unplanned
          exclusion reasons, differing tests, tests not run, exploratory
          analyses); 0 means the analysis followed the plan.

    Raises
    ------
    AnalysisInputError
        If ``plan`` is not a plan (:func:`check_plan`).

    Notes
    -----
    Tests are matched by id (``"<section>/<setting or item>"``). A sample
    size other than the planned one counts as a deviation in either
    direction, as preregistration templates ask for the stopping rule to be
    followed.

    References
    ----------
    .. [1] Nosek, B. A. et al. (2018). The preregistration revolution.
       *PNAS*, 115(11), 2600-2606.
    .. [2] OSF Preregistration template (Bowman et al., 2016), "Analysis
       Plan" and "Sampling Plan".

    Examples
    --------
    >>> out = compare_to_plan(plan, results, correction={"method": "holm", "families": {}})  # doctest: +SKIP
    >>> out["sample_size"]  # doctest: +SKIP
    {'analysed': 8, 'planned': 76, 'difference': -68}
    """
    check_plan(plan)
    analysed = int(results["participants"]["included"])
    planned_n = _planned_n(plan)
    sample = {"analysed": analysed, "planned": planned_n,
              "difference": None if planned_n is None else analysed - planned_n}

    exclusions = _exclusion_rows(plan, results)
    unplanned = [e for e in exclusions if not e["planned"]]

    used_alpha = (results.get("parameters") or {}).get("alpha")
    planned_correction = {"method": (plan["correction"] or {}).get("method"),
                          "families": _families((plan["correction"] or {}).get("families") or {})}
    used_correction = {"method": correction.get("method"),
                       "families": _families(correction.get("families") or {})}
    used_family = {s: f for f, sections in used_correction["families"].items() for s in sections}

    differ = []
    if plan["alpha"] != used_alpha:
        differ.append({"id": None, "what": "alpha", "planned": plan["alpha"], "used": used_alpha})
    if planned_correction["method"] != used_correction["method"]:
        differ.append({"id": None, "what": "correction", "planned": planned_correction["method"],
                       "used": used_correction["method"]})
    ran = _result_tests(results)
    planned_ids = [test.get("id") for test in plan["tests"]]
    not_run = [test_id for test_id in planned_ids if test_id not in ran]
    differ += _tests_that_differ(plan["tests"], ran, used_family)

    declared = set(plan.get("descriptive") or [])
    exploratory = [t for t in ran if t not in set(planned_ids)]
    exploratory += [s for s in DESCRIPTIVE_SECTIONS if results.get(s) and s not in declared]

    count = (int(sample["difference"] not in (None, 0)) + len(unplanned) + len(differ)
             + len(not_run) + len(exploratory))
    return {
        "plan_sha256": plan_hash or plan_sha256(plan),
        "sample_size": sample,
        "exclusions": exclusions,
        "alpha": {"planned": plan["alpha"], "used": used_alpha},
        "correction": {"planned": planned_correction, "used": used_correction},
        "tests_differ": differ,
        "tests_not_run": not_run,
        "exploratory": exploratory,
        "count": count,
    }
