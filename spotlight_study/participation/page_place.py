"""Where a step page lies in the flow (Back and Forward): kept for its importers; the place of
each page is its step spec's (``StepSpec.place``), put in order by the registry in
:mod:`.steps.place`."""
from __future__ import annotations

from .steps.place import PagePlace, page_place, place_note_pattern

__all__ = ["PagePlace", "page_place", "place_note_pattern"]
