"""Pairwise Cohen's kappa (annotator x annotator, annotator x final) checked against sklearn."""

import csv
import io

import pytest
from django.test import Client
from sklearn.metrics import cohen_kappa_score

from analysis.stats import agreement as agreement_stats
from analysis.stats.agreement import pairwise_agreement
from spotlight_study.annotation.exports import AGREEMENT_COLUMNS, export_csv_text
from spotlight_study.annotation.label_import.importer import labels_import
from spotlight_study.annotation.models import Annotation, Item, StudyAnnotator
from spotlight_study.annotation.overview import researcher_overview
from spotlight_study.annotation.services.adjudication import adjudication_save
from spotlight_study.annotation.services.labels import LabelInput
from spotlight_study.annotation.services.queue import items_sync

from .conftest import make_user

N = None
# Three annotators' "identified" labels of six items (1 = yes); ann3 skipped item 5.
LABELS = {
    "ann1": [1, 1, 0, 0, 1, 0],
    "ann2": [1, 0, 0, 0, 1, 1],
    "ann3": [1, 1, 0, 1, 0, N],
}
# What the adjudicator decides where the three annotators disagree (items 1, 3, 4); item 5 has
# two labels of the three it needs, so it has no final label yet.
ADJUDICATED = {1: 1, 3: 0, 4: 1}


def _kappa(a, b):
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    return cohen_kappa_score([x for x, _ in pairs], [y for _, y in pairs])


def test_pairwise_agreement_matches_sklearn_on_every_pair():
    """Each pair's kappa is sklearn's cohen_kappa_score over the items both rated."""
    rows = [LABELS["ann1"], LABELS["ann2"], LABELS["ann3"]]
    final = [1, 1, 0, 0, 1, N]
    result = pairwise_agreement(rows, ["a1", "a2", "a3"], reference=final)
    got = {(p.rater_a, p.rater_b): p.result for p in result}
    assert list(got) == [("a1", "a2"), ("a1", "a3"), ("a2", "a3")] + [
        (a, "final") for a in ("a1", "a2", "a3")
    ]
    named = dict(zip(["a1", "a2", "a3", "final"], [*rows, final], strict=True))
    for (a, b), res in got.items():
        assert res.cohen_kappa.value == pytest.approx(_kappa(named[a], named[b]))
    assert got[("a1", "a3")].n_items == 5 and got[("a3", "final")].n_items == 5
    # Each pair counts the ratings of the items both rated, never a rating without counterpart.
    assert all(p.result.n_ratings == 2 * p.result.n_items for p in result)
    assert got[("a1", "final")].cohen_kappa.value == pytest.approx(1.0)


def test_pairwise_agreement_leaves_out_pairs_without_a_shared_item_and_checks_input():
    """Raters who share no item get no row; names must match the rows."""
    result = pairwise_agreement([[1, N], [N, 0], [1, 0]], ["a", "b", "c"])
    assert [(p.rater_a, p.rater_b) for p in result] == [("a", "c"), ("b", "c")]
    with pytest.raises(ValueError, match="raters"):
        pairwise_agreement([[1, 0], [0, 1]], ["only one"])
    with pytest.raises(ValueError, match="reference"):
        pairwise_agreement([[1, 0], [0, 1]], ["a", "b"], reference=[1])


@pytest.fixture
def labeled_study(demo_study, answered, adjudicator):
    """The demo study with k=3, LABELS imported for its six items and disagreements adjudicated."""
    demo_study.annotators_per_item = 3
    demo_study.save(update_fields=["annotators_per_item"])
    items_sync(study=demo_study)
    items = list(Item.objects.filter(study=demo_study).order_by("pk"))
    lines = ["item,annotator,identified,surface_difference,no_difference,exclusion"]
    for name, values in LABELS.items():
        lines += [
            f"{it.public_id},{name},{v},0,0,none"
            for it, v in zip(items, values, strict=True)
            if v is not N
        ]
    labels_import(study=demo_study, text="\n".join(lines) + "\n")
    for index, value in ADJUDICATED.items():
        adjudication_save(
            study=demo_study,
            adjudicator=adjudicator,
            public_id=items[index].public_id,
            label=LabelInput(
                identified=bool(value), surface_difference=False, no_difference=False
            ),
        )
    return demo_study


def _final_values():
    values = [LABELS["ann1"][i] for i in range(5)] + [N]
    for index, value in ADJUDICATED.items():
        values[index] = value
    return values


def test_agreement_csv_has_pairwise_and_vs_final_rows_equal_to_sklearn(labeled_study):
    """agreement.csv's pair and vs_final rows for 'identified' hold sklearn's kappas."""
    text = export_csv_text(study=labeled_study, name="agreement")
    reader = csv.DictReader(io.StringIO(text))
    assert reader.fieldnames == AGREEMENT_COLUMNS
    rows = [r for r in reader if r["field"] == "identified" and r["scope"] == "all"]
    seat = {
        s.user.username: s.pseudonym
        for s in StudyAnnotator.objects.filter(study=labeled_study).select_related("user")
    }
    by_pair = {(r["comparison"], r["rater_a"], r["rater_b"]): r for r in rows}
    assert ("all", "", "") in by_pair
    named = {seat[n]: v for n, v in LABELS.items()} | {"final": _final_values()}
    expected = set()
    for x, y in [("ann1", "ann2"), ("ann1", "ann3"), ("ann2", "ann3")]:
        a, b = sorted([seat[x], seat[y]])
        expected.add(("pair", a, b))
    expected |= {("vs_final", seat[n], "final") for n in LABELS}
    assert set(by_pair) - {("all", "", "")} == expected
    for (comparison, a, b), row in by_pair.items():
        if comparison == "all":
            continue
        assert float(row["cohen_kappa"]) == pytest.approx(_kappa(named[a], named[b]), abs=1e-6)
        assert int(row["n_annotators"]) == 2
    # Per setting too: every setting scope has its own pair rows.
    scopes = {
        r["scope"]
        for r in csv.DictReader(io.StringIO(text))
        if r["comparison"] == "pair" and r["field"] == "identified"
    }
    assert scopes == {"all"} | {it.setting.key for it in Item.objects.filter(study=labeled_study)}


def test_overview_shows_the_kappa_matrix(labeled_study):
    """The overview page shows annotator x annotator and annotator x final kappas."""
    client = Client()
    client.force_login(make_user("res", "researchers", staff=True))
    page = client.get(f"/annotate/{labeled_study.slug}/overview/")
    assert page.status_code == 200
    html = page.content.decode()
    start = html.index('id="kappa-identified"')
    table = html[start : html.index("</table>", start)]
    seat = {
        s.user.username: s.pseudonym
        for s in StudyAnnotator.objects.filter(study=labeled_study).select_related("user")
    }
    kappa = _kappa(LABELS["ann1"], LABELS["ann2"])
    assert f"{kappa:.3f} (6)" in table
    vs_final = _kappa(LABELS["ann3"], _final_values())
    assert f"{vs_final:.3f} (5)" in table
    for name in seat.values():
        assert f"<th>{name}</th>" in table
    assert "final labels" in table


def test_overview_agreement_follows_a_changed_label(labeled_study):
    """A label changed after the overview was computed (and cached) gives the new kappa."""
    before = researcher_overview(study=labeled_study)
    first = Item.objects.filter(study=labeled_study).order_by("pk").first()
    # ann2 now says no to item 0: a plain update, no save() or signal involved.
    Annotation.objects.filter(item=first, annotator__username="ann2").update(identified=False)
    after = researcher_overview(study=labeled_study)
    changed = LABELS["ann2"].copy()
    changed[0] = 0

    def pair_kappa(overview):
        matrix = next(m for m in overview["kappa_matrices"] if m["field"] == "identified")
        return matrix["rows"][0]["cells"][1]["kappa"].value

    seat = {
        s.user.username: s.number
        for s in StudyAnnotator.objects.filter(study=labeled_study).select_related("user")
    }
    assert (seat["ann1"], seat["ann2"]) == (1, 2)
    assert pair_kappa(before) == pytest.approx(_kappa(LABELS["ann1"], LABELS["ann2"]))
    assert pair_kappa(after) == pytest.approx(_kappa(LABELS["ann1"], changed))
    assert pair_kappa(after) != pair_kappa(before)
    row = next(r for r in after["agreement"] if r.field == "identified" and r.scope == "all")
    rows = [LABELS["ann1"], changed, LABELS["ann3"]]
    assert row.result == agreement_stats.agreement(rows)


def test_overview_without_agreement_has_the_same_progress(labeled_study):
    """with_agreement=False (the API's progress) gives the same counts, no agreement keys."""
    full = researcher_overview(study=labeled_study)
    progress = researcher_overview(study=labeled_study, with_agreement=False)
    assert set(full) - set(progress) == {"agreement", "kappa_matrices"}
    assert progress == {k: v for k, v in full.items() if k in progress}


def test_overview_says_why_there_is_no_kappa_when_annotators_share_no_item(demo_study, answered):
    """Two annotators who labeled different answers have no pair to compare: the pairwise
    section says so, not "No labels yet." (found by a try-out, with labels on the page above)."""
    items_sync(study=demo_study)
    items = list(Item.objects.filter(study=demo_study).order_by("pk"))
    lines = ["item,annotator,identified,surface_difference,no_difference,exclusion"]
    lines += [f"{it.public_id},ann1,1,0,0,none" for it in items[:3]]
    lines += [f"{it.public_id},ann2,0,0,0,none" for it in items[3:]]
    labels_import(study=demo_study, text="\n".join(lines) + "\n")
    client = Client()
    client.force_login(make_user("res", "researchers", staff=True))
    html = client.get(f"/annotate/{demo_study.slug}/overview/").content.decode()
    pairwise = html[html.index("Pairwise agreement (Cohen's kappa)</h2>"):html.index('id="machine-coder"')]
    assert "No labels yet." not in pairwise
    assert "No two annotators have labeled the same answer yet." in pairwise
