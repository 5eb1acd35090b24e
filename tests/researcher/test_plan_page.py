"""The sample-size planner on the researcher study page: a GET form, numbers from analysis/."""
import re

from analysis import plan_sample_size
from spotlight_study.studies.selectors import study_cells


def test_planner_shows_the_analysis_numbers_for_the_study_design(staff_client, demo_study):
    """The page gives the same n, n with dropout and total as plan_sample_size for the study's cells."""
    url = f"/researcher/{demo_study.slug}/?p_control=0.3&p_treatment=0.6&alpha=0.05&power=0.8&dropout=0.2"
    html = staff_client.get(url).content.decode()
    cells = len(study_cells(demo_study))
    plan = plan_sample_size(0.3, 0.6, dropout=0.2, cells=cells, conditions=len(demo_study.conditions))
    table = re.search(r'<table id="plan-result">(.*?)</table>', html, re.S).group(1)
    assert f"<th>n per condition</th><td>{plan.n_per_condition}</td>" in table
    assert f"<td>{plan.n_per_condition_with_dropout}</td>" in table
    assert f"<td>{plan.n_total} ({cells} cells of {plan.n_per_cell})</td>" in table


def test_planner_without_parameters_shows_only_the_form(staff_client, demo_study):
    """Without parameters the page shows the empty planner form and no result."""
    html = staff_client.get(f"/researcher/{demo_study.slug}/").content.decode()
    assert 'id="plan"' in html and 'name="p_control"' in html
    assert 'id="plan-result"' not in html


def test_planner_bad_input_gives_a_message_not_an_error_page(staff_client, demo_study):
    """P1 <= P0, a dropout of 1 or a non-number give a clear message on the page, no result."""
    base = f"/researcher/{demo_study.slug}/"
    cases = [
        ("?p_control=0.6&p_treatment=0.3&alpha=0.05&power=0.8&dropout=0", "must be larger than p_control"),
        ("?p_control=0.3&p_treatment=0.6&alpha=0.05&power=0.8&dropout=1", "Dropout must be in [0, 1)"),
        ("?p_control=abc&p_treatment=0.6&alpha=0.05&power=0.8&dropout=0", "Give a number for: Identification rate without"),
    ]
    for query, fragment in cases:
        response = staff_client.get(base + query)
        assert response.status_code == 200
        html = response.content.decode()
        assert fragment in html and "Nothing was computed" in html
        assert 'id="plan-result"' not in html
