"""Fast tests of the PNG figures: files written, sizes sensible, inputs checked."""

import keras
import matplotlib.image
import numpy as np
import pytest

from kbert.metrics import confusion_matrix, confusion_matrix_png, learning_curve_png

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _assert_png(path, min_bytes=5000):
    assert path.is_file()
    assert path.read_bytes()[:8] == PNG_SIGNATURE
    assert path.stat().st_size > min_bytes
    return matplotlib.image.imread(path).shape  # (height, width, channels)


def test_confusion_matrix_png_writes_a_small_matrix(tmp_path):
    matrix = confusion_matrix([0, 0, 1, 2, 2, 2], [0, 1, 1, 2, 0, 2], num_classes=3)
    out = confusion_matrix_png(
        matrix, ["ABBR", "DESC", "ENTY"], tmp_path / "new" / "dir" / "cm.png", title="TREC coarse"
    )
    assert out == tmp_path / "new" / "dir" / "cm.png"
    _assert_png(out)
    # Raw-count colours, a list of lists, a str path.
    raw = confusion_matrix_png(
        matrix.tolist(), ["a", "b", "c"], str(tmp_path / "raw.png"), normalize=False
    )
    _assert_png(raw)


def test_confusion_matrix_png_handles_50_classes_and_empty_rows(tmp_path):
    rng = np.random.default_rng(0)
    y_true = rng.integers(0, 50, 1000)
    y_pred = np.where(rng.random(1000) < 0.7, y_true, rng.integers(0, 50, 1000))
    y_true[y_true == 7] = 8  # class 7 never occurs: its row is all zeros
    names = [f"ENTY:category_{i}" for i in range(50)]
    matrix = confusion_matrix(y_true, y_pred, num_classes=50)
    height, width, _ = _assert_png(
        confusion_matrix_png(matrix, names, tmp_path / "fine.png"), min_bytes=50_000
    )
    assert height > 1500 and width > 1500  # the figure grows with the number of classes
    small_height, _, _ = _assert_png(
        confusion_matrix_png(np.eye(2, dtype=int), ["a", "b"], tmp_path / "two.png")
    )
    assert small_height < height


def test_confusion_matrix_png_rejects_bad_inputs(tmp_path):
    with pytest.raises(ValueError, match=r"matrix must be a non-empty square .* shape \(2, 3\)"):
        confusion_matrix_png(np.zeros((2, 3)), ["a", "b"], tmp_path / "x.png")
    with pytest.raises(ValueError, match="matrix must hold finite, non-negative counts"):
        confusion_matrix_png([[1, -1], [0, 2]], ["a", "b"], tmp_path / "x.png")
    with pytest.raises(
        ValueError,
        match=r"label_names must have one name per row of matrix \(2\); "
        r"received 3 names",
    ):
        confusion_matrix_png(np.eye(2), ["a", "b", "c"], tmp_path / "x.png")
    with pytest.raises(ValueError, match="path must end in .png; received"):
        confusion_matrix_png(np.eye(2), ["a", "b"], tmp_path / "x.pdf")
    with pytest.raises(ValueError, match="normalize must be a bool"):
        confusion_matrix_png(np.eye(2), ["a", "b"], tmp_path / "x.png", normalize="rows")
    assert not (tmp_path / "x.png").exists()


HISTORY = {
    "loss": [1.2, 0.8, 0.6],
    "accuracy": [0.5, 0.7, 0.8],
    "val_loss": [1.3, 0.9, 0.8],
    "val_accuracy": [0.45, 0.65, 0.7],
}


def test_learning_curve_png_from_a_dict(tmp_path):
    out = learning_curve_png(HISTORY, tmp_path / "plots" / "curve.png", title="toy")
    assert out == tmp_path / "plots" / "curve.png"
    _, two_families, _ = _assert_png(out)
    # One subplot per family: three families make a wider figure than two.
    _, three_families, _ = _assert_png(
        learning_curve_png(
            {**HISTORY, "perplexity": [3.3, 2.2, 1.8]},
            tmp_path / "three.png",
            log_scale=("perplexity",),
        )
    )
    assert three_families > two_families
    # A validation-only metric still gets its subplot; `metrics` picks and orders families.
    _assert_png(learning_curve_png({"val_f1": [0.1, 0.4]}, tmp_path / "val_only.png"))
    _, one_family, _ = _assert_png(
        learning_curve_png(
            HISTORY, tmp_path / "loss.png", metrics=["loss"], ylabels={"loss": "nats"}
        )
    )
    assert one_family < two_families


def test_learning_curve_png_from_a_keras_history(tmp_path):
    history = keras.callbacks.History()
    history.history = dict(HISTORY)
    _assert_png(learning_curve_png(history, tmp_path / "history.png"))


def test_learning_curve_png_from_a_csv_logger_file(tmp_path):
    # What CSVLogger(append=True) writes when a killed run redoes epoch 1 after resuming; "NA"
    # marks a metric missing from an epoch.
    csv_path = tmp_path / "history.csv"
    csv_path.write_text(
        "epoch,clm_accuracy,clm_loss,clm_perplexity,loss,val_clm_loss\n"
        "0,0.08,6.9,978.2,6.9,5.9\n"
        "1,0.14,5.5,253.2,5.5,NA\n"
        "1,0.15,5.4,221.4,5.4,5.5\n"
        "2,0.16,5.2,181.3,5.2,5.3\n"
    )
    out = learning_curve_png(
        csv_path,
        tmp_path / "lab" / "learning_curve.png",
        metrics=["clm_loss", "clm_perplexity", "clm_accuracy"],
        log_scale=("clm_perplexity",),
        xlabel="checkpoint interval",
    )
    _assert_png(out)
    _assert_png(learning_curve_png(str(csv_path), tmp_path / "all.png"))


def test_history_csv_is_read_one_row_per_epoch_counted_from_1(tmp_path):
    from kbert.metrics.plots import _history_and_epochs

    csv_path = tmp_path / "history.csv"
    csv_path.write_text("epoch,loss,val_loss\n0,2.0,2.5\n1,1.5,NA\n1,1.4,1.9\n")
    values, epochs = _history_and_epochs(csv_path)
    assert epochs == [1, 2]  # 1-based, the repeated epoch kept once (its last row)
    assert values == {"loss": [2.0, 1.4], "val_loss": [2.5, 1.9]}
    values, epochs = _history_and_epochs({"loss": [3, 2, 1]})
    assert epochs == [1, 2, 3] and values == {"loss": [3.0, 2.0, 1.0]}


def test_learning_curve_png_rejects_bad_inputs(tmp_path):
    out = tmp_path / "x.png"
    with pytest.raises(ValueError, match="history must be a dict of metric name"):
        learning_curve_png([1.0, 0.5], out)
    with pytest.raises(ValueError, match="history must be a dict or an existing CSV file"):
        learning_curve_png(tmp_path / "missing.csv", out)
    with pytest.raises(ValueError, match="history must name at least one metric"):
        learning_curve_png({}, out)
    with pytest.raises(ValueError, match=r"history\['loss'\] must be a non-empty list of numbers"):
        learning_curve_png({"loss": []}, out)
    with pytest.raises(ValueError, match=r"history\['loss'\] must be a non-empty list of numbers"):
        learning_curve_png({"loss": ["high", "low"]}, out)
    with pytest.raises(ValueError, match=r"metrics must be names in history .* \['f1'\]"):
        learning_curve_png(HISTORY, out, metrics=["loss", "f1"])
    with pytest.raises(ValueError, match=r"without the val_ prefix .* \['val_loss'\]"):
        learning_curve_png(HISTORY, out, metrics=["val_loss"])
    with pytest.raises(ValueError, match="log_scale must be a collection of metric names"):
        learning_curve_png(HISTORY, out, log_scale="loss")
    with pytest.raises(ValueError, match="path must end in .png"):
        learning_curve_png(HISTORY, tmp_path / "x.svg")
    empty_csv = tmp_path / "empty.csv"
    empty_csv.write_text("epoch,loss\n")
    with pytest.raises(ValueError, match="history CSV must have at least one epoch row"):
        learning_curve_png(empty_csv, out)
    assert not out.exists()
