"""Fill ``Setting.provenance`` of the settings built on the Stimuli pages before it existed, from
their ``SettingSource`` rows, so that ``export_study`` writes their provenance too."""
from django.db import migrations

from spotlight_study.stimuli.provenance import provenance_record


class _Models:
    def __init__(self, apps):
        self.Output = apps.get_model("stimuli", "Output")
        self.MinedPattern = apps.get_model("stimuli", "MinedPattern")
        self.GenerationJob = apps.get_model("stimuli", "GenerationJob")


def fill(apps, schema_editor):
    SettingSource = apps.get_model("stimuli", "SettingSource")
    models = _Models(apps)
    sources = SettingSource.objects.select_related(
        "setting", "mining_job__stimulus_set", "target_pattern"
    ).filter(setting__provenance__isnull=True)
    for source in sources:
        source.setting.provenance = provenance_record(source, models=models)
        source.setting.save(update_fields=["provenance"])


class Migration(migrations.Migration):
    dependencies = [
        ("stimuli", "0001_initial"),
        ("studies", "0006_setting_provenance"),
    ]

    operations = [migrations.RunPython(fill, migrations.RunPython.noop)]
