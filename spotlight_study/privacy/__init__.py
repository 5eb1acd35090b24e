"""Erasure on request and the purge of Prolific IDs after a study closes (data-protection duties).

This app may import participation, annotation and prolific; nothing imports it.
"""
