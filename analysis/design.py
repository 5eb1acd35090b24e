"""The counterbalancing design of a study file, rebuilt without Django.

The simulation (:mod:`analysis.simulation`) needs the cells exactly as the platform builds them
(Williams balanced Latin square of the main settings times the rotation of the conditions;
``spotlight_study.studies.design``); a test checks that both give the same cells.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .errors import AnalysisInputError
from .inputs import RESPONSE_CONDITIONS

__all__ = ["DesignCell", "balanced_latin_square", "design_cells", "load_study_design", "study_cells"]


@dataclass(frozen=True)
class DesignCell:
    """One counterbalancing cell.

    Attributes
    ----------
    index : int
        Cell index, ``0 .. n_cells - 1`` (the platform's ``cell_index``).
    tasks : tuple of (str, str)
        ``(setting, condition)`` of each main task, in presentation order.
    """

    index: int
    tasks: tuple[tuple[str, str], ...]



def balanced_latin_square(n: int) -> list[list[int]]:
    """Orders of ``0..n-1`` from a Williams balanced Latin square.

    Parameters
    ----------
    n : int
        Number of main settings, ``n >= 1``.

    Returns
    -------
    list of list of int
        ``n`` orders for even ``n`` (or ``n == 1``), ``2n`` for odd ``n``.

    Raises
    ------
    AnalysisInputError
        If ``n < 1``.

    Notes
    -----
    The first order alternates from both ends, ``0, 1, n-1, 2, n-2, ...``; order ``r`` adds
    ``r`` modulo ``n``. For odd ``n`` the reversed orders are appended, so that every setting
    follows every other one equally often. Same construction as the platform's
    ``spotlight_study.studies.design`` (a test checks that both give the same cells).

    References
    ----------
    .. [1] Williams, E. J. (1949). Experimental designs balanced for the estimation of residual
       effects of treatments. *Australian Journal of Scientific Research A*, 2(2), 149-168.

    Examples
    --------
    >>> balanced_latin_square(4)
    [[0, 1, 3, 2], [1, 2, 0, 3], [2, 3, 1, 0], [3, 0, 2, 1]]
    """
    if n < 1:
        raise AnalysisInputError("a design needs at least one main setting")
    first = [0]
    for step in range(1, n):
        # Steps 1, 2, 3, ... take 1, n-1, 2, n-2, ...
        first.append((step + 1) // 2 if step % 2 else n - step // 2)
    orders = [[(v + r) % n for v in first] for r in range(n)]
    if n % 2 == 1 and n > 1:
        orders += [order[::-1] for order in orders]
    return orders


def design_cells(setting_keys: Sequence[str], conditions: Sequence[str]) -> list[DesignCell]:
    """The counterbalancing cells of main settings x conditions.

    Parameters
    ----------
    setting_keys : sequence of str
        Main setting keys in definition order, non-empty and unique.
    conditions : sequence of str
        Condition values in the study's order, non-empty and unique.

    Returns
    -------
    list of DesignCell
        ``len(balanced_latin_square(k)) * c`` cells; cell ``i`` takes order ``i // c`` and
        rotation ``i % c``, and the setting at definition index ``j`` is shown in
        ``conditions[(j + rotation) % c]``.

    Raises
    ------
    AnalysisInputError
        If a list is empty or repeats a value.

    Examples
    --------
    >>> [c.tasks for c in design_cells(["doctor", "farming"], ["no_pattern", "pattern"])][1]
    (('doctor', 'pattern'), ('farming', 'no_pattern'))
    """
    setting_keys, conditions = list(setting_keys), list(conditions)
    if not setting_keys or not conditions:
        raise AnalysisInputError("a design needs at least one main setting and one condition")
    if len(set(setting_keys)) != len(setting_keys):
        raise AnalysisInputError(f"main setting keys repeat: {setting_keys}")
    if len(set(conditions)) != len(conditions):
        raise AnalysisInputError(f"conditions repeat: {conditions}")
    c = len(conditions)
    cells = []
    for order_index, order in enumerate(balanced_latin_square(len(setting_keys))):
        for rotation in range(c):
            tasks = tuple((setting_keys[j], conditions[(j + rotation) % c]) for j in order)
            cells.append(DesignCell(index=order_index * c + rotation, tasks=tasks))
    return cells


def load_study_design(path: str | Path) -> dict[str, Any]:
    """Read the fields of a study file that the simulation needs.

    Parameters
    ----------
    path : str or Path
        A study definition in YAML (``.yaml``/``.yml``) or JSON (``.json``), as imported with
        ``manage.py import_study``.

    Returns
    -------
    dict
        ``settings`` (list of main setting keys in definition order), ``conditions`` (list of
        str) and ``target_sample_size`` (int, or None when absent).

    Raises
    ------
    AnalysisInputError
        If the file cannot be read or parsed, is not a mapping, or its ``settings``,
        ``conditions`` or ``target_sample_size`` are missing or malformed.

    Notes
    -----
    Only these three fields are checked; ``manage.py import_study --help`` validates a whole
    file. The training setting is not part of the cells and is ignored.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise AnalysisInputError(f"no such study file: {path}") from None
    except UnicodeDecodeError:
        raise AnalysisInputError(f"study file is not UTF-8 text: {path}") from None
    except OSError as exc:
        raise AnalysisInputError(f"cannot read study file {path}: {exc.strerror}") from None
    try:
        data = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        kind = "JSON" if path.suffix.lower() == ".json" else "YAML"
        raise AnalysisInputError(f"study file {path} is not valid {kind}: {exc}") from None
    if not isinstance(data, Mapping):
        raise AnalysisInputError(f"study file {path}: the top level must be a mapping of fields")

    settings = data.get("settings")
    if not isinstance(settings, list) or not settings:
        raise AnalysisInputError(f"study file {path}: `settings` must be a non-empty list of main settings")
    keys = []
    for i, setting in enumerate(settings):
        key = setting.get("key") if isinstance(setting, Mapping) else None
        if not isinstance(key, str) or not key:
            raise AnalysisInputError(f"study file {path}: settings[{i}] has no `key`")
        keys.append(key)
    if len(set(keys)) != len(keys):
        raise AnalysisInputError(f"study file {path}: setting keys repeat: {keys}")

    conditions = data.get("conditions")
    if not isinstance(conditions, list) or not conditions or not all(isinstance(c, str) for c in conditions):
        raise AnalysisInputError(f"study file {path}: `conditions` must be a non-empty list of condition names")
    unknown = [c for c in conditions if c not in RESPONSE_CONDITIONS]
    if unknown:
        raise AnalysisInputError(
            f"study file {path}: unknown condition(s) {', '.join(unknown)}; "
            f"known: {', '.join(RESPONSE_CONDITIONS)}"
        )
    if len(set(conditions)) != len(conditions):
        raise AnalysisInputError(f"study file {path}: conditions repeat: {conditions}")

    target = data.get("target_sample_size")
    if target is not None and (isinstance(target, bool) or not isinstance(target, int) or target < 1):
        raise AnalysisInputError(f"study file {path}: `target_sample_size` must be a whole number >= 1")
    return {"settings": keys, "conditions": list(conditions), "target_sample_size": target}


def study_cells(path: str | Path) -> list[DesignCell]:
    """The counterbalancing cells of a study file, as the platform builds them.

    Parameters
    ----------
    path : str or Path
        Study file (YAML or JSON).

    Returns
    -------
    list of DesignCell
        :func:`design_cells` of the file's main settings and conditions.

    Raises
    ------
    AnalysisInputError
        As :func:`load_study_design`.
    """
    design = load_study_design(path)
    return design_cells(design["settings"], design["conditions"])
