"""Rules on a study's values that need more than one field, shared by the study-file validation
(:mod:`spotlight_study.studies.schema`), ``Study.clean`` (the admin) and the launch check, so the
three never disagree about what is safe to launch.
"""
from __future__ import annotations


def completion_code_clashes(codes: dict[str, str]) -> dict[str, str]:
    """Codes that repeat an earlier one, as ``{name: name of the earlier outcome with that code}``.

    ``codes`` maps an outcome name to its Prolific completion code, in a fixed order (e.g.
    completed, failed instruction check, no consent); codes are compared after stripping
    whitespace, and empty codes are ignored (a missing code is another rule). Prolific tells
    outcomes apart only by their code, so two outcomes with one code cannot be told apart.
    """
    first_with: dict[str, str] = {}
    clashes: dict[str, str] = {}
    for name, code in codes.items():
        code = (code or "").strip()
        if not code:
            continue
        if code in first_with:
            clashes[name] = first_with[code]
        else:
            first_with[code] = name
    return clashes


def abandonment_timeout_too_short(*, timeout_minutes: int, maximum_minutes: int) -> bool:
    """True when the abandonment timeout (min) is shorter than Prolific's maximum time (min).

    A participant still within Prolific's time limit would then lose their place in the cell,
    and the cell would be filled twice.
    """
    return timeout_minutes < maximum_minutes
