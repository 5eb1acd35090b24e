"""The report's **Participants** section: counts, exclusions, demographics and study duration.

Built from ``results["sample"]`` (:func:`analysis.sample.describe_sample`); without it (results
computed from DataFrames) only the counts and exclusions of ``results["participants"]`` are
given. The wording follows a paper's participants paragraph.
"""

from __future__ import annotations

from collections.abc import Mapping

from .document import Code, Data, Heading, Para, Table, fmt_num
from .sample import NOT_SPECIFIED

__all__ = ["sample_blocks"]

_CATEGORY_TITLES = {"country_of_residence": "Country of residence", "sex": "Sex",
                    "first_language": "First language"}


def _listing(counts: Mapping[str, int], *, lower: bool = False) -> str:
    """``{"Female": 29, "Male": 20}`` -> ``"29 female, 20 male"``."""
    return ", ".join(f"{n} {k.lower() if lower and k != NOT_SPECIFIED else k}" for k, n in counts.items())


def _count_blocks(results: Mapping, sample: Mapping | None) -> list:
    part = results["participants"]
    lead = ""
    if sample is not None and sample["counts"]["in_export"] is not None:
        statuses = ", ".join(f"{n} {s.replace('_', ' ')}" for s, n in sample["counts"]["by_status"].items())
        lead = (f"{sample['counts']['in_export']} participants arrived from Prolific"
                + (f" ({statuses})" if statuses else "") + "; ")
    blocks = [Para(
        f"{lead}{part['total']} have answers in the data (before exclusions); {part['excluded']} "
        f"were excluded and {part['included']} are analysed (after exclusions). An excluded "
        "participant is removed from every test and every descriptive statistic, in every setting "
        "and in the survey.")]
    if results["exclusions"]:
        blocks.append(Table(["Reason", "Participants"],
                            [[Data(reason), str(count)] for reason, count in results["exclusions"].items()]))
    else:
        blocks.append(Para("No participant was excluded."))
    return blocks


def _demographic_blocks(sample: Mapping, n: int) -> list:
    age = sample["age"]
    sentence = [f"Of the {n} participants analysed: "]
    parts = []
    if sample["country_of_residence"]:
        parts.append(_listing(sample["country_of_residence"]) + " (country of residence)")
    if sample["sex"]:
        parts.append(_listing(sample["sex"], lower=True))
    if age["n"]:
        text = (f"age {age['min']} to {age['max']}, mean {fmt_num(age['mean'], 1)}, "
                f"median {fmt_num(age['median'], 1)}, SD {fmt_num(age['sd'], 1)}")
        if age["missing"]:
            text += f" ({age['missing']} without an age)"
        parts.append(text)
    if sample["first_language"]:
        parts.append("first language: " + _listing(sample["first_language"]))
    blocks = [Para(sentence[0] + "; ".join(parts) + ".")]
    for key, title in _CATEGORY_TITLES.items():
        if sample[key]:
            blocks.append(Table([title, "Participants"], [[Data(k), str(v)] for k, v in sample[key].items()]))
    blocks.append(Para("Demographics are Prolific's demographic export, joined to the answers by "
                       "pseudonym; a missing or expired answer counts as \"not specified\". SD is the "
                       "sample standard deviation (n - 1 in the denominator)."))
    return blocks


def sample_blocks(results: Mapping) -> list:
    """The Participants section as report blocks (see the module docstring)."""
    sample = results.get("sample")
    blocks: list = [Heading(2, "Participants"), *_count_blocks(results, sample)]
    n = results["participants"]["included"]
    if sample is not None and sample["demographics_fetched"]:
        blocks += _demographic_blocks(sample, n)
    else:
        blocks.append(Para("Demographics were not fetched from Prolific (run ",
                           Code("manage.py prolific_demographics <slug>"),
                           " before exporting), so there are no ages, sexes, countries or languages."))
    duration = (sample or {}).get("duration") or {}
    if duration.get("n"):
        blocks.append(Para(f"Median study duration, from consent to completion by the server's clock: "
                           f"{duration['median_mmss']} minutes (mm:ss; n = {duration['n']})."))
    else:
        blocks.append(Para("Study duration: not available (needs participants.csv with consent and "
                           "completion times)."))
    return blocks
