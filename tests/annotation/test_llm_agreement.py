"""The machine coder's agreement: kappa with a bootstrap CI, the decision rule, exports, pages, CLI."""

from __future__ import annotations

import csv
import io
import secrets

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from scipy.stats import bootstrap
from sklearn.metrics import cohen_kappa_score

from analysis.stats.agreement import Statistic
from analysis.stats.agreement_ci import kappa_with_ci, non_inferiority
from spotlight_study.annotation.exports import AGREEMENT_COLUMNS, export_csv_text
from spotlight_study.annotation.label_import.importer import labels_import
from spotlight_study.annotation.machine_agreement import machine_agreement
from spotlight_study.annotation.models import Item, MachineLabel, StudyAnnotator
from spotlight_study.annotation.services.adjudication import adjudication_save
from spotlight_study.annotation.services.labels import LabelInput
from spotlight_study.annotation.services.queue import items_sync

from tests.openai_server import FakeCoder

from .conftest import complete_participants, make_user
from .test_llm_coder import WOMAN

SEED = 7


def _scipy_ci(a, b, *, seed, n_resamples=2000):
    """The reference: scipy's paired percentile bootstrap of sklearn's kappa (not vectorized)."""
    res = bootstrap(
        (np.asarray(a), np.asarray(b)),
        lambda x, y: cohen_kappa_score(x, y),
        paired=True,
        vectorized=False,
        n_resamples=n_resamples,
        method="percentile",
        confidence_level=0.95,
        rng=np.random.default_rng(seed),
    )
    # Resamples where kappa is 0/0 (sklearn: NaN) are left out, as the module documents.
    low, high = np.nanpercentile(res.bootstrap_distribution, [2.5, 97.5])
    if not np.isnan(res.bootstrap_distribution).any():
        assert (low, high) == (
            pytest.approx(res.confidence_interval.low), pytest.approx(res.confidence_interval.high)
        )
    return low, high


def test_kappa_ci_equals_scipy_bootstrap_of_sklearn_kappa():
    """kappa_with_ci gives sklearn's kappa and scipy.stats.bootstrap's interval on the same data."""
    rng = np.random.default_rng(1)
    a = rng.integers(0, 2, 60)
    b = np.where(rng.random(60) < 0.8, a, 1 - a)
    a_rated = [int(x) for x in a] + [None, 1]
    b_rated = [int(x) for x in b] + [0, None]  # the unshared last two items are left out
    got = kappa_with_ci(a_rated, b_rated, seed=SEED)
    assert got.n_items == 60
    assert got.kappa.value == pytest.approx(cohen_kappa_score(a, b))
    low, high = _scipy_ci(a, b, seed=SEED)
    assert got.ci_low.value == pytest.approx(low, abs=1e-12)
    assert got.ci_high.value == pytest.approx(high, abs=1e-12)
    assert got.ci_low.value < got.kappa.value < got.ci_high.value
    assert kappa_with_ci(a_rated, b_rated, seed=SEED + 1).ci_low.value != got.ci_low.value


def test_kappa_ci_with_three_categories_equals_scipy():
    """Nominal labels with three values (like exclusion) match scipy too."""
    rng = np.random.default_rng(2)
    a = rng.choice(["none", "duplicate", "copy_pasted"], 50)
    b = np.where(rng.random(50) < 0.7, a, rng.choice(["none", "duplicate", "copy_pasted"], 50))
    got = kappa_with_ci(list(a), list(b), seed=SEED, n_resamples=500)
    low, high = _scipy_ci(a, b, seed=SEED, n_resamples=500)
    assert (got.ci_low.value, got.ci_high.value) == (pytest.approx(low), pytest.approx(high))


def test_kappa_ci_is_undefined_with_a_reason_when_it_cannot_be_computed():
    """Too few items, a single value, or degenerate resamples give no interval and a reason."""
    few = kappa_with_ci([1, 0, 1], [1, 0, 0])
    assert few.kappa.defined and not few.ci_low.defined and "only 3 items" in few.ci_low.undefined_reason
    same = kappa_with_ci([True] * 10, [True] * 10)
    assert not same.kappa.defined and not same.ci_low.defined
    rare = kappa_with_ci([1] + [0] * 9, [1] + [0] * 9)  # a third of resamples lack the 1
    assert rare.kappa.value == pytest.approx(1.0)
    assert not rare.ci_low.defined and "have a single value" in rare.ci_low.undefined_reason
    with pytest.raises(ValueError, match="n_resamples"):
        kappa_with_ci([1, 0], [1, 0], n_resamples=10)


def test_decision_rule_compares_the_lower_bound_with_human_kappa_minus_margin():
    """Non-inferior iff ci_low >= human kappa - margin; undecided without numbers; margin checked."""
    yes = non_inferiority(field="identified", machine_ci_low=Statistic(0.6), human_kappa=Statistic(0.7))
    assert yes.non_inferior is True and "is non-inferior to a second human coder" in yes.statement
    assert "0.600 >= 0.700 - 0.1 = 0.600" in yes.statement
    no = non_inferiority(field="identified", machine_ci_low=Statistic(0.59), human_kappa=Statistic(0.7))
    assert no.non_inferior is False and "is not shown to be non-inferior" in no.statement
    wide = non_inferiority(
        field="identified", machine_ci_low=Statistic(0.59), human_kappa=Statistic(0.7), margin=0.2
    )
    assert wide.non_inferior is True
    none = non_inferiority(
        field="exclusion", machine_ci_low=Statistic(None, "too few"), human_kappa=Statistic(0.7)
    )
    assert none.non_inferior is None and "cannot decide" in none.statement and "too few" in none.reason
    with pytest.raises(ValueError, match="margin"):
        non_inferiority(field="x", machine_ci_low=Statistic(0.5), human_kappa=Statistic(0.5), margin=1.5)


# --- a study labelled by two humans and the machine ----------------------------------------

FLIPS = {"ann1": {1, 4}, "ann2": {7, 10, 13}}  # items where each human departs from the truth


@pytest.fixture
def api_key() -> str:
    """A fresh secret key."""
    return f"sk-test-{secrets.token_hex(16)}"


@pytest.fixture
def coder(api_key, settings):
    """The fake coding server, with the app pointed at it (manual runner)."""
    server = FakeCoder(api_key).start()
    settings.OPENAI_BASE_URL = server.url
    settings.OPENAI_API_KEY = api_key
    settings.OPENAI_MAX_RETRIES = 0
    settings.STIMULI_JOB_RUNNER = "manual"
    yield server
    server.stop()


@pytest.fixture
def coded_study(demo_study, coder):
    """21 answers, labelled by two annotators (k=2, disagreements adjudicated to the truth) and
    by the machine through ``llm_annotate --sync``."""
    complete_participants(demo_study.slug, 7)
    items_sync(study=demo_study)
    items = list(Item.objects.filter(study=demo_study).select_related("response").order_by("pk"))
    truth = [int(it.response.answer == WOMAN) for it in items]
    make_user("ann1", "annotators"), make_user("ann2", "annotators")
    lines = ["item,annotator,identified,surface_difference,no_difference,exclusion"]
    for name, flips in FLIPS.items():
        lines += [
            f"{it.public_id},{name},{1 - t if i in flips else t},0,0,none"
            for i, (it, t) in enumerate(zip(items, truth, strict=True))
        ]
    labels_import(study=demo_study, text="\n".join(lines) + "\n")
    adjudicator = make_user("adj", "adjudicators")
    for i in FLIPS["ann1"] | FLIPS["ann2"]:
        adjudication_save(
            study=demo_study, adjudicator=adjudicator, public_id=items[i].public_id,
            label=LabelInput(identified=bool(truth[i]), surface_difference=False, no_difference=False),
        )
    out = io.StringIO()
    call_command("llm_annotate", demo_study.slug, "--model", "gpt-test", "--sync", stdout=out)
    assert "succeeded, 21/21 items, 0 missing" in out.getvalue()
    human = {n: [1 - t if i in f else t for i, t in enumerate(truth)] for n, f in FLIPS.items()}
    return demo_study, truth, human


def test_machine_agreement_rows_match_scipy_and_the_decision_follows(coded_study):
    """Machine x human, machine x final, human x human: kappa and CI as scipy's; decision in words."""
    study, truth, human = coded_study
    machine = [int(m) for m in MachineLabel.objects.order_by("item_id").values_list("identified", flat=True)]
    assert machine == truth
    # 500 resamples, not the default 2000: the reference below recomputes sklearn's kappa for
    # every resample in Python, some 0.7 ms each, three times.
    rows, decisions = machine_agreement(study=study, seed=SEED, n_resamples=500)
    seat = {s.user.username: s.pseudonym for s in StudyAnnotator.objects.filter(study=study).select_related("user")}
    got = {(r.comparison, r.rater_a, r.rater_b): r for r in rows if r.field == "identified"}
    expected = {
        ("machine_vs_human", "llm:gpt-test", seat["ann1"]): (machine, human["ann1"]),
        ("machine_vs_human", "llm:gpt-test", seat["ann2"]): (machine, human["ann2"]),
        ("machine_vs_final", "llm:gpt-test", "final"): (machine, truth),
        ("human_vs_human", *sorted([seat["ann1"], seat["ann2"]])): (human["ann1"], human["ann2"]),
    }
    assert set(got) == set(expected)
    for key, (a, b) in expected.items():
        ci = got[key].ci
        assert ci.n_items == 21
        assert ci.kappa.value == pytest.approx(cohen_kappa_score(a, b))
        if len(set(zip(a, b))) > 1 and key[0] != "machine_vs_final":
            low, high = _scipy_ci(a, b, seed=SEED, n_resamples=500)
            assert (ci.ci_low.value, ci.ci_high.value) == (pytest.approx(low), pytest.approx(high))
    decision = next(d for d in decisions if d.field == "identified")
    hh = cohen_kappa_score(human["ann1"], human["ann2"])
    assert decision.rule.human_kappa == pytest.approx(hh) and decision.human_pairs == 1
    assert decision.rule.non_inferior is True  # kappa(machine, final) = 1 on every resample
    assert decision.rule.statement.startswith("identified: the machine coder is non-inferior")
    surface = next(d for d in decisions if d.field == "surface_difference")
    assert surface.rule.non_inferior is None  # nobody ever says yes: kappa is 0/0


def test_agreement_csv_keeps_its_columns_and_adds_the_machine_rows(coded_study):
    """agreement.csv keeps the existing columns in order and adds CI and decision columns/rows."""
    study, _, _ = coded_study
    reader = csv.DictReader(io.StringIO(export_csv_text(study=study, name="agreement")))
    assert reader.fieldnames[:14] == [
        "field", "scope", "comparison", "rater_a", "rater_b", "n_items", "n_annotators",
        "n_ratings", "percent_agreement", "percent_agreement_note", "cohen_kappa",
        "cohen_kappa_note", "krippendorff_alpha", "krippendorff_alpha_note",
    ]
    assert reader.fieldnames == AGREEMENT_COLUMNS and "cohen_kappa_ci_low" in AGREEMENT_COLUMNS
    rows = list(reader)
    final = next(r for r in rows if r["comparison"] == "machine_vs_final" and r["field"] == "identified")
    assert final["rater_a"] == "llm:gpt-test" and final["non_inferior"] == "1" and final["margin"] == "0.1"
    assert "non-inferior" in final["decision"] and float(final["cohen_kappa"]) == pytest.approx(1.0)
    hh = next(r for r in rows if r["comparison"] == "human_vs_human" and r["field"] == "identified")
    assert float(hh["cohen_kappa_ci_low"]) < float(hh["cohen_kappa"]) < float(hh["cohen_kappa_ci_high"])
    # The human rows are unchanged: no machine rater among the annotators' comparisons.
    assert not any(r["rater_a"].startswith("llm:") for r in rows if r["comparison"] in ("all", "pair", "vs_final"))


def test_overview_states_the_decision(coded_study):
    """The researcher's overview shows the machine coder's job, kappas with CIs and the decision."""
    study, _, _ = coded_study
    client = Client()
    client.force_login(make_user("res", "researchers", staff=True))
    html = client.get(f"/annotate/{study.slug}/overview/").content.decode()
    assert 'id="machine-coder"' in html and "llm:gpt-test" in html
    assert "identified: the machine coder is non-inferior to a second human coder" in html
    assert "human_vs_human" in html and " to " in html


def test_llm_agreement_command_prints_kappas_and_the_decision(coded_study):
    """llm_agreement prints each comparison with its CI and the decision per label in words."""
    study, _, _ = coded_study
    out = io.StringIO()
    call_command("llm_agreement", study.slug, "--model", "gpt-test", "--margin", "0.2", stdout=out)
    text = out.getvalue()
    assert "machine_vs_final" in text and "95% CI [" in text
    assert "identified: the machine coder is non-inferior" in text and "- 0.2 =" in text
    assert "surface_difference: cannot decide" in text


def test_commands_refuse_bad_input_with_a_message(demo_study, coder):
    """Unknown study, model, margin or job: a CommandError message, nothing created."""
    with pytest.raises(CommandError, match="No study"):
        call_command("llm_annotate", "nope", "--model", "m", "--sync")
    with pytest.raises(CommandError, match="--model is required"):
        call_command("llm_annotate", demo_study.slug)
    with pytest.raises(CommandError, match="No machine-coding job 99"):
        call_command("llm_annotate", demo_study.slug, "--cancel", "99")
    with pytest.raises(CommandError, match="No machine labels"):
        call_command("llm_agreement", demo_study.slug, "--model", "m")
    with pytest.raises(CommandError):
        call_command("llm_annotate", demo_study.slug, "--model", "m", "--label", "condition")
    assert MachineLabel.objects.count() == 0


def test_kappa_ci_leaves_out_the_few_resamples_without_a_kappa():
    """With 1-5% degenerate resamples the interval is scipy's over the defined resamples."""
    a = [1] * 4 + [0] * 26
    b = [1] * 3 + [0] * 27
    got = kappa_with_ci(a, b, seed=SEED)
    res = bootstrap((np.array(a), np.array(b)), lambda x, y: cohen_kappa_score(x, y),
                    paired=True, vectorized=False, n_resamples=2000, method="percentile",
                    rng=np.random.default_rng(SEED))
    nan_share = np.isnan(res.bootstrap_distribution).mean()
    assert 0 < nan_share < 0.05  # the case this test is about
    low, high = np.nanpercentile(res.bootstrap_distribution, [2.5, 97.5])
    assert (got.ci_low.value, got.ci_high.value) == (pytest.approx(low), pytest.approx(high))


def test_overview_counts_missing_machine_labels(demo_study, coder):
    """The overview's job table shows the machine's missing labels (two invalid replies)."""
    complete_participants(demo_study.slug, 1)
    coder.script = ["{", "{"]
    call_command("llm_annotate", demo_study.slug, "--model", "gpt-test", "--sync", stdout=io.StringIO())
    client = Client()
    client.force_login(make_user("res", "researchers", staff=True))
    html = client.get(f"/annotate/{demo_study.slug}/overview/").content.decode()
    table = html[html.index('class="machine-jobs"'):]
    table = table[: table.index("</table>")]
    assert "<td>Succeeded</td><td>3/3</td><td>1</td>" in table
