"""Spreadsheet-safe CSV cells for the platform's exports: the rule of :mod:`analysis.csv_guard`.

The rule (a ``'`` before text cells that begin with ``=``, ``+``, ``-``, ``@``, a tab, a
carriage return or ``'``) lives in the pure ``analysis`` package, so that the exports written
here and the tables and readers of ``analysis/`` cannot disagree; see that module for it.
"""
from __future__ import annotations

from analysis.csv_guard import (
    TRIGGERS,
    SafeDictWriter,
    neutralize,
    unneutralize,
    unneutralize_if_marked,
)

__all__ = ["TRIGGERS", "SafeDictWriter", "neutralize", "unneutralize", "unneutralize_if_marked"]
