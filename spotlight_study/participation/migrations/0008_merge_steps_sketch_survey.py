# Joins three lines of work that each added a 0006: the step as plain text (and the ending that
# followed it), the near-duplicate sketch index and the typed survey answers. None touches another's
# tables, so the order between them does not matter.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('participation', '0006_near_duplicate_sketch'),
        ('participation', '0006_survey_item_types'),
        ('participation', '0007_participant_ending'),
    ]

    operations = [
    ]
