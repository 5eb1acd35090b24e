import pytest
def test_show(built_study, capsys):
    from spotlight_study.studies.export import study_file_data, study_file_text
    t = study_file_text(study_file_data(built_study))
    i = t.index("- key: pronouns\n")
    with capsys.disabled():
        print(t[i:i+2600])
