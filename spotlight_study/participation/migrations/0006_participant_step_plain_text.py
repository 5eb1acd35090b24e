"""``Participant.step`` becomes plain text: the step registry (participation/steps/) validates
it, so a new page kind needs no migration. The stored values stay as they are (only the
choices and the model-level default go; neither is in the database), and the migration
reverses to the old field."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('participation', '0005_writing_process'),
    ]

    operations = [
        migrations.AlterField(
            model_name='participant',
            name='step',
            field=models.CharField(max_length=20),
        ),
    ]
