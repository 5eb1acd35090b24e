"""Writes of annotation, one topic per module (import from the module, not from here):

- :mod:`.pool`: the study's pool lock, annotator seats and the places in use;
- :mod:`.queue`: items for new answers, reserving, opening (read-only) and skipping items;
- :mod:`.labels`: an annotator's label (validation, save, revisions, codebook tags);
- :mod:`.final_labels`: final labels by agreement;
- :mod:`.adjudication`: final labels set by an adjudicator;
- :mod:`.machine_acceptance`: the researcher accepting (or revoking) the machine coder's labels
  as final for a label field.

The CSV import of labels is :mod:`spotlight_study.annotation.label_import`; the errors are in
:mod:`spotlight_study.annotation.errors`.
"""
