"""Readable forms of a plan: ``plan.md`` and the OSF-style ``plan_osf.txt``.

Both are rendered from the plan dict alone, so they say what the hashed ``plan.json`` says.
"""
from __future__ import annotations

# Section headings of the OSF Preregistration template (Bowman et al., 2016) used by --osf.
OSF_HEADINGS = ("Hypotheses", "Design Plan", "Sampling Plan", "Variables", "Analysis Plan")

_KIND_TITLES = {
    "identification": "Identification of the target difference",
    "likert": "Survey items (between participants, Mann-Whitney U)",
    "likert_paired": "Survey items (within participants, Wilcoxon signed-rank)",
    "survey_items": "Survey items with types (between conditions, each by its type's test)",
    "survey_items_paired": "Survey items with types (within participants, paired test)",
}


def _tests_by_setting(plan: dict) -> list[tuple[str, list[dict]]]:
    out: dict[str, list[dict]] = {}
    for t in plan["tests"]:
        key = f"Setting {t['name']}" if t["kind"] == "identification" else _KIND_TITLES[t["kind"]]
        out.setdefault(key, []).append(t)
    return list(out.items())


def _sampling_lines(plan: dict) -> list[str]:
    ss = plan["sample_size"]
    return [f"Planned N: {ss['planned_n']} participants.", f"Derivation: {ss['derivation']}"]


def _amendment_lines(plan: dict) -> list[str]:
    a = plan.get("amendment")
    if not a:
        return []
    return [f"Version {a['version']}; supersedes {a['supersedes'] or 'nothing'}.",
            f"Reason: {a['reason'] or '(none given; the study was a draft)'}"]


def plan_markdown(plan: dict, sha256: str) -> str:
    """``plan.md``: the plan as Markdown, headed by its SHA-256 and the definition hash."""
    study, design = plan["study"], plan["design"]
    lines = [
        f"# Preregistered analysis plan: {study['title']} ({study['slug']})", "",
        f"- Plan SHA-256: `{sha256}` (SHA-256 of the canonical JSON of `plan.json`: keys sorted, "
        "UTF-8, no whitespace; `sha256sum plan.json` prints it)",
        f"- Study definition SHA-256: `{study['definition_sha256']}` (what participants see)",
        *[f"- {line}" for line in _amendment_lines(plan)], "",
        "## Design", "",
        f"- Settings: {', '.join(design['settings'])}",
        f"- Conditions: {', '.join(design['conditions'])} (baseline {design['baseline']})",
        f"- Counterbalancing cells: {design['cells']}",
        f"- Per-condition survey items: {', '.join(design['survey_items']) or 'none'}",
        *[f"- Survey item `{t['key']}`: {t['type']}, {'per condition' if t['where'] == 'condition' else 'asked once'}"
          for t in design.get("survey_items_typed", ())], "",
        "## Hypotheses and tests", "",
        f"Alpha {plan['alpha']:g}; correction: {plan['correction']['description']}", "",
    ]
    for title, tests in _tests_by_setting(plan):
        lines += [f"### {title}", ""]
        lines += [f"- `{t['id']}`: {t['hypothesis']} {t['test']}, alternative `{t['alternative']}`, "
                  f"Holm family `{t['family']}`." for t in tests]
        lines.append("")
    lines += ["## Exclusion rules", ""]
    lines += [f"- `{r['reason']}`: {r['rule']}" for r in plan["exclusion_rules"]]
    lines += ["", plan["exclusion_scope"], "", "## Sample size", ""]
    lines += [f"- {line}" for line in _sampling_lines(plan)]
    lines += ["", "## Descriptive (not tested)", "", ", ".join(plan["descriptive"]), ""]
    return "\n".join(lines)


def plan_osf_text(plan: dict, sha256: str) -> str:
    """``plan_osf.txt``: the plan under the headings of the OSF Preregistration template."""
    study, design = plan["study"], plan["design"]
    sections = {
        "Hypotheses": [t["hypothesis"] for t in plan["tests"]],
        "Design Plan": [
            f"Each participant sees every setting ({', '.join(design['settings'])}) once, in one of "
            f"the conditions {', '.join(design['conditions'])}; the assignment of conditions to "
            f"settings is counterbalanced over {design['cells']} cells.",
            f"The materials participants see have SHA-256 {study['definition_sha256']}.",
        ],
        "Sampling Plan": _sampling_lines(plan) + [plan["exclusion_scope"]]
        + [f"Exclusion {r['reason']}: {r['rule']}" for r in plan["exclusion_rules"]],
        "Variables": [
            "Identified (0/1): whether the blind annotators' final label has the target difference "
            "identified in the participant's answer.",
            *[f"Survey item {item}: 5-point rating after each setting." for item in design["survey_items"]],
        ],
        "Analysis Plan": [f"{t['id']}: {t['test']}, alternative {t['alternative']}." for t in plan["tests"]]
        + [f"Alpha {plan['alpha']:g}. {plan['correction']['description']}"],
    }
    lines = [f"Preregistration: {study['title']} ({study['slug']})", f"Plan SHA-256: {sha256}",
             *_amendment_lines(plan), ""]
    for heading in OSF_HEADINGS:
        lines += [heading, "-" * len(heading)]
        lines += [f"- {line}" for line in sections[heading]]
        lines.append("")
    return "\n".join(lines)
