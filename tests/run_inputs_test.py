"""`kbert.run_inputs`: a recorded run pins the data files and saved models it read."""

import hashlib
import json
import subprocess
import sys
import textwrap

from kbert import run_inputs

ROOT = run_inputs.ROOT


def test_files_read_under_the_data_directory_or_named_are_pinned_by_their_hash(tmp_path):
    data = tmp_path / "data"
    (data / "trec").mkdir(parents=True)
    (data / "trec" / "train.txt").write_text("DESC:def what is a bank ?\n")
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("not an input")
    named = tmp_path / "model.safetensors"
    named.write_bytes(b"\x00weights")
    script = textwrap.dedent(
        f"""
        import json
        from kbert import run_inputs
        run_inputs.watch_inputs()
        open({str(data / "trec" / "train.txt")!r}).read()
        open({str(elsewhere)!r}).read()  # outside the data directory and the checkout
        open({str(data / "written.txt")!r}, "w").write("an output")
        run_inputs.note_input({str(named)!r})  # read by a reader Python does not see
        print(json.dumps(run_inputs.pinned_inputs({str(data)!r})))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT
    )
    pinned = json.loads(result.stdout.splitlines()[-1])
    expected = hashlib.sha256(b"DESC:def what is a bank ?\n").hexdigest()
    assert pinned == {
        "$KBERT_DATA_DIR/trec/train.txt": expected,
        named.as_posix(): hashlib.sha256(b"\x00weights").hexdigest(),
    }


def test_inside_the_checkout_models_are_inputs_and_code_is_not():
    assert run_inputs._label(ROOT / "saved_models/lab01/model.keras", None, False) == (
        "saved_models/lab01/model.keras"
    )
    assert run_inputs._label(ROOT / "runs/x/vocab.txt", None, False) == "runs/x/vocab.txt"
    assert run_inputs._label(ROOT / "kbert/files.py", None, False) is None
    assert run_inputs._label(ROOT / ".venv/lib/x.json", None, False) is None
    assert run_inputs._label(ROOT / "docs/results/lab.json", None, False) is None
    assert run_inputs._label(ROOT.parent / "other/x.txt", None, False) is None


def test_what_a_run_wrote_is_pinned_as_a_reader_of_it_pins_it(tmp_path):
    model = tmp_path / "lab01_causal"
    (model / "assets").mkdir(parents=True)
    (model / "encoder.keras").write_bytes(b"weights")
    (model / "assets" / "vocab.txt").write_text("[PAD]\n")
    pinned = run_inputs.pin_outputs(model)
    assert pinned == {
        str(model / "assets" / "vocab.txt"): hashlib.sha256(b"[PAD]\n").hexdigest(),
        str(model / "encoder.keras"): hashlib.sha256(b"weights").hexdigest(),
    }
    inside = run_inputs.ROOT / "saved_models"
    if inside.is_dir():  # inside the checkout, labelled checkout-relative like an input
        for label in run_inputs.pin_outputs(inside):
            assert label.startswith("saved_models/")
    try:
        run_inputs.pin_outputs(tmp_path / "missing")
    except ValueError as error:
        assert "is not one" in str(error) and "missing" in str(error)
    else:
        raise AssertionError("a missing folder must be refused")
