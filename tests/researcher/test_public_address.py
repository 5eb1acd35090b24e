"""The launch check's study-address warning: loopback, private and plain-HTTP base URLs."""
from __future__ import annotations

import pytest

from spotlight_study.researcher.launch import GO, WARNING, launch_check
from spotlight_study.researcher.public_address import address_problems

from .test_launch_check import _run, _status


@pytest.mark.parametrize(
    "base_url, words",
    [
        ("https://localhost:8000", "loopback"),
        ("https://study.localhost", "loopback"),
        ("https://127.0.0.1", "loopback"),
        ("https://127.1", "loopback"),  # the shorthand browsers accept for 127.0.0.1
        ("https://[::1]:8443", "loopback"),
        ("https://[::ffff:127.0.0.1]", "loopback"),
        ("https://10.1.2.3", "private network"),
        ("https://172.16.0.9", "private network"),
        ("https://172.31.255.1", "private network"),
        ("https://192.168.1.20:8000/", "private network"),
        ("https://[fd12:3456::1]", "private network"),
        ("https://[fc00::1]", "private network"),
        ("https://169.254.10.1", "link-local"),
        ("https://[fe80::1]", "link-local"),
        ("https://printer.local", "local-network (.local)"),
        ("https://0.0.0.0", "unspecified"),
        ("https://100.64.0.1", "not a public internet address"),
    ],
)
def test_unreachable_hosts_are_named(base_url, words):
    """Each loopback, private, link-local or .local host gives one sentence saying which it is."""
    problems = address_problems(base_url)
    assert len(problems) == 1 and words in problems[0], problems
    assert "could not reach" in problems[0] or "unspecified" in problems[0]


def test_plain_http_is_named_even_for_a_public_host():
    """http:// on a public host warns that Prolific refuses it; https on it is fine."""
    assert address_problems("https://study.example.org") == []
    assert address_problems("https://8.8.8.8") == []
    assert address_problems("https://172.32.0.1") == []  # just outside 172.16.0.0/12
    (problem,) = address_problems("http://study.example.org")
    assert "plain HTTP" in problem and "Prolific refuses" in problem
    both = address_problems("http://192.168.0.5")
    assert len(both) == 2 and "private network" in both[0] and "plain HTTP" in both[1]


@pytest.mark.parametrize("base_url", ["study.example.org", "ftp://study.example.org", "https://", "http://[::1"])
def test_not_a_url_is_a_problem_not_an_error(base_url):
    """A base without an http(s) scheme and host is reported as such, never raised."""
    (problem,) = address_problems(base_url)
    assert problem.startswith(repr(base_url) + " is not")


def test_launch_check_warns_on_a_loopback_address_without_blocking(demo_study, settings):
    """The report carries a Study address warning for a loopback base; a public https one is go."""
    settings.PROLIFIC_STUDY_BASE_URL = "http://127.0.0.1:8000"
    report = launch_check(study=demo_study, check_url=False)
    assert _status(report, "Study address") == WARNING
    detail = next(i.detail for i in report.items if i.check == "Study address")
    assert "loopback" in detail and "plain HTTP" in detail
    settings.PROLIFIC_STUDY_BASE_URL = "https://study.example.org"
    assert _status(launch_check(study=demo_study, check_url=False), "Study address") == GO
    settings.PROLIFIC_STUDY_BASE_URL = ""
    report = launch_check(study=demo_study, check_url=False)
    assert "Study address" not in [i.check for i in report.items]


def test_command_prints_the_address_warning(demo_study, settings):
    """manage.py launch_check --base-url with a private address prints the warning line."""
    settings.PROLIFIC_STUDY_BASE_URL = ""
    out, code = _run(demo_study.slug, "--base-url", "https://192.168.1.20:9", "--timeout", "0.5")
    assert code == 1  # no pilot, and nothing answers there
    assert "[warning] Study address: https://192.168.1.20:9: 192.168.1.20 is a private network address" in out
