"""Smoke runs of the benchmarks under bench/."""
