"""The study's results: the tidy export that joins participation (answers, timing, flags) and
annotation (final labels), and the ``export_results`` command that writes it.

It sits above both apps so that neither imports the other for the export: ``participation`` and
``annotation`` know nothing of this app, and pages, the API and commands that need the joined
rows import them from :mod:`spotlight_study.results.exports`.
"""
