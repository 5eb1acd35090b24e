"""Benchmarks of the platform (see bench/README.md).

``load.py`` (the participant flow under load; modules ``flow``, ``driver``, ``server``, ``cpu``,
``checks``, ``report``), ``researcher.py`` (researcher pages and exports on a large generated
study), ``profile_flow.py`` (one flow in process, profiled), ``bench_mining.py`` (pattern mining),
``pyspy_summary.py`` (summary of a py-spy profile).
"""
