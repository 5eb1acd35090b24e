"""Reading outputs from files: every format and every error case (nothing stored on errors)."""
from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from spotlight_study.stimuli.errors import OutputImportError
from spotlight_study.stimuli.importers import ImportOptions, read_outputs
from spotlight_study.stimuli.models import Output, StimulusSet
from spotlight_study.stimuli.services import stimulus_set_import_files

OPTS = ImportOptions()


def read(file1, file2=None, **options):
    return read_outputs(file1=file1, file2=file2, options=ImportOptions(**options))


def test_json_lists_of_strings_two_files():
    """A JSON list of strings per file gives the two groups in file order."""
    groups = read(("a.json", b'["one", "two"]'), ("b.json", b'["three"]'))
    assert groups.group1 == ["one", "two"]
    assert groups.group2 == ["three"]


def test_json_prompt_shape_takes_the_prompt_as_label():
    """``{"prompt_1": {"prompt", "outputs"}}`` gives the outputs, and the prompt as the group label."""
    a = json.dumps({"prompt_1": {"prompt": "About Dr. Smith", "outputs": ["He is kind.", "He works."]}})
    b = json.dumps({"prompt_1": {"prompt": "About Dr. Li", "outputs": ["She is kind."]}})
    groups = read(("a.json", a.encode()), ("b.json", b.encode()))
    assert (groups.group1, groups.group1_label) == (["He is kind.", "He works."], "About Dr. Smith")
    assert (groups.group2, groups.group2_label) == (["She is kind."], "About Dr. Li")


def test_json_two_prompts_in_one_file():
    """One JSON file with exactly two prompts gives group 1 and group 2 in key order."""
    data = {"p1": {"prompt": "A", "outputs": ["a1", "a2"]}, "p2": {"prompt": "B", "outputs": ["b1"]}}
    groups = read(("both.json", json.dumps(data).encode()))
    assert (groups.group1, groups.group2, groups.group1_label, groups.group2_label) == (["a1", "a2"], ["b1"], "A", "B")


def test_real_smith_and_li_files(smith_li_paths):
    """The real Smith and Li files import with 500 outputs each, newlines kept, prompt as label."""
    smith, li = smith_li_paths
    groups = read((smith.name, smith.read_bytes()), (li.name, li.read_bytes()))
    raw = json.loads(smith.read_text())["prompt_1"]
    assert len(groups.group1) == len(groups.group2) == 500
    assert groups.group1 == raw["outputs"]
    assert groups.group1_label == raw["prompt"]
    assert any("\n" in text for text in groups.group1)


def test_real_farming_file_joins_whitespace_tokens(farming_path):
    """The farming file stores whitespace-split tokens; each output is rebuilt by joining them with spaces."""
    raw = json.loads(farming_path.read_text())
    groups = read((farming_path.name, farming_path.read_bytes()))
    assert len(groups.group1) == len(groups.group2) == 500
    assert groups.group1[0] == " ".join(raw["instances1"][0])
    assert groups.group2[-1] == " ".join(raw["instances2"][-1])
    assert (groups.group1_label, groups.group2_label) == (raw["prompt1"], raw["prompt2"])


def test_jsonl_text_field():
    """JSONL reads the ``text`` field of each line and skips blank lines."""
    data = b'{"text": "first", "id": 1}\n\n{"text": "second", "id": 2}\n'
    groups = read(("a.jsonl", data), ("b.jsonl", b'{"text": "x"}\n'))
    assert groups.group1 == ["first", "second"]


def test_jsonl_missing_text_field_is_named():
    """A JSONL line without the text field is reported with its line number."""
    with pytest.raises(OutputImportError, match=r"a\.jsonl, line 2 has no 'text' field"):
        read(("a.jsonl", b'{"text": "ok"}\n{"body": "no"}\n'), ("b.jsonl", b'{"text": "x"}\n'))


def test_jsonl_one_file_with_group_field():
    """One JSONL file with a group field splits into the two groups."""
    data = b'{"text": "a", "group": 1}\n{"text": "b", "group": 2}\n{"text": "c", "group": 1}\n'
    groups = read(("both.jsonl", data), group_column="group")
    assert (groups.group1, groups.group2) == (["a", "c"], ["b"])


def test_csv_chosen_column():
    """A CSV file is read from the chosen column; other columns are ignored; quoted newlines kept."""
    data = b'id,answer,model\n1,"Hello, world",x\n2,"two\nlines",x\n'
    groups = read(("a.csv", data), ("b.csv", b"answer\nother\n"), column="answer")
    assert groups.group1 == ["Hello, world", "two\nlines"]
    assert groups.group2 == ["other"]


def test_csv_missing_column_lists_the_columns():
    """Choosing a column the CSV lacks names the columns it has."""
    with pytest.raises(OutputImportError, match=r"a\.csv has no column 'text' \(columns: id, answer\)"):
        read(("a.csv", b"id,answer\n1,x\n"), ("b.csv", b"text\ny\n"))


def test_csv_one_file_with_group_column_and_custom_values():
    """One CSV with a group column and custom group values (smith/li) splits into two groups."""
    data = b"who,text\nsmith,He came.\nli,She came.\nsmith,He left.\n"
    groups = read(("both.csv", data), group_column="who", group1_value="smith", group2_value="li")
    assert (groups.group1, groups.group2) == (["He came.", "He left."], ["She came."])


def test_csv_unknown_group_value_is_reported():
    """A group value that is neither group's value is reported with its record number."""
    with pytest.raises(OutputImportError, match=r"record 2: group '3' is neither '1' nor '2'"):
        read(("both.csv", b"group,text\n1,a\n3,b\n"), group_column="group")


def test_plain_text_one_output_per_line():
    """Plain text gives one output per line; blank lines and CRLF endings are handled."""
    groups = read(("a.txt", b"first line\r\n\r\nsecond line\r\n"), ("b.txt", b"x\n"))
    assert groups.group1 == ["first line", "second line"]


def test_plain_text_cannot_hold_both_groups():
    """A single plain-text file is refused: it holds one group."""
    with pytest.raises(OutputImportError, match="plain text, which holds one group"):
        read(("a.txt", b"x\ny\n"))


def test_utf8_byte_order_mark_is_accepted():
    """A UTF-8 byte-order mark at the start is not part of the first output."""
    groups = read(("a.txt", "\ufeffcafé\n".encode("utf-8")), ("b.txt", b"x\n"))
    assert groups.group1 == ["café"]


@pytest.mark.parametrize(
    ("group2_name", "group2_data"),
    [("b.json", b"[]"), ("b.txt", b"\n  \n"), ("b.csv", b"text\n"), ("b.jsonl", b"")],
)
def test_empty_group_is_refused(group2_name, group2_data):
    """An empty group, in any format, is refused with the group named."""
    with pytest.raises(OutputImportError, match="Group 2 has no outputs"):
        read(("a.json", b'["x"]'), (group2_name, group2_data))


def test_one_file_with_an_empty_group_is_refused():
    """One file whose group column never names group 2 is refused for an empty group 2."""
    with pytest.raises(OutputImportError, match="Group 2 has no outputs"):
        read(("both.csv", b"group,text\n1,a\n1,b\n"), group_column="group")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'["ok", 42]', r"a\.json, item 1: expected text, found a number \(42\)"),
        (b'["ok", null]', r"item 1: expected text, found null"),
        (b'["ok", ["nested"]]', r"item 1: expected text, found a list"),
        (b'["ok", {"text": "x"}]', r"item 1: expected text, found an object"),
        (b'["ok", true]', r"item 1: expected text, found a boolean"),
        (b'["ok", "   "]', r"item 1: the text is empty"),
        (b'{"p": {"prompt": "P", "outputs": ["a", 3.5]}}', r"p\.outputs\[1\]: expected text, found a number"),
    ],
)
def test_non_text_values_are_refused(data, message):
    """Values that are not text (numbers, null, lists, objects, booleans, blanks) are named with their position."""
    with pytest.raises(OutputImportError, match=message):
        read(("a.json", data), ("b.json", b'["x"]'))


def test_non_text_value_in_jsonl_is_refused():
    """A JSONL text field holding a number is refused with its line."""
    with pytest.raises(OutputImportError, match=r"line 1, field 'text': expected text, found a number"):
        read(("a.jsonl", b'{"text": 7}\n'), ("b.jsonl", b'{"text": "x"}\n'))


def test_non_text_token_in_farming_shape_is_refused():
    """A token that is not a string in the instances shape is refused with its position."""
    data = json.dumps({"instances1": [["a", 1]], "instances2": [["b"]]}).encode()
    with pytest.raises(OutputImportError, match=r"instances1\[0\]\[1\]: expected text, found a number"):
        read(("both.json", data))


def test_undecodable_bytes_are_refused_with_their_position():
    """Bytes that are not UTF-8 are refused, naming the byte and its offset."""
    data = "caf".encode() + b"\xff" + b" latte\n"
    with pytest.raises(OutputImportError, match=r"a\.txt is not UTF-8 text: the byte 0xff at position 3"):
        read(("a.txt", data), ("b.txt", b"x\n"))


def test_latin1_file_is_refused():
    """A Latin-1 file (é as 0xe9) is refused as not UTF-8."""
    with pytest.raises(OutputImportError, match="0xe9"):
        read(("a.csv", "text\ncafé\n".encode("latin-1")), ("b.txt", b"x\n"))


def test_file_over_the_limit_is_refused():
    """A file over the size limit is refused, naming its size and the limit."""
    with pytest.raises(OutputImportError, match=r"big\.txt is 0\.0 MB; the limit is 0\.0 MB"):
        read(("big.txt", b"x" * 101), ("b.txt", b"x\n"), max_bytes=100)


def test_invalid_json_names_line_and_column():
    """Malformed JSON is reported with its line and column."""
    with pytest.raises(OutputImportError, match=r"a\.json is not valid JSON \(line 2, column"):
        read(("a.json", b'["x",\n  oops]'), ("b.json", b'["y"]'))


def test_unknown_extension_asks_for_a_format():
    """With format auto, an unknown extension asks the researcher to choose the format."""
    with pytest.raises(OutputImportError, match="Cannot tell the format of a.dat"):
        read(("a.dat", b"x"), ("b.txt", b"y"))


def test_format_can_be_forced():
    """A chosen format overrides the extension."""
    groups = read(("a.dat", b'["x"]'), ("b.dat", b'["y"]'), format="json")
    assert (groups.group1, groups.group2) == (["x"], ["y"])


def test_group_file_with_two_groups_is_refused_as_a_group():
    """A file holding both groups (instances1/instances2) given as group 1 of two files is refused."""
    data = json.dumps({"instances1": [["a"]], "instances2": [["b"]]}).encode()
    with pytest.raises(OutputImportError, match="holds both groups"):
        read(("both.json", data), ("b.json", b'["y"]'))


@pytest.mark.django_db
def test_service_stores_outputs_with_indices():
    """The import service stores every output with its group and 0-based index."""
    s = stimulus_set_import_files(
        title="t",
        file1=SimpleUploadedFile("a.txt", b"a0\na1\n"),
        file2=SimpleUploadedFile("b.txt", b"b0\n"),
    )
    rows = list(Output.objects.filter(stimulus_set=s).values_list("group", "index", "text"))
    assert rows == [(1, 0, "a0"), (1, 1, "a1"), (2, 0, "b0")]
    assert s.source == StimulusSet.Source.IMPORTED


@pytest.mark.django_db
def test_service_refuses_an_oversized_upload_before_reading(settings):
    """The upload's size is checked against STIMULI_MAX_UPLOAD_BYTES before it is read; nothing stored."""
    settings.STIMULI_MAX_UPLOAD_BYTES = 10

    class Unreadable(SimpleUploadedFile):
        def read(self, *args):
            raise AssertionError("an oversized upload must not be read")

    with pytest.raises(OutputImportError, match="the limit is"):
        stimulus_set_import_files(
            title="t", file1=Unreadable("a.txt", b"x" * 11), file2=SimpleUploadedFile("b.txt", b"y\n")
        )
    assert StimulusSet.objects.count() == 0


@pytest.mark.parametrize("where", ["row", "header"])
def test_a_csv_field_over_128_kib_is_refused_naming_its_line(where):
    """A CSV field over 128 KiB (in a row, or in the header) is refused with its line, not a 500."""
    big = "a" * (130 * 1024)
    data = f"text\nfirst\nsecond\n\"{big}\"\nlast\n" if where == "row" else f"\"{big}\"\nfirst\n"
    line = 4 if where == "row" else 1
    with pytest.raises(OutputImportError, match=rf"a\.csv, line {line}: a field is over 128 KiB"):
        read(("a.csv", data.encode()), ("b.csv", b"text\ny\n"))
