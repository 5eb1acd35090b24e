from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("studies", "0005_study_definition_version"),
    ]

    operations = [
        migrations.AddField(
            model_name="setting",
            name="provenance",
            field=models.JSONField(
                blank=True,
                editable=False,
                help_text="Settings built from mined patterns: stimulus set, mining job, patterns, sample.",
                null=True,
            ),
        ),
    ]
