"""Tokenizing and mining on real LLM outputs, where the answer is known (data README).

Counts are checked against an independent count over the outputs tokenized here with
``spacy.blank("en")``; Fisher p-values against scipy.
"""
from __future__ import annotations

import math
from collections import Counter

import pytest
import spacy
from scipy.stats import fisher_exact

from spotlight_study.stimuli.errors import MiningError, TokenizerError
from spotlight_study.stimuli.mining import mine_ctfidf, mine_premise
from spotlight_study.stimuli.selectors import highlight
from spotlight_study.stimuli.tokenize import load_pipeline, tokenize_texts

N = 150  # outputs per group in the Premise tests (the paper used ~100; 500 is the benchmark)
FEMALE = {"she", "She", "her", "Her", "hers", "herself"}
MALE = {"he", "He", "his", "His", "him", "himself"}


def independent_tokens(texts):
    """spaCy's blank English tokenizer, whitespace tokens dropped: the reference tokenization."""
    nlp = spacy.blank("en")
    return [[t.text for t in doc if not t.is_space] for doc in nlp.pipe(texts)]


def independent_count(token_lists, clauses):
    """Outputs in which every clause has at least one of its tokens."""
    return sum(all(any(tok in set(toks) for tok in clause) for clause in clauses) for toks in token_lists)


@pytest.fixture(scope="module")
def smith_li_tokens(smith_li_outputs):
    """The first N Smith and Li stories, tokenized independently of the app."""
    smith, li = smith_li_outputs
    return independent_tokens(smith[:N]), independent_tokens(li[:N])


@pytest.fixture(scope="module")
def smith_li_premise(smith_li_tokens):
    """Premise patterns of Smith (group 1) vs Li (group 2), tokenized by the app."""
    smith_tokens, li_tokens = smith_li_tokens
    return mine_premise(smith_tokens, li_tokens)


def test_app_tokenization_is_spacy_blank_english(smith_li_outputs, smith_li_tokens):
    """The app's tokenizer gives exactly spaCy blank("en") tokens without whitespace tokens."""
    smith, _ = smith_li_outputs
    assert tokenize_texts(smith[:N]) == smith_li_tokens[0]


def test_tokenize_reports_progress_per_batch():
    """Tokenizing in batches through nlp.pipe reports the running count after each batch."""
    seen = []
    tokens = tokenize_texts(["a b", "c\n\nd", "e"] * 3, batch_size=4, on_progress=seen.append)
    assert seen == [4, 8, 9]
    assert tokens[1] == ["c", "d"]


def test_unknown_pipeline_is_a_clear_error():
    """Naming a spaCy pipeline that is not installed raises a message that says so."""
    with pytest.raises(TokenizerError, match="'xx_not_installed_sm' is not installed"):
        load_pipeline("xx_not_installed_sm")


def test_default_pipeline_needs_no_download():
    """The default pipeline is a blank English pipeline without any trained component."""
    nlp = load_pipeline("")
    assert nlp.lang == "en" and nlp.pipe_names == []


def test_smith_li_pronoun_patterns_lean_the_right_way(smith_li_premise):
    """Premise finds female pronoun patterns leaning to Li (group 2) and male ones leaning to Smith (group 1)."""
    female = [p for p in smith_li_premise if {t for c in p.clauses for t in c} <= FEMALE]
    male = [p for p in smith_li_premise if {t for c in p.clauses for t in c} <= MALE]
    assert female and male
    assert all(p.group == 2 for p in female)
    assert all(p.group == 1 for p in male)
    assert all(p.count_group2 > p.count_group1 for p in female)
    assert all(p.count_group1 > p.count_group2 for p in male)


def test_smith_li_name_patterns(smith_li_premise):
    """The names themselves are found: (Smith) in group 1 only, (Li) in group 2 only."""
    by_clauses = {str(p.clauses): p for p in smith_li_premise}
    smith, li = by_clauses["[['Smith']]"], by_clauses["[['Li']]"]
    assert (smith.group, smith.count_group1, smith.count_group2) == (1, N, 0)
    assert (li.group, li.count_group1, li.count_group2) == (2, 0, N)


def test_premise_counts_match_a_direct_count(smith_li_premise, smith_li_tokens):
    """Every pattern's counts equal an independent count of outputs containing it, per group."""
    smith_tokens, li_tokens = smith_li_tokens
    assert smith_li_premise
    for p in smith_li_premise:
        assert p.count_group1 == independent_count(smith_tokens, p.clauses), p.clauses
        assert p.count_group2 == independent_count(li_tokens, p.clauses), p.clauses
        assert (p.n_group1, p.n_group2) == (N, N)


def test_premise_fisher_p_is_scipys_one_sided_fisher(smith_li_premise):
    """The stored Fisher p-value is scipy's one-sided Fisher test in the pattern's group; MDL gain is negative."""
    # pypremise 0.2 swaps the p-value and the MDL gain in its result objects; the app puts them back.
    for p in smith_li_premise:
        c_in, c_out = (p.count_group1, p.count_group2) if p.group == 1 else (p.count_group2, p.count_group1)
        expected = fisher_exact([[c_in, N - c_in], [c_out, N - c_out]], alternative="greater").pvalue
        assert p.fisher_p == pytest.approx(expected, rel=1e-3), p.clauses
        assert p.mdl_gain is not None and p.mdl_gain < 0  # Premise reports description-length gains as negative bits


def test_premise_to_dict_is_the_documented_shape(smith_li_premise):
    """The JSON form has exactly the documented keys and types."""
    d = smith_li_premise[0].to_dict()
    assert list(d) == ["clauses", "group", "count_group1", "count_group2", "n_group1", "n_group2", "mdl_gain", "fisher_p", "method"]
    assert d["method"] == "premise" and d["group"] in (1, 2)
    assert all(isinstance(c, list) and all(isinstance(t, str) for t in c) for c in d["clauses"])


def test_premise_direction_is_by_share_not_by_argument_position():
    """With groups swapped, the same pattern leans to the other group (the direction follows the data)."""
    a = [["she", "x"]] * 20 + [["he", "y"]] * 2
    b = [["he", "y"]] * 20 + [["she", "z"]] * 2

    def she_groups(g1, g2):
        return {p.group for p in mine_premise(g1, g2) if any("she" in clause for clause in p.clauses)}

    assert she_groups(a, b) == {1}
    assert she_groups(b, a) == {2}


def test_premise_refuses_empty_group_and_tokenless_outputs():
    """An empty group, or an output without tokens (Premise would abort), is a MiningError."""
    with pytest.raises(MiningError, match="Group 2 has no outputs"):
        mine_premise([["a"]], [])
    with pytest.raises(MiningError, match="Group 1 has 1 output\\(s\\) without any token"):
        mine_premise([["a"], []], [["b"]])


def test_ctfidf_smith_li_pronouns(smith_li_tokens):
    """c-TF-IDF puts she/her/She on Li's side and he/his/He on Smith's, counts matching a direct count."""
    smith_tokens, li_tokens = smith_li_tokens
    results = mine_ctfidf(smith_tokens, li_tokens, top_k=10)
    by_token = {p.clauses[0][0]: p for p in results}
    for tok in ("she", "her", "She"):
        assert by_token[tok].group == 2
    for tok in ("he", "his", "He"):
        assert by_token[tok].group == 1
    for tok, p in by_token.items():
        assert p.count_group1 == independent_count(smith_tokens, [[tok]])
        assert p.count_group2 == independent_count(li_tokens, [[tok]])
        assert p.mdl_gain is None and p.method == "ctfidf"
    assert [p.score for p in results] == sorted((p.score for p in results), reverse=True)


def test_ctfidf_score_follows_bertopic_formula(smith_li_tokens):
    """The score equals W(t, c) - W(t, other) with W = tf * log(1 + A / f_t), computed here by hand."""
    smith_tokens, li_tokens = smith_li_tokens
    counts = [Counter(t for toks in smith_tokens for t in toks), Counter(t for toks in li_tokens for t in toks)]
    sizes = [sum(c.values()) for c in counts]
    avg = int(sum(sizes) / 2)

    def weight(tok, c):
        f = counts[0][tok] + counts[1][tok]
        return counts[c][tok] / sizes[c] * math.log(1 + avg / f)

    for p in mine_ctfidf(smith_tokens, li_tokens, top_k=5):
        tok, c = p.clauses[0][0], p.group - 1
        assert p.score == pytest.approx(weight(tok, c) - weight(tok, 1 - c), rel=1e-9)


def test_highlight_escapes_everything_but_the_marks():
    """Highlighting wraps pattern tokens in <mark> and escapes all text, including the tokens."""
    text = 'She said <script>alert("x")</script> & left; she & I.'
    tokens = tokenize_texts([text])[0]
    html = str(highlight(text, tokens, {"she", "&"}))
    assert "<script>" not in html
    assert "&lt;script&gt;" in html
    assert "<mark>she</mark>" in html
    assert "<mark>&amp;</mark>" in html
    assert html.count("<mark>") == 3  # "she" once, "&" twice; "She" is another token


@pytest.mark.parametrize("order", ["as in pypremise 0.2.1", "as a fixed release would give"])
def test_the_p_value_is_told_from_the_mdl_gain_by_value_not_by_version(order):
    """Whatever order the two fields come in, the one matching Fisher's test is the p-value."""
    from spotlight_study.stimuli.mining import premise_fisher_and_mdl

    expected = fisher_exact([[9, 1], [2, 8]], alternative="greater").pvalue
    p_value, mdl_gain = expected * (1 + 1e-6), -41.5
    fields = (mdl_gain, p_value) if order == "as in pypremise 0.2.1" else (p_value, mdl_gain)
    assert premise_fisher_and_mdl(*fields, expected_p=expected) == (p_value, mdl_gain)
    # Both in [0, 1] (a small MDL gain): the one closer to Fisher's value wins.
    assert premise_fisher_and_mdl(0.5, expected, expected_p=expected) == (expected, 0.5)
