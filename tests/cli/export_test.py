"""`kbert export`: finished runs (classifier, CRF tagger) and a pretrained encoder become TF
Serving SavedModels; bad requests are refused before anything is written (fast tier)."""

import json
import os
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from kbert.cli.main import main
from kbert.export import load_exported
from kbert.export.saved_model_files import SETTINGS_RECORD
from kbert.export.warmup_requests import WARMUP_FILE, read_warmup_requests
from tests.cli import token_tasks_test
from tests.cli.toy_sentiment import save_tiny_model


def test_a_classification_run_exports_its_labels_and_signatures(trained_run, tmp_path, capsys):
    run = trained_run
    capsys.readouterr()
    export_dir = tmp_path / "saved_models"
    assert (
        main(
            [
                "export",
                str(run),
                "--name",
                "sentiment",
                "--export-dir",
                str(export_dir),
                "--models-config",
            ]
        )
        == 0
    )
    summary = json.loads(capsys.readouterr().out)
    assert summary["path"] == str(export_dir / "sentiment" / "1") and summary["version"] == 1
    assert 'name: "sentiment"' in (export_dir / "models.config").read_text()
    model = load_exported(summary["path"])
    assert {"serving_default", "classify", "embed", "token_ids"} <= set(model.signatures)
    outputs = model.signatures["classify"](text=tf.constant(["the movie was good", ""]))
    assert {label.decode() for label in outputs["labels"].numpy()} <= {"neg", "pos"}
    np.testing.assert_allclose(outputs["probabilities"].numpy().sum(1), 1, atol=1e-5)
    assert (export_dir / "sentiment" / "1" / "assets" / "labels.txt").read_text().split() == [
        "neg",
        "pos",
    ]

    # A second export is version 2; asking for version 1 again is refused, version 1 untouched.
    before = (export_dir / "sentiment" / "1" / "saved_model.pb").read_bytes()
    assert main(["export", str(run), "--name", "sentiment", "--export-dir", str(export_dir)]) == 0
    assert json.loads(capsys.readouterr().out)["version"] == 2
    assert (
        main(
            [
                "export",
                str(run),
                "--name",
                "sentiment",
                "--export-dir",
                str(export_dir),
                "--version",
                "1",
            ]
        )
        == 2
    )
    assert "exists" in capsys.readouterr().err
    assert (export_dir / "sentiment" / "1" / "saved_model.pb").read_bytes() == before
    assert sorted(p.name for p in (export_dir / "sentiment").iterdir()) == ["1", "2"]


@pytest.mark.parametrize("method", ["crf", "span"])
def test_a_ner_run_exports_a_tag_signature_and_a_span_run_is_refused(method, tmp_path, capsys):
    model = save_tiny_model(tmp_path / "tiny", token_tasks_test.VOCABULARY, 128)
    data = token_tasks_test._conll_dir(tmp_path / "data")
    run = tmp_path / "run"
    assert token_tasks_test._finetune("conll2003", data, model, run, "--method", method) == 0
    capsys.readouterr()
    export_dir = tmp_path / "saved_models"
    status = main(["export", str(run), "--name", "ner", "--export-dir", str(export_dir)])
    if method == "span":
        assert status == 2 and "span-based NER" in capsys.readouterr().err
        assert not export_dir.exists() or not any(export_dir.rglob("saved_model.pb"))
        return
    assert status == 0
    path = json.loads(capsys.readouterr().out)["path"]
    text = "Peter Blackburn flew to Brussels."
    outputs = load_exported(path).signatures["tag"](text=tf.constant([text]))
    for start, end, kind in zip(
        outputs["entity_starts"].numpy()[0],
        outputs["entity_ends"].numpy()[0],
        outputs["entity_types"].numpy()[0],
        strict=True,
    ):
        if start >= 0:
            assert kind.decode() in ("PER", "LOC", "ORG", "MISC") and text[start:end]


def test_a_pretrained_encoder_exports_embed_and_bad_requests_are_refused(
    tmp_path, tiny_model, capsys
):
    model = tiny_model
    export_dir = tmp_path / "saved_models"

    def export(*flags):
        return main(
            ["export", "--model", str(model), "--name", "encoder", "--export-dir", str(export_dir)]
            + list(flags)
        )

    assert export() == 0
    summary = json.loads(capsys.readouterr().out)
    outputs = load_exported(summary["path"]).signatures["serving_default"](
        text=tf.constant(["good"])
    )
    assert outputs["cls_embedding"].shape == (1, 16)
    assert summary["xla_rows"] == 0 and not (Path(summary["path"]) / WARMUP_FILE).exists()

    # --xla-rows: batches of 1 through XLA, and one warm-up request per padded length.
    assert export("--sequence-length", "16", "--xla-rows", "1") == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["xla_rows"] == 1 and summary["version"] == 2
    requests = read_warmup_requests(summary["path"])
    assert [(name, len(inputs["text"])) for name, inputs in requests] == [("embed", 1)] * 2

    assert main(["export", "--name", "x", "--export-dir", str(export_dir)]) == 2
    assert "exactly one of RUN_DIR" in capsys.readouterr().err
    assert main(["export", str(tmp_path), "--name", "x", "--export-dir", str(export_dir)]) == 2
    assert "not a finished kbert run directory" in capsys.readouterr().err
    assert sorted(p.name for p in export_dir.iterdir()) == ["encoder"]


def test_bad_sequence_length_and_export_dir_are_refused_before_writing(
    tmp_path, tiny_model, capsys, monkeypatch
):
    model = tiny_model  # 32 positions
    export_dir = tmp_path / "saved_models"

    def export(*flags, target=export_dir):
        status = main(
            [
                "export",
                "--model",
                str(model),
                "--name",
                "encoder",
                "--export-dir",
                str(target),
                *flags,
            ]
        )
        error = capsys.readouterr().err
        assert status == 2 and "Traceback" not in error
        return error

    for value in ("0", "-3", "7"):
        assert (
            f"--sequence-length must be an int >= 8 (as for `kbert finetune`); received {value}"
        ) in export("--sequence-length", value)
    for value in ("-1", "33"):
        assert f"--xla-rows must be an int from 0 (off) to 32; received {value}" in export(
            "--xla-rows", value
        )
    assert (
        "--sequence-length 33 is longer than model "
        f"{str(model)!r} can read: its position table has 32 positions; use at most 32"
        in export("--sequence-length", "33")
    )
    assert not export_dir.exists()

    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a directory")
    assert f"--export-dir {str(a_file)!r} is a file; expected a directory" in export(target=a_file)
    assert (
        f"--export-dir {str(a_file / 'models')!r}: its folder {str(a_file)!r} is a file"
        in export(target=a_file / "models")
    )

    read_only = tmp_path / "read_only"
    read_only.mkdir()
    access = os.access  # tests run as root, who may write anywhere: pretend the mode bits count
    monkeypatch.setattr(
        os,
        "access",
        lambda path, mode, **kwargs: (
            os.fspath(path) != str(read_only) and access(path, mode, **kwargs)
        ),
    )
    assert f"--export-dir {str(read_only)!r} is not writable" in export(target=read_only)
    assert (
        f"--export-dir {str(read_only / 'models')!r}: its folder {str(read_only)!r} is not "
        "writable" in export(target=read_only / "models")
    )
    assert list(read_only.iterdir()) == [] and a_file.read_text() == "not a directory"


def test_dtype_bfloat16_is_exported_recorded_and_a_bad_dtype_refused(trained_run, tmp_path, capsys):
    export_dir = tmp_path / "saved_models"
    flags = ["export", str(trained_run), "--export-dir", str(export_dir)]
    assert main([*flags, "--name", "full"]) == 0
    full = json.loads(capsys.readouterr().out)
    assert main([*flags, "--name", "half", "--dtype", "bfloat16"]) == 0
    half = json.loads(capsys.readouterr().out)
    assert (full["dtype"], half["dtype"]) == ("float32", "bfloat16")
    record = json.loads((Path(half["path"]) / SETTINGS_RECORD).read_text())
    assert (record["dtype"], record["requested_dtype"], record["task"]) == (
        "bfloat16",
        "bfloat16",
        "classify",
    )
    texts = tf.constant(["the movie was good", "bad", ""])
    outputs = {
        name: load_exported(summary["path"]).signatures["classify"](text=texts)
        for name, summary in (("full", full), ("half", half))
    }
    assert outputs["half"]["probabilities"].dtype == tf.float32
    np.testing.assert_allclose(
        outputs["half"]["probabilities"], outputs["full"]["probabilities"], atol=2e-2
    )

    with pytest.raises(SystemExit) as stop:
        main([*flags, "--name", "bad", "--dtype", "float16"])
    assert stop.value.code == 2
    assert "--dtype: invalid choice: 'float16'" in capsys.readouterr().err
    assert sorted(p.name for p in export_dir.iterdir()) == ["full", "half"]
