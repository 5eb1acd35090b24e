"""Move the pilot answers already in the annotation queues into the pilot annotation round.

Before the pilot round existed, a pilot participant's answers became items like real ones and
could be labelled, agreed on and adjudicated with them. This marks every item whose participant
is a pilot (``Participant.is_pilot``) as ``Item.is_pilot``, which takes it out of the real
queues, agreement and final labels. Nothing else changes: its assignments, annotations, their
revisions, its final label (agreed, adjudicated or machine) and its machine labels stay on the
item, now reported in the pilot round. The round itself stays closed until the researcher opens
it (``manage.py pilot_annotation <slug> --open``).

Reversing it is a no-op: the previous migration's reversal removes the field.
"""

from django.db import migrations


def pilot_items_mark(apps, schema_editor):
    """Set ``is_pilot`` on the items of pilot participants (one UPDATE)."""
    Item = apps.get_model("annotation", "Item")
    Participant = apps.get_model("participation", "Participant")
    pilots = Participant.objects.filter(is_pilot=True).values("pk")
    Item.objects.filter(response__participant__in=pilots, is_pilot=False).update(is_pilot=True)


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0006_pilot_round"),
        ("participation", "0002_participant_is_pilot"),
    ]

    operations = [migrations.RunPython(pilot_items_mark, migrations.RunPython.noop, elidable=False)]
