import django.db.models
from django.db import migrations

import spotlight_study.studies.models


class Migration(migrations.Migration):
    dependencies = [
        ("studies", "0004_constraint_messages"),
    ]

    operations = [
        migrations.AddField(
            model_name="study",
            name="definition_version",
            field=django.db.models.BigIntegerField(
                default=spotlight_study.studies.models.new_definition_version, editable=False
            ),
        ),
    ]
