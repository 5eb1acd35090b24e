"""Lazy public names of a package (PEP 562), so that importing one submodule stays light.

``analysis`` and ``analysis.stats`` name their public functions at the top of the package, but
those live in submodules that load statsmodels, scipy and matplotlib. The annotation app only
needs ``analysis.stats.agreement`` (numpy), and the web server imports it at start-up; eager
package imports would load everything else with it.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, sources: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package``.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    sources : mapping of str to str
        Public name -> the relative submodule that defines it (``".planning"``).

    Returns
    -------
    tuple of callables
        ``__getattr__(name)`` imports the submodule on the first access of ``name``, caches the
        value in the package and returns it; ``__dir__()`` lists the package's names with the
        public ones.

    Raises
    ------
    AttributeError
        From ``__getattr__`` for a name that is not in ``sources`` (as for any module).
    """

    def __getattr__(name: str) -> Any:
        try:
            source = sources[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        module = importlib.import_module(package)
        value = getattr(importlib.import_module(source, package), name)
        setattr(module, name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(importlib.import_module(package)), *sources})

    return __getattr__, __dir__
