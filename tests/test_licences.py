"""Every package of the runtime lock (requirements.lock) has a licence that fits the project's
MIT licence, read from the installed distributions' metadata (importlib.metadata).

A new runtime dependency under the GPL or AGPL, or one without licence metadata, fails here, and
so CI. The test tools (requirements-test.lock) are not shipped to servers and are not checked.
docs/architecture.md ("Dependencies kept on purpose") explains the allow-list and the one
exception.
"""

import importlib.metadata as metadata
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: SPDX identifiers that fit an MIT project: permissive licences (MIT-0, MIT without the
#: attribution clause: cffi, which cryptography needs), and the weak copyleft ones that
#: bind only their own files or the library itself (MPL-2.0: certifi, tqdm; LGPL-3.0: psycopg,
#: which the project uses unmodified, as a library), never the code that uses them.
ALLOWED = frozenset({
    "MIT", "MIT-0", "MIT-CMU", "BSD-2-Clause", "BSD-3-Clause", "0BSD", "ISC", "Apache-2.0", "PSF-2.0",
    "Python-2.0", "CNRI-Python", "Zlib", "CC0-1.0", "Unlicense", "HPND", "MPL-2.0",
    "LGPL-3.0-only", "LGPL-3.0-or-later",
})

#: Trove classifiers and free-text ``License:`` fields as spelled in the lock's packages' metadata,
#: each as SPDX identifiers; a spelling not here fails the test and must be added by hand.
SPELLINGS = {
    "MIT License": "MIT", "MIT": "MIT", "BSD License": "BSD-3-Clause", "BSD": "BSD-3-Clause",
    "New BSD": "BSD-3-Clause", "BSD-3-Clause": "BSD-3-Clause", "2-clause BSD": "BSD-2-Clause",
    "Apache Software License": "Apache-2.0", "Apache-2.0": "Apache-2.0",
    "Apache License, Version 2.0": "Apache-2.0", "ISC License (ISCL)": "ISC",
    "ISC License": "ISC", "Python Software Foundation License": "PSF-2.0", "PSFL": "PSF-2.0",
    "Mozilla Public License 2.0 (MPL 2.0)": "MPL-2.0", "MPL-2.0": "MPL-2.0",
    "GNU General Public License v2 (GPLv2)": "GPL-2.0", "GPL2": "GPL-2.0",
    "GNU General Public License v3 (GPLv3)": "GPL-3.0",
    "GNU Affero General Public License v3": "AGPL-3.0",
}

#: Runtime packages allowed although their licence is not in ALLOWED, with the reason and a
#: text their installed licence must still contain (so a release that drops it fails).
EXCEPTIONS = {
    "pyuwsgi": (
        "uWSGI is GPL-2.0 with a linking exception; it is the server program that loads the "
        "app, imported by no module of the project, and gunicorn (MIT) or granian "
        "(BSD-3-Clause) can take its place (docs/deploy.md, 'The web server')",
        "LINKING EXCEPTION",
    ),
}


def runtime_packages() -> list[str]:
    """The distribution names pinned in requirements.lock, each once."""
    text = (ROOT / "requirements.lock").read_text()
    return sorted(set(re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==", text, re.M)))


def _spdx(spelling: str) -> str | None:
    """The SPDX identifier of a classifier's last part or a short ``License:`` text."""
    return SPELLINGS.get(spelling.strip())


def licence_alternatives(meta) -> list[set[str]]:
    """The licences a distribution can be used under: a list of alternatives (OR), each the
    set of licences that all apply together (AND). Read from ``License-Expression`` when the
    metadata has one, else from the ``License ::`` classifiers (all of them apply), else from a
    short ``License:`` text. An unknown spelling comes back as ``"?<spelling>"``."""
    expression = meta.get("License-Expression")
    if not expression:
        short = (meta.get("License") or "").strip()
        classifiers = [c.split(" :: ")[-1] for c in meta.get_all("Classifier") or []
                       if c.startswith("License ::") and c != "License :: OSI Approved"]
        if classifiers:
            return [{_spdx(c) or f"?{c}" for c in classifiers}]
        if not short or "\n" in short or len(short) > 60:
            return [{"?no licence metadata"}]
        expression = short
    alternatives = []
    for alternative in re.split(r"\s+OR\s+", expression.strip("() ")):
        terms = re.split(r"\s+AND\s+", alternative.strip("() "))
        alternatives.append({_spdx(t) or (t if t in ALLOWED else f"?{t}") for t in terms})
    return alternatives


def fits(meta) -> bool:
    """Whether some alternative of the distribution's licences is wholly in ALLOWED."""
    return any(alt <= ALLOWED for alt in licence_alternatives(meta))


def test_runtime_lock_licences_fit_mit():
    """Every installed package of the runtime lock has a licence on the allow-list, or a
    documented exception whose licence text is still what the exception relies on."""
    checked, refused = [], []
    for name in runtime_packages():
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # pinned for another platform or Python (a marker), not installed here
        checked.append(name)
        if name in EXCEPTIONS:
            _reason, must_contain = EXCEPTIONS[name]
            texts = [f.read_text() for f in dist.files or [] if "licen" in str(f).lower()
                     and f.locate().is_file()]
            assert any(must_contain in t for t in texts), f"{name}: licence no longer has '{must_contain}'"
            continue
        if not fits(dist.metadata):
            refused.append(f"{name}: {licence_alternatives(dist.metadata)}")
    print(f"{len(checked)} runtime packages checked")
    assert len(checked) > 50  # the runtime lock was read and installed
    assert not refused, "runtime dependencies whose licence does not fit MIT:\n" + "\n".join(refused)


def test_runtime_lock_has_no_test_tools():
    """The runtime lock carries none of the test tools (they are in requirements-test.lock)."""
    runtime = set(runtime_packages())
    for tool in ("pytest", "playwright", "schemathesis", "hypothesis", "pytest-django"):
        assert tool not in runtime
    test_lock = (ROOT / "requirements-test.lock").read_text()
    assert "\nplaywright==" in test_lock and "\npytest==" in test_lock


class _Meta(dict):
    """Distribution metadata as importlib.metadata gives it (get, get_all)."""

    def get_all(self, key):
        value = self.get(key)
        return value if isinstance(value, list) else None


@pytest.mark.parametrize(
    "meta,ok",
    [
        (_Meta({"License-Expression": "GPL-3.0-or-later"}), False),  # the krippendorff package
        (_Meta({"License": "AGPL-3.0"}), False),
        (_Meta({"Classifier": ["License :: OSI Approved :: GNU General Public License v2 (GPLv2)"]}), False),
        (_Meta({}), False),  # no licence metadata at all
        (_Meta({"License-Expression": "MIT"}), True),
        (_Meta({"License-Expression": "Apache-2.0 OR BSD-2-Clause"}), True),
        (_Meta({"License-Expression": "GPL-2.0-only OR MIT"}), True),  # may be used under MIT
        (_Meta({"License-Expression": "MIT AND GPL-3.0-only"}), False),
        (_Meta({"License": "MPL-2.0 AND MIT"}), True),
        (_Meta({"Classifier": ["License :: OSI Approved :: BSD License"], "License": "long\ntext"}), True),
    ],
)
def test_licence_rule(meta, ok):
    """The rule refuses GPL, AGPL and missing metadata, and accepts a permissive alternative."""
    assert fits(meta) is ok
