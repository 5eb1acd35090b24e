"""Preregistration: a study's analysis plan, frozen with its SHA-256 before the data come in."""
