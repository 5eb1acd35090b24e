# Joins three lines of work that each added a 0006: the step as plain text (and the ending
# that followed it), the near-duplicate sketch index (and the cells' place counts after it) and
# the typed survey answers.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('participation', '0007_cell_place_counts'),
        ('participation', '0006_survey_item_types'),
        ('participation', '0007_participant_ending'),
    ]

    operations = [
    ]
