"""Study-file codebooks the tests share: a German one (the issue's example) and one that uses
every field type and key of the schema (the export round trip needs every schema path)."""
from __future__ import annotations

import copy

#: The issue's German codebook: an ordinal outcome and multi_choice tags with capitals and umlauts.
GERMAN_CODEBOOK = {
    "fields": [
        {"key": "erkannt", "label": "Unterschied erkannt", "type": "ordinal",
         "options": ["nein", "teilweise", "ja"],
         "help": "Hat die Antwort den Zielunterschied benannt?"},
        {"key": "tags", "label": "Weitere Unterschiede", "type": "multi_choice",
         "options": ["Erwähnt Geschlecht", "Länge", "Straße"], "required": False},
        {"key": "notiz", "label": "Notiz", "type": "note", "required": False},
    ],
    "outcome": "erkannt",
}

#: Every type and every key: yes_no, choice with a success mapping, multi_choice, ordinal,
#: number with min and max, note; applies_to and required set.
FULL_CODEBOOK = {
    "fields": [
        {"key": "verdict", "label": "Verdict", "help": "How well the answer names it.",
         "type": "choice", "options": ["yes", "partly", "no"], "required": True,
         "applies_to": "both"},
        {"key": "clear", "label": "Clearly written", "type": "yes_no", "applies_to": "main"},
        {"key": "tags", "label": "Other differences", "type": "multi_choice",
         "options": ["Length"], "required": False},
        {"key": "confidence", "label": "Confidence", "type": "ordinal",
         "options": ["low", "medium", "high"]},
        {"key": "count", "label": "Differences named", "type": "number", "min": 0, "max": 10},
        {"key": "remark", "label": "Remark", "type": "note", "required": False,
         "applies_to": "training"},
    ],
    "outcome": "verdict",
    "success": {"yes": "success", "partly": "failure", "no": "failure"},
}


def german_data(demo_data: dict) -> dict:
    """The demo study file as a German study with :data:`GERMAN_CODEBOOK` (a fresh copy).

    The settings' tags are dropped: the German study declares its tags in the codebook.
    """
    data = copy.deepcopy(demo_data)
    data.update(slug="kodierbuch-de", language="de")
    data["annotation"]["codebook"] = copy.deepcopy(GERMAN_CODEBOOK)
    for entry in data["annotation"]["settings"].values():
        entry["tags"] = []
    return data
