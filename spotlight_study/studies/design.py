"""Counterbalancing: the cells of a study.

A cell fixes the order of the main settings and which condition goes with which setting.
Orders come from a balanced Latin square (Williams design): every setting appears equally often
at each position, and for an even number of settings every setting directly follows every other
one equally often (for an odd number the square and its mirror image are used together).
Conditions are rotated over the settings, so that across the rotations every setting is shown
in every condition equally often. Two settings and two conditions give 2 x 2 = 4 cells.

Reference: E. J. Williams (1949), "Experimental designs balanced for the estimation of residual
effects of treatments", Australian Journal of Scientific Research A 2(2):149-168.
"""
from __future__ import annotations

from dataclasses import dataclass

from .languages import language_warning


@dataclass(frozen=True)
class CellTask:
    """One main task of a cell: the setting key and the condition it is shown in."""

    setting: str
    condition: str


@dataclass(frozen=True)
class Cell:
    """A counterbalancing cell: its index and its main tasks in presentation order."""

    index: int
    tasks: tuple[CellTask, ...]

    @property
    def label(self) -> str:
        """A readable label, e.g. ``doctor:pattern > farming:no_pattern``."""
        return " > ".join(f"{t.setting}:{t.condition}" for t in self.tasks)


def balanced_latin_square(n: int) -> list[list[int]]:
    """Rows of a Williams balanced Latin square over ``0..n-1``.

    Parameters
    ----------
    n : int
        Number of treatments (here: main settings), ``n >= 1``.

    Returns
    -------
    list of list of int
        ``n`` rows if ``n`` is even (or 1), ``2n`` rows if ``n`` is odd; each row a permutation.

    Raises
    ------
    ValueError
        If ``n < 1``.

    Notes
    -----
    First row ``0, 1, n-1, 2, n-2, ...``; row ``r`` adds ``r`` modulo ``n``. For odd ``n`` the
    mirrored rows are appended so that first-order carry-over is balanced (Williams 1949).
    """
    if n < 1:
        raise ValueError("A Latin square needs at least one treatment.")
    first = [0]
    low, high = 1, n - 1
    take_low = True
    while len(first) < n:
        if take_low:
            first.append(low)
            low += 1
        else:
            first.append(high)
            high -= 1
        take_low = not take_low
    rows = [[(value + r) % n for value in first] for r in range(n)]
    if n % 2 == 1 and n > 1:
        rows += [list(reversed(row)) for row in rows]
    return rows


def build_cells(setting_keys: list[str], conditions: list[str]) -> list[Cell]:
    """All counterbalancing cells of a design.

    Parameters
    ----------
    setting_keys : list of str
        Main setting keys in definition order, length ``k >= 1``.
    conditions : list of str
        Condition values, length ``c >= 1``.

    Returns
    -------
    list of Cell
        ``len(balanced_latin_square(k)) * c`` cells. Cell ``i`` uses order row ``i // c`` and
        condition rotation ``i % c``: the setting at definition index ``j`` gets
        ``conditions[(j + rotation) % c]``.

    Raises
    ------
    ValueError
        If either list is empty or has repeats.
    """
    if not setting_keys or not conditions:
        raise ValueError("A design needs at least one main setting and one condition.")
    if len(set(setting_keys)) != len(setting_keys) or len(set(conditions)) != len(conditions):
        raise ValueError("Setting keys and conditions must not repeat.")
    c = len(conditions)
    cells = []
    for order_index, order in enumerate(balanced_latin_square(len(setting_keys))):
        for rotation in range(c):
            tasks = tuple(
                CellTask(setting=setting_keys[j], condition=conditions[(j + rotation) % c])
                for j in order
            )
            cells.append(Cell(index=order_index * c + rotation, tasks=tasks))
    return cells


def design_warnings(
    *, setting_keys: list[str], conditions: list[str], target_sample_size: int, language: str = "en"
) -> list[str]:
    """Warnings about a design that works but may not be what the researcher meant.

    Parameters
    ----------
    setting_keys : list of str
        Main setting keys, in definition order.
    conditions : list of str
        Condition values.
    target_sample_size : int
        Participants wanted in all.
    language : str
        The study's ``language`` (a code the schema accepted).

    Returns
    -------
    list of str
        Empty if the design is regular. Otherwise:

        - more main settings than conditions: a condition is shown in several settings of the
          same participant, but the survey asks about each condition once;
        - fewer main settings than conditions: each participant sees only some conditions, so
          the within-participant survey comparison misses the others;
        - a ``target_sample_size`` that is not a multiple of the number of cells, so the cells
          cannot all be filled equally;
        - a ``language`` the platform ships no translation for
          (:func:`spotlight_study.studies.languages.language_warning`).

    Raises
    ------
    ValueError
        As :func:`build_cells`, for an empty or repeating list.
    """
    warnings = []
    n_settings, n_conditions = len(setting_keys), len(conditions)
    if n_settings > n_conditions:
        warnings.append(
            f"{n_settings} main settings but {n_conditions} condition(s): each participant sees "
            "some condition in more than one setting, while the survey asks about each condition "
            "once. Use as many main settings as conditions, or expect the survey answers to mix "
            "settings."
        )
    elif n_settings < n_conditions:
        warnings.append(
            f"{n_settings} main setting(s) but {n_conditions} conditions: each participant sees "
            f"only {n_settings} of the conditions, so no participant answers the survey about "
            "all of them."
        )
    n_cells = len(build_cells(setting_keys, conditions))
    if target_sample_size % n_cells:
        lower = target_sample_size - target_sample_size % n_cells
        warnings.append(
            f"target_sample_size {target_sample_size} is not a multiple of the {n_cells} cells: "
            f"the cells cannot be filled equally (use {lower or n_cells} or {lower + n_cells})."
        )
    untranslated = language_warning(language)
    if untranslated:
        warnings.append(untranslated)
    return warnings
