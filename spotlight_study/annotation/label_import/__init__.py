"""The CSV import of labels made elsewhere (e.g. in a spreadsheet), in three steps:

- :mod:`.parse`: text -> header and raw rows (NUL bytes, columns, CSV structure);
- :mod:`.validate`: raw rows -> :class:`~.validate.ImportRow` (item, annotator, label) or
  errors by line, including the k-annotators limit;
- :mod:`.write`: the rows -> annotations and submitted places, under the pool lock.

:func:`.importer.labels_import` runs them; nothing is written unless every row is valid.
"""
