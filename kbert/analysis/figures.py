"""Figures of representations, written to PNG files: sense clusters, attention grids, layer curves.

- `sense_projection_png`: 2-D points (from `pca_2d` or `tsne_2d`) coloured by word sense, the way
  J&M Fig. 11.7 shows the contextual embeddings of an ambiguous word.
- `attention_grid_png`: every head of every layer as a small heat-map over one sentence's tokens
  (from `sentence_attention`), as in Clark et al. (2019).
- `layer_curves_png`: one value per layer for several curves, e.g. anisotropy before and after
  z-scoring, or probe accuracy beside a random-encoder control (dashed).

Drawing reuses `kbert.metrics.plots`' standalone Agg `Figure` (no pyplot, no global backend
switch), and each file is written under a temporary name in the same directory, then renamed over
`path` (an atomic `os.replace`), so a reader never sees half a PNG.
"""

import numpy as np

from kbert.files import atomic_path
from kbert.metrics.plots import agg_figure, png_path

_LEGEND_NAME_LENGTH = 40  # legend entries longer than this are cut at a word boundary
_CLUSTER_NAME_LENGTH = 24  # names written on the clusters themselves are shorter
_ANNOTATE_CLUSTERS_UP_TO = 12  # more senses than this and the names on the plot collide
_MARKERS = ("o", "s", "^", "D", "v", "P", "X")


def _save_png(figure, path, **savefig_kwargs):
    with atomic_path(path) as temporary, open(temporary, "xb") as handle:
        figure.savefig(handle, format="png", **savefig_kwargs)
    return path


def _shorten(name, length):
    """One line of at most `length` characters, cut at a word boundary with an ellipsis."""
    text = " ".join(str(name).split())
    if len(text) <= length:
        return text
    cut = text[: length - 1]
    if " " in cut[length // 2 :]:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:.") + "…"


def _numbers(values, name, ndim):
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be a {ndim}-D array of numbers; received {type(values).__name__}"
        ) from None
    if array.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array; received shape {array.shape}")
    return array


def _strings(values, name, expected, expected_what):
    if isinstance(values, str) or not hasattr(values, "__len__"):
        raise ValueError(
            f"{name} must be a sequence of {expected} strings ({expected_what}); "
            f"received {type(values).__name__}"
        )
    if len(values) != expected:
        raise ValueError(
            f"{name} must have {expected} entries ({expected_what}); received {len(values)}"
        )
    return [str(value) for value in values]


def _sense_names(senses, label_names):
    if label_names is None:
        return {sense: str(sense) for sense in senses}
    if isinstance(label_names, dict):
        missing = [sense for sense in senses if sense not in label_names]
        if missing:
            raise ValueError(
                f"label_names must name every label; received no name for {missing[:10]}"
            )
        return {sense: str(label_names[sense]) for sense in senses}
    if isinstance(label_names, str) or not hasattr(label_names, "__getitem__"):
        raise ValueError(
            f"label_names must be a dict label -> name or a list indexed by integer "
            f"labels; received {type(label_names).__name__}"
        )
    bad = [
        sense
        for sense in senses
        if not isinstance(sense, (int, np.integer)) or not 0 <= sense < len(label_names)
    ]
    if bad:
        raise ValueError(
            f"label_names is a list of {len(label_names)} names, so labels must be "
            f"ints in [0, {len(label_names)}); received labels {bad[:10]}"
        )
    return {sense: str(label_names[sense]) for sense in senses}


def _colours(count):
    from matplotlib import colormaps

    if count <= 10:
        return [colormaps["tab10"](i) for i in range(count)]
    if count <= 20:
        return [colormaps["tab20"](i) for i in range(count)]
    return [colormaps["turbo"](x) for x in np.linspace(0.05, 0.95, count)]


def sense_projection_png(
    points, labels, path, title=None, label_names=None, xlabel=None, ylabel=None
):
    """Draws 2-D points coloured by sense, with a legend of sense names, and writes a PNG file.

    Each sense gets a colour and a marker (markers repeat every 7 senses, colours every 10 or 20,
    so neighbouring senses stay distinguishable in greyscale too), a legend entry with its
    (shortened) name and point count, and, for up to 12 senses, its name written at the median
    of its points, the way J&M Fig. 11.7 labels the clusters of an ambiguous word.

    Args:
        points: array-like `(n, 2)` of finite numbers, e.g. from `pca_2d` or `tsne_2d`.
        labels: sequence of `n` hashable labels (ints or strs), one sense per point. Integer
            labels are listed in increasing order, others in order of first appearance.
        path: str or pathlib.Path ending in ".png"; missing parent directories are created.
        title: str or None (default None). Axes title.
        label_names: None (default: the labels themselves), a dict label -> name (a sense name
            or gloss, e.g. `{0: "bank: sloping land beside water"}`), or a list of names indexed
            by integer labels. Legend entries are cut to 40 characters at a word boundary.
        xlabel: str or None (default None). E.g. "PC 1 (23% of variance)" for PCA.
        ylabel: str or None (default None).

    Returns:
        pathlib.Path of the written file.

    Raises:
        ValueError: `points` is not `(n, 2)` and finite, `labels` does not have one label per
            point, `label_names` misses a label, or `path` does not end in ".png".

    Example:
    >>> import tempfile
    >>> points = [[0.0, 0.0], [0.1, 0.2], [3.0, 3.1], [3.2, 2.9]]
    >>> out = sense_projection_png(points, [0, 0, 1, 1], f"{tempfile.mkdtemp()}/senses.png",
    ...                            label_names=["river bank", "financial institution"])
    >>> out.name
    'senses.png'
    """
    coordinates = _numbers(points, "points", 2)
    if coordinates.shape[1] != 2 or coordinates.shape[0] == 0:
        raise ValueError(
            f"points must be a non-empty (n, 2) array; received shape {coordinates.shape}"
        )
    if not np.all(np.isfinite(coordinates)):
        raise ValueError("points must be finite; received NaN or infinite coordinates")
    if isinstance(labels, str) or not hasattr(labels, "__len__"):
        raise ValueError(
            f"labels must be a sequence of one label per point; received {type(labels).__name__}"
        )
    labels = [label.item() if isinstance(label, np.generic) else label for label in labels]
    if len(labels) != coordinates.shape[0]:
        raise ValueError(
            f"labels must have one label per point ({coordinates.shape[0]} points); "
            f"received {len(labels)} labels"
        )
    try:
        senses = list(dict.fromkeys(labels))
    except TypeError:
        raise ValueError(
            f"labels must be hashable (ints or strs); received {type(labels[0]).__name__}"
        ) from None
    if all(isinstance(sense, int) and not isinstance(sense, bool) for sense in senses):
        senses.sort()
    names = _sense_names(senses, label_names)
    path = png_path(path)

    code_of = {sense: index for index, sense in enumerate(senses)}
    codes = np.array([code_of[label] for label in labels])  # (n,) index of each point's sense
    colours = _colours(len(senses))
    size = float(np.clip(3000 / coordinates.shape[0], 6, 40))  # marker area, points^2
    legend_size = 9 if len(senses) <= 12 else 7
    figure = agg_figure(figsize=(8.0, 6.0))
    axis = figure.add_subplot()
    for index, sense in enumerate(senses):
        members = coordinates[codes == index]  # (count, 2)
        axis.scatter(
            members[:, 0],
            members[:, 1],
            s=size,
            color=colours[index],
            marker=_MARKERS[index % len(_MARKERS)],
            alpha=0.8,
            linewidths=0,
            label=f"{_shorten(names[sense], _LEGEND_NAME_LENGTH)} ({len(members)})",
        )
    if len(senses) <= _ANNOTATE_CLUSTERS_UP_TO:
        for index, sense in enumerate(senses):
            # The median sits inside a cluster even when a few of its points stray far away.
            x, y = np.median(coordinates[codes == index], axis=0)
            axis.text(
                x,
                y,
                _shorten(names[sense], _CLUSTER_NAME_LENGTH),
                fontsize=8,
                ha="center",
                va="center",
                color=colours[index],
                fontweight="bold",
                bbox={
                    "boxstyle": "round,pad=0.2",
                    "facecolor": "white",
                    "alpha": 0.7,
                    "edgecolor": "none",
                },
            )
    axis.legend(
        loc="upper left",
        bbox_to_anchor=(1.02, 1.0),
        fontsize=legend_size,
        title="sense (points)",
        title_fontsize=legend_size,
        frameon=False,
        markerscale=max(1.0, 30.0 / size) ** 0.5,
    )
    if xlabel is not None:
        axis.set_xlabel(str(xlabel))
    if ylabel is not None:
        axis.set_ylabel(str(ylabel))
    if title is not None:
        axis.set_title(str(title))
    axis.grid(alpha=0.2)
    return _save_png(figure, path, dpi=120, bbox_inches="tight")


def attention_grid_png(maps, tokens, path, title=None, layer_labels=None, head_labels=None):
    """Draws every head of every layer as a heat-map over a sentence's tokens, in one PNG file.

    Rows of the grid are layers (top row: the first block), columns are heads. In each small
    heat-map, row i and column j show how much token i (the query) attends to token j (the key).
    Token names label only the outer axes (left column: queries; bottom row: keys), and all
    heat-maps share one colour scale, 0 to 1 for probabilities (else the data's range), so heads
    compare at a glance. Sized for BERT's 12 x 12 heads and MiniLM's 6 x 12 over ~15 tokens.

    Args:
        maps: array-like `(num_layers, num_heads, n, n)` of finite numbers, e.g. the maps of
            `sentence_attention`.
        tokens: sequence of `n` str, the token of each position (e.g. with [CLS] and [SEP]).
        path: str or pathlib.Path ending in ".png"; missing parent directories are created.
        title: str or None (default None). Figure title.
        layer_labels: sequence of `num_layers` str, or None (default "layer 1" ... counted from
            the first block, as Clark et al. do). Give them when `maps` holds a subset of layers.
        head_labels: sequence of `num_heads` str, or None (default "head 1" ...).

    Returns:
        pathlib.Path of the written file.

    Raises:
        ValueError: `maps` is not 4-D with square, non-empty last two axes, or not finite;
            `tokens`, `layer_labels` or `head_labels` has the wrong length; or `path` does not
            end in ".png".

    Example:
    >>> import tempfile
    >>> maps = np.full((2, 3, 4, 4), 0.25)
    >>> tokens = ["[CLS]", "the", "bank", "[SEP]"]
    >>> attention_grid_png(maps, tokens, f"{tempfile.mkdtemp()}/attention.png").name
    'attention.png'
    """
    values = _numbers(maps, "maps", 4)
    num_layers, num_heads, queries, keys = values.shape
    if queries != keys or queries == 0 or num_layers == 0 or num_heads == 0:
        raise ValueError(
            f"maps must be (num_layers, num_heads, n, n) with n > 0 tokens on both "
            f"of the last two axes; received shape {values.shape}"
        )
    if not np.all(np.isfinite(values)):
        raise ValueError("maps must be finite; received NaN or infinite entries")
    tokens = _strings(tokens, "tokens", queries, "one per row and column of each map")
    layer_labels = (
        [f"layer {i + 1}" for i in range(num_layers)]
        if layer_labels is None
        else _strings(layer_labels, "layer_labels", num_layers, "one per layer of maps")
    )
    head_labels = (
        [f"head {i + 1}" for i in range(num_heads)]
        if head_labels is None
        else _strings(head_labels, "head_labels", num_heads, "one per head of maps")
    )
    path = png_path(path)

    low, high = float(values.min()), float(values.max())
    if low >= 0.0 and high <= 1.0:
        low, high = 0.0, 1.0  # probabilities: one fixed scale, comparable across figures
    elif low == high:
        low, high = low - 0.5, high + 0.5
    cell = float(np.clip(0.11 * queries, 1.0, 2.5))  # inches per heat-map
    token_size = float(np.clip(0.8 * cell * 72 / queries, 3.0, 8.0))  # points
    label_width = 0.075 * token_size * max(len(token) for token in tokens) / 8 + 0.6  # inches
    figure = agg_figure(
        figsize=(
            num_heads * cell + label_width + 1.2,
            num_layers * cell + label_width + (0.8 if title else 0.4),
        ),
        layout="constrained",
    )
    axes = figure.subplots(num_layers, num_heads, squeeze=False)
    positions = np.arange(queries)
    for layer in range(num_layers):
        for head in range(num_heads):
            axis = axes[layer, head]
            image = axis.imshow(
                values[layer, head],
                cmap="Blues",
                vmin=low,
                vmax=high,
                interpolation="nearest",
                aspect="equal",
            )
            axis.set_xticks(positions)
            axis.set_yticks(positions)
            axis.tick_params(length=0, pad=1)
            if layer == num_layers - 1:
                axis.set_xticklabels(tokens, rotation=90, fontsize=token_size)
            else:
                axis.set_xticklabels([])
            if head == 0:
                axis.set_yticklabels(tokens, fontsize=token_size)
                axis.set_ylabel(layer_labels[layer], fontsize=9)
            else:
                axis.set_yticklabels([])
            if layer == 0:
                axis.set_title(head_labels[head], fontsize=9)
    colourbar = figure.colorbar(
        image, ax=axes, shrink=min(0.6, 4.0 / (num_layers * cell)), aspect=30, pad=0.01
    )
    colourbar.set_label("attention probability" if (low, high) == (0.0, 1.0) else "value")
    figure.supxlabel("attended-to token (key)", fontsize=10)
    figure.supylabel("attending token (query)", fontsize=10)
    if title is not None:
        figure.suptitle(str(title))
    return _save_png(figure, path, dpi=100)


def layer_curves_png(curves, path, title=None, ylabel=None, xlabel="layer", styles=None):
    """Plots one value per layer for several named curves and writes a PNG file.

    The x axis is the layer index: 0 is the embedding output (labelled "emb"), then 1 … L the
    blocks, matching `Encoder`'s `hidden_states`. Every curve is a line with markers; `styles`
    changes any of them, e.g. a dashed grey control.

    Args:
        curves: dict name -> sequence of per-layer numbers (NaN for a layer without a value), at
            least one finite value each; curves may have different lengths. E.g.
            `{"raw": [...], "z-scored": [...]}` for anisotropy, or `{"probe": [...],
            "random encoder": [...]}` for probing accuracy.
        path: str or pathlib.Path ending in ".png"; missing parent directories are created.
        title: str or None (default None). Axes title.
        ylabel: str or None (default None). Y-axis label, e.g. "mean cosine".
        xlabel: str (default "layer"). X-axis label.
        styles: dict name -> dict of `Axes.plot` keyword arguments, or None (default). E.g.
            `{"random encoder": {"linestyle": "--", "color": "grey"}}`. Unnamed curves keep the
            default solid line with round markers.

    Returns:
        pathlib.Path of the written file.

    Raises:
        ValueError: `curves` is empty or not a dict, a curve is not a non-empty 1-D sequence of
            numbers with a finite value, `styles` names an unknown curve or is not a dict of
            dicts, or `path` does not end in ".png".

    Example:
    >>> import tempfile
    >>> curves = {"probe": [0.55, 0.71, 0.80], "random encoder": [0.52, 0.53, 0.52]}
    >>> out = layer_curves_png(curves, f"{tempfile.mkdtemp()}/probe.png", ylabel="accuracy",
    ...                        styles={"random encoder": {"linestyle": "--"}})
    >>> out.name
    'probe.png'
    """
    if not isinstance(curves, dict) or not curves:
        received = "an empty dict" if isinstance(curves, dict) else type(curves).__name__
        raise ValueError(
            f"curves must be a non-empty dict of name -> per-layer values; received {received}"
        )
    series = {}
    for name, values in curves.items():
        try:
            array = np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError):
            array = None
        if array is None or array.ndim != 1 or array.size == 0 or not np.any(np.isfinite(array)):
            raise ValueError(
                f"curves[{name!r}] must be a non-empty 1-D sequence of per-layer "
                f"numbers with at least one finite value; received {values!r}"
            )
        series[name] = array
    styles = {} if styles is None else styles
    if not isinstance(styles, dict) or not all(isinstance(s, dict) for s in styles.values()):
        raise ValueError(
            "styles must be a dict of curve name -> dict of plot keyword arguments "
            f"(e.g. {{'control': {{'linestyle': '--'}}}}); received {styles!r}"
        )
    unknown = [name for name in styles if name not in series]
    if unknown:
        raise ValueError(
            f"styles must name curves of `curves`; received {unknown}, curves are {list(series)}"
        )
    path = png_path(path)

    num_layers = max(array.size for array in series.values())
    figure = agg_figure(figsize=(float(np.clip(4.0 + 0.3 * num_layers, 6.0, 14.0)), 4.2))
    axis = figure.add_subplot()
    for name, array in series.items():
        style = {"marker": "o", "markersize": 4, "linewidth": 1.5, **styles.get(name, {})}
        axis.plot(np.arange(array.size), array, label=str(name), **style)
    positions = np.arange(num_layers)
    step = max(1, int(np.ceil(num_layers / 25)))  # at most ~25 tick labels
    ticks = positions[::step]
    axis.set_xticks(ticks)
    axis.set_xticklabels(["emb" if t == 0 else str(t) for t in ticks])
    axis.set_xlabel(str(xlabel))
    if ylabel is not None:
        axis.set_ylabel(str(ylabel))
    if title is not None:
        axis.set_title(str(title))
    axis.grid(alpha=0.3)
    axis.legend(fontsize=9)
    figure.tight_layout()
    return _save_png(figure, path, dpi=120)
