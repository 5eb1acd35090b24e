"""Two versions of one label side by side, for the item page after a save from a stale tab
(the saved label and the page's, :class:`~.errors.StaleLabel`)."""

from __future__ import annotations

#: Field names and the wording used when two versions of a label are shown side by side.
_VERSION_FIELDS = (
    ("identified", "Target identified"),
    ("surface_difference", "Surface difference named"),
    ("no_difference", "No difference claimed"),
    ("tags", "Tags"),
    ("exclusion", "Exclusion"),
    ("exclusion_note", "Note"),
)


def label_versions(*, saved: dict, submitted: dict) -> list[dict]:
    """Two versions of a label as rows ``{"name", "label", "saved", "submitted", "differs"}``.

    ``saved`` and ``submitted`` are label dicts (:meth:`~.models.LabelFields.label_dict`);
    values are shown as text (``yes``/``no``, tags joined by commas, ``-`` for nothing).
    """

    def text(name: str, value) -> str:
        if isinstance(value, bool):
            return "yes" if value else "no"
        if name == "tags":
            return ", ".join(sorted(value)) or "-"
        return str(value) or "-"

    rows = []
    for name, label in _VERSION_FIELDS:
        a, b = text(name, saved[name]), text(name, submitted[name])
        rows.append({"name": name, "label": label, "saved": a, "submitted": b, "differs": a != b})
    return rows
