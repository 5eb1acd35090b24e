from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("participation", "0002_participant_is_pilot"),
    ]

    operations = [
        migrations.AddField(
            model_name="participant",
            name="draft",
            field=models.JSONField(blank=True, default=None, null=True),
        ),
    ]
