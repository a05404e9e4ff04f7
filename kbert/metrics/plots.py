"""Figures written to PNG files: a confusion-matrix heatmap and learning curves.

Drawing uses matplotlib's Agg renderer on a standalone `matplotlib.figure.Figure` (never pyplot or
`plt.show`), so these run on headless machines and in tests and leave the caller's pyplot backend
and open figures alone.
"""

import csv
import math
from pathlib import Path

import numpy as np

# Past these sizes the confusion matrix writes counts only in non-zero cells, then none at all,
# so that 50 classes (TREC fine) stay readable.
_ANNOTATE_ALL_UP_TO = 20
_ANNOTATE_NONZERO_UP_TO = 60


def agg_figure(**kwargs):
    """A matplotlib `Figure(**kwargs)` on an Agg canvas, for writing PNG files.

    Not pyplot: no global backend switch, no window, nothing kept alive in pyplot's figure
    registry after the file is written.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(**kwargs)
    FigureCanvasAgg(figure)
    return figure


def png_path(path):
    """`path` as a `Path` ending in `.png`, its parent directory created; ValueError otherwise."""
    if not isinstance(path, (str, Path)):
        raise ValueError(f"path must be a str or pathlib.Path; received {type(path).__name__}")
    path = Path(path)
    if path.suffix.lower() != ".png":
        raise ValueError(f"path must end in .png; received {str(path)!r}")
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def confusion_matrix_png(matrix, label_names, path, title=None, normalize=True):
    """Draws a confusion matrix as an annotated heatmap and writes it to a PNG file.

    Rows are true classes and columns predicted classes, as `confusion_matrix` returns them. With
    `normalize=True` the colours show each row divided by its total (the fraction of a true class
    given each prediction, so rare classes are as visible as frequent ones) while the cells still
    show the raw counts. Fonts shrink with the number of classes; past 20 classes only non-zero
    cells are annotated, past 60 none are.

    Args:
        matrix: square array-like of non-negative counts, shape (num_classes, num_classes).
        label_names: sequence of str, one per row/column.
        path: str or pathlib.Path ending in ".png"; missing parent directories are created.
        title: str or None (default None). Figure title.
        normalize: bool (default True). Colour by row-normalised fractions instead of counts.

    Returns:
        pathlib.Path of the written file.

    Example:
    >>> import tempfile
    >>> matrix = [[5, 1], [2, 7]]
    >>> out = confusion_matrix_png(matrix, ["neg", "pos"], f"{tempfile.mkdtemp()}/cm.png")
    >>> out.suffix
    '.png'
    """
    counts = np.asarray(matrix)
    if counts.ndim != 2 or counts.shape[0] != counts.shape[1] or counts.shape[0] == 0:
        raise ValueError(
            f"matrix must be a non-empty square 2-D array (true x predicted); received shape "
            f"{counts.shape}"
        )
    if not (np.issubdtype(counts.dtype, np.integer) or np.issubdtype(counts.dtype, np.floating)):
        raise ValueError(f"matrix must hold numbers; received dtype {counts.dtype}")
    if not np.all(np.isfinite(counts)) or np.any(counts < 0):
        raise ValueError(
            "matrix must hold finite, non-negative counts; received negative or non-finite entries"
        )
    num_classes = counts.shape[0]
    if isinstance(label_names, str) or len(label_names) != num_classes:
        received = "a str" if isinstance(label_names, str) else f"{len(label_names)} names"
        raise ValueError(
            f"label_names must have one name per row of matrix ({num_classes}); received {received}"
        )
    if not isinstance(normalize, bool):
        raise ValueError(f"normalize must be a bool; received {normalize!r}")
    path = png_path(path)

    if normalize:
        row_totals = counts.sum(axis=1, keepdims=True).astype(np.float64)  # (classes, 1)
        colours = np.divide(counts, row_totals, out=np.zeros(counts.shape), where=row_totals > 0)
        colour_max, colour_label = 1.0, "fraction of the true class"
    else:
        colours = counts.astype(np.float64)
        colour_max, colour_label = max(float(colours.max()), 1.0), "count"

    side = min(max(5.0, 0.3 * num_classes + 3.0), 20.0)  # inches
    tick_size = float(np.clip(300 / num_classes, 5, 10))
    cell_size = float(np.clip(250 / num_classes, 4, 9))
    figure = agg_figure(figsize=(side + 1.2, side))
    axis = figure.add_subplot()
    image = axis.imshow(colours, cmap="Blues", vmin=0.0, vmax=colour_max, interpolation="nearest")
    colourbar = figure.colorbar(image, ax=axis, fraction=0.046, pad=0.04)
    colourbar.set_label(colour_label)

    if num_classes <= _ANNOTATE_NONZERO_UP_TO:
        is_integer = np.issubdtype(counts.dtype, np.integer) or np.all(counts == np.round(counts))
        for i in range(num_classes):
            for j in range(num_classes):
                if counts[i, j] == 0 and num_classes > _ANNOTATE_ALL_UP_TO:
                    continue
                text = f"{int(counts[i, j])}" if is_integer else f"{counts[i, j]:.2g}"
                dark = colours[i, j] > 0.6 * colour_max  # white text on dark cells
                axis.text(
                    j,
                    i,
                    text,
                    ha="center",
                    va="center",
                    fontsize=cell_size,
                    color="white" if dark else "black",
                )

    positions = np.arange(num_classes)
    axis.set_xticks(positions)
    axis.set_yticks(positions)
    axis.set_xticklabels(
        label_names,
        fontsize=tick_size,
        rotation=45 if num_classes <= 10 else 90,
        ha="right" if num_classes <= 10 else "center",
    )
    axis.set_yticklabels(label_names, fontsize=tick_size)
    axis.set_xlabel("predicted class")
    axis.set_ylabel("true class")
    if title is not None:
        axis.set_title(str(title))
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    return path


def _parse_float(text):
    try:
        return float(text)
    except ValueError:
        return math.nan  # CSVLogger writes "NA" for a metric missing from an epoch


def _read_history_csv(path):
    """Reads a Keras CSVLogger file into {metric: per-epoch list}, one row per epoch."""
    with Path(path).open(newline="") as handle:
        reader = csv.DictReader(handle)
        if not reader.fieldnames:
            raise ValueError(f"history CSV must have a header row; received an empty file {path}")
        rows = list(reader)
    if not rows:
        raise ValueError(f"history CSV must have at least one epoch row; received none in {path}")
    if "epoch" in reader.fieldnames:
        # A run resumed with CSVLogger(append=True) can write an epoch twice; keep the last.
        by_epoch = {}
        for row in rows:
            try:
                by_epoch[int(float(row["epoch"]))] = row
            except (TypeError, ValueError):
                raise ValueError(
                    f"history CSV must have integer epochs; received {row['epoch']!r} in {path}"
                ) from None
        epochs = sorted(by_epoch)
        rows = [by_epoch[e] for e in epochs]
    else:
        epochs = list(range(len(rows)))
    names = [name for name in reader.fieldnames if name != "epoch"]
    history = {name: [_parse_float(row[name]) for row in rows] for name in names}
    return history, [e + 1 for e in epochs]  # CSVLogger counts epochs from 0


def _history_and_epochs(history):
    if isinstance(history, (str, Path)):
        if not Path(history).is_file():
            raise ValueError(
                f"history must be a dict or an existing CSV file; received missing "
                f"path {str(history)!r}"
            )
        return _read_history_csv(history)
    history = getattr(history, "history", history)  # a keras.callbacks.History works too
    if not isinstance(history, dict):
        raise ValueError(
            "history must be a dict of metric name -> per-epoch values or a CSVLogger path; "
            f"received {type(history).__name__}"
        )
    if not history:
        raise ValueError("history must name at least one metric; received an empty dict")
    values = {}
    for name, series in history.items():
        if name == "epoch":
            continue
        try:
            array = np.asarray(series, dtype=np.float64)
        except (TypeError, ValueError):
            array = None
        if array is None or array.ndim != 1 or array.size == 0:
            raise ValueError(
                f"history[{name!r}] must be a non-empty list of numbers, one per epoch; received "
                f"{series!r}"
            )
        values[name] = array.tolist()
    length = max(len(series) for series in values.values())
    return values, list(range(1, length + 1))


def _families(history, metrics):
    """Groups metric names into (name, training series or None, validation series or None)."""
    if metrics is None:
        metrics = []
        for name in history:
            base = name[len("val_") :] if name.startswith("val_") else name
            if base not in metrics:
                metrics.append(base)
    else:
        if isinstance(metrics, str) or not metrics:
            raise ValueError(
                f"metrics must be a non-empty list of metric names; received {metrics!r}"
            )
        prefixed = [m for m in metrics if m.startswith("val_")]
        if prefixed:
            raise ValueError(
                f"metrics must be names without the val_ prefix (each is drawn with "
                f"its val_ twin); received {prefixed}"
            )
        missing = [m for m in metrics if m not in history and f"val_{m}" not in history]
        if missing:
            raise ValueError(
                f"metrics must be names in history (or their val_ twins); received "
                f"{missing}, history has {sorted(history)}"
            )
    return [(m, history.get(m), history.get(f"val_{m}")) for m in metrics]


def learning_curve_png(
    history, path, title=None, metrics=None, xlabel="epoch", ylabels=None, log_scale=()
):
    """Plots training curves, each metric beside its `val_` twin, and writes a PNG file.

    One subplot per metric family: `loss` and `val_loss` share an axis, `accuracy` and
    `val_accuracy` the next, and so on (three subplots per row). The x axis is the epoch,
    counted from 1.

    Args:
        history: dict of metric name -> list of per-epoch values (`keras.callbacks.History.history`,
            or the `History` object itself), or a str/pathlib.Path of a `keras.callbacks.CSVLogger`
            file (its 0-based "epoch" column becomes 1-based; an epoch written twice by a resumed
            run keeps its last row; "NA" cells are gaps).
        path: str or pathlib.Path ending in ".png"; missing parent directories are created.
        title: str or None (default None). Figure title.
        metrics: list of str or None (default None: every metric in `history`, in its order).
            Metric names without the `val_` prefix, one subplot each, e.g. `["loss", "accuracy"]`.
        xlabel: str (default "epoch"). Label of every x axis.
        ylabels: dict of metric name -> y-axis label, or None (default: the metric name).
        log_scale: collection of metric names whose y axis is logarithmic (default none), e.g.
            `("perplexity",)`.

    Returns:
        pathlib.Path of the written file.

    Example:
    >>> import tempfile
    >>> history = {"loss": [1.0, 0.6], "val_loss": [1.1, 0.8], "accuracy": [0.5, 0.7]}
    >>> learning_curve_png(history, f"{tempfile.mkdtemp()}/curves.png").name
    'curves.png'
    """
    values, epochs = _history_and_epochs(history)
    if not values:
        raise ValueError("history must name at least one metric besides epoch; received none")
    families = _families(values, metrics)
    ylabels = {} if ylabels is None else ylabels
    if not isinstance(ylabels, dict):
        raise ValueError(
            f"ylabels must be a dict of metric name -> label; received {type(ylabels).__name__}"
        )
    if isinstance(log_scale, str):
        raise ValueError(
            f"log_scale must be a collection of metric names; received the str "
            f"{log_scale!r} (write ({log_scale!r},))"
        )
    path = png_path(path)

    columns = min(len(families), 3)
    rows = math.ceil(len(families) / columns)
    figure = agg_figure(figsize=(4.5 * columns, 3.5 * rows))
    axes = figure.subplots(rows, columns, squeeze=False)
    for axis, (name, train, valid) in zip(axes.flat, families, strict=False):
        for series, label in ((train, "train"), (valid, "validation")):
            if series is not None:
                x = epochs[: len(series)]
                axis.plot(
                    x, series, marker="o" if len(series) <= 30 else None, markersize=3, label=label
                )
        axis.set_xlabel(xlabel)
        axis.set_ylabel(ylabels.get(name, name))
        axis.set_title(name)
        if name in log_scale:
            axis.set_yscale("log")
        if len(epochs) <= 12:
            axis.set_xticks(epochs)
        axis.grid(alpha=0.3)
        axis.legend()
    for axis in list(axes.flat)[len(families) :]:
        axis.set_visible(False)
    if title is not None:
        figure.suptitle(str(title))
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    return path


def data_size_curve_png(curves, path, title=None, ylabel="test accuracy", baseline=None):
    """Plots a score against the number of labelled examples, one line per model start.

    The x axis is logarithmic (transfer-learning curves: 100, 300, 1,000, all); each point is
    the mean over seeds with a ± sd error bar.

    Args:
        curves: dict of start name -> dict of labelled size (int or its str) -> list of
            per-seed scores.
        path: str or pathlib.Path ending in ".png".
        title: str or None (default None).
        ylabel: str (default "test accuracy").
        baseline: (label, value) or None. A dashed horizontal line, e.g. the majority class.

    Returns:
        pathlib.Path of the written file.

    Example:
    >>> import tempfile
    >>> curves = {"pretrained": {100: [0.7, 0.72], 1000: [0.85, 0.86]},
    ...           "random": {100: [0.4, 0.45], 1000: [0.7, 0.72]}}
    >>> data_size_curve_png(curves, f"{tempfile.mkdtemp()}/curve.png").name
    'curve.png'
    """
    if not isinstance(curves, dict) or not curves:
        raise ValueError(
            "curves must be a non-empty dict of start name -> {size: [scores]}; "
            f"received {curves!r:.80}"
        )
    path = png_path(path)
    figure = agg_figure(figsize=(6.5, 4.2))
    axis = figure.subplots()
    for name, by_size in curves.items():
        if not isinstance(by_size, dict) or not by_size:
            raise ValueError(f"curves[{name!r}] must be a non-empty dict of size -> scores")
        sizes = sorted(by_size, key=int)
        means = [float(np.mean(by_size[s])) for s in sizes]
        sds = [float(np.std(by_size[s], ddof=1)) if len(by_size[s]) > 1 else 0.0 for s in sizes]
        axis.errorbar(
            [int(s) for s in sizes],
            means,
            yerr=sds,
            marker="o",
            markersize=4,
            capsize=3,
            label=str(name),
        )
    if baseline is not None:
        axis.axhline(float(baseline[1]), color="grey", linestyle="--", label=str(baseline[0]))
    axis.set_xscale("log")
    axis.set_xlabel("labelled training examples (log scale)")
    axis.set_ylabel(ylabel)
    axis.grid(alpha=0.3)
    axis.legend(fontsize=8)
    if title is not None:
        axis.set_title(str(title))
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    return path
