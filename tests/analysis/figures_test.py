"""Tests of the representation figures: PNGs written atomically, sizes sensible, inputs checked."""

import doctest

import matplotlib.image
import numpy as np
import pytest

from kbert.analysis import figures
from kbert.analysis.figures import (
    attention_grid_png,
    layer_curves_png,
    sense_projection_png,
)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _assert_png(path, min_bytes=5000):
    assert path.is_file()
    assert path.read_bytes()[:8] == PNG_SIGNATURE
    assert path.stat().st_size > min_bytes
    assert not list(path.parent.glob(f".{path.name}.*"))  # no temporary file left behind
    return matplotlib.image.imread(path).shape  # (height, width, channels)


def _senses(seed=0):
    rng = np.random.default_rng(seed)
    points = np.concatenate([rng.normal(c, 1.0, (25, 2)) for c in ([0, 0], [8, 0], [4, 7])])
    return points, np.repeat([0, 1, 2], 25)


GLOSSES = [
    "sloping land, especially the slope beside a body of water",
    "a financial institution that accepts deposits and channels the money into lending",
    "a long ridge or pile",
]


def test_sense_projection_png_writes_a_scatter(tmp_path):
    points, labels = _senses()
    out = sense_projection_png(
        points,
        labels,
        tmp_path / "new" / "senses.png",
        title='"bank" in context',
        label_names=GLOSSES,
        xlabel="PC 1",
        ylabel="PC 2",
    )
    assert out == tmp_path / "new" / "senses.png"
    height, width, _ = _assert_png(out, min_bytes=20_000)
    assert 500 < height < 1500 and 800 < width < 2000
    # String labels, a dict of names, no names, numpy labels, many senses.
    words = np.array(["river", "money", "ridge"])[labels]
    _assert_png(
        sense_projection_png(
            points,
            words,
            str(tmp_path / "words.png"),
            label_names={"river": "river bank", "money": "money bank", "ridge": "ridge"},
        )
    )
    _assert_png(sense_projection_png(points, list(labels), tmp_path / "plain.png"))
    many = np.arange(75) % 25  # 25 senses: no names on the clusters, colours from a colormap
    _assert_png(sense_projection_png(points, many, tmp_path / "many.png"))


def test_sense_projection_png_rejects_bad_inputs(tmp_path):
    points, labels = _senses()
    target = tmp_path / "x.png"
    with pytest.raises(
        ValueError,
        match=r"labels must have one label per point \(75 points\); "
        r"received 74 labels",
    ):
        sense_projection_png(points, labels[:-1], target)
    with pytest.raises(
        ValueError,
        match=r"points must be a non-empty \(n, 2\) array; received "
        r"shape \(75, 3\)",
    ):
        sense_projection_png(np.ones((75, 3)), labels, target)
    with pytest.raises(ValueError, match=r"points must be a 2-D array; received shape \(75,\)"):
        sense_projection_png(np.ones(75), labels, target)
    with pytest.raises(ValueError, match="points must be finite"):
        sense_projection_png(np.full((75, 2), np.nan), labels, target)
    with pytest.raises(
        ValueError,
        match=r"label_names must name every label; received no name "
        r"for \[2\]",
    ):
        sense_projection_png(points, labels, target, label_names={0: "a", 1: "b"})
    with pytest.raises(
        ValueError,
        match=r"label_names is a list of 2 names, so labels must be "
        r"ints in \[0, 2\); received labels \[2\]",
    ):
        sense_projection_png(points, labels, target, label_names=["a", "b"])
    with pytest.raises(ValueError, match="labels must be a sequence"):
        sense_projection_png(points, "abc", target)
    with pytest.raises(ValueError, match="path must end in .png"):
        sense_projection_png(points, labels, tmp_path / "x.svg")
    assert not list(tmp_path.iterdir())


def _maps(layers, heads, n, seed=0):
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(layers, heads, n, n)) * 2.0
    weights = np.exp(scores)
    return weights / weights.sum(-1, keepdims=True)


TOKENS = [
    "[CLS]",
    "we",
    "sat",
    "on",
    "the",
    "bank",
    "of",
    "the",
    "river",
    "and",
    "watched",
    "the",
    "boat",
    "##s",
    "[SEP]",
]


def test_attention_grid_png_draws_minilm_sized_grids(tmp_path):
    out = attention_grid_png(
        _maps(6, 12, 15), TOKENS, tmp_path / "grid.png", title="MiniLM-L6, one sentence"
    )
    assert out == tmp_path / "grid.png"
    height, width, _ = _assert_png(out, min_bytes=50_000)
    # 12 heat-maps across, 6 down, each large enough for 15 token labels (> 100 px).
    assert width > 12 * 100 and height > 6 * 100 and width > height
    small_height, small_width, _ = _assert_png(
        attention_grid_png(
            _maps(1, 2, 3),
            ["[CLS]", "hi", "[SEP]"],
            tmp_path / "small.png",
            layer_labels=["layer 4"],
            head_labels=["head 1", "head 7"],
        )
    )
    assert small_width < width and small_height < height
    # Values outside [0, 1] (e.g. attention norms) get their own colour scale.
    _assert_png(attention_grid_png(_maps(2, 2, 4) * 5.0, list("abcd"), tmp_path / "norms.png"))


def test_attention_grid_png_rejects_bad_inputs(tmp_path):
    target = tmp_path / "x.png"
    with pytest.raises(ValueError, match=r"maps must be a 4-D array; received shape \(12, 5, 5\)"):
        attention_grid_png(np.ones((12, 5, 5)), list("abcde"), target)
    with pytest.raises(
        ValueError,
        match=r"maps must be \(num_layers, num_heads, n, n\) .* "
        r"received shape \(2, 2, 5, 4\)",
    ):
        attention_grid_png(np.ones((2, 2, 5, 4)), list("abcde"), target)
    with pytest.raises(
        ValueError,
        match=r"tokens must have 5 entries \(one per row and column of "
        r"each map\); received 4",
    ):
        attention_grid_png(_maps(2, 2, 5), list("abcd"), target)
    with pytest.raises(ValueError, match="tokens must be a sequence of 5 strings"):
        attention_grid_png(_maps(2, 2, 5), "abcde", target)
    with pytest.raises(ValueError, match=r"layer_labels must have 2 entries"):
        attention_grid_png(_maps(2, 2, 5), list("abcde"), target, layer_labels=["layer 1"])
    with pytest.raises(ValueError, match="maps must be finite"):
        attention_grid_png(np.full((1, 1, 2, 2), np.nan), list("ab"), target)
    assert not target.exists()


def test_layer_curves_png_draws_curves_with_a_dashed_control(tmp_path):
    curves = {
        "probe": [0.55, 0.70, 0.78, 0.81, 0.80, 0.79, 0.77],
        "random encoder": [0.52, 0.53, 0.52, 0.51, 0.52, 0.52, 0.51],
    }
    out = layer_curves_png(
        curves,
        tmp_path / "probe.png",
        title="POS probe",
        ylabel="accuracy",
        styles={"random encoder": {"linestyle": "--", "color": "grey"}},
    )
    assert out == tmp_path / "probe.png"
    _, width, _ = _assert_png(out)
    # Anisotropy: different lengths and a gap are allowed; 25 layers make a wider figure.
    _, wide, _ = _assert_png(
        layer_curves_png(
            {
                "raw": np.linspace(0.2, 0.9, 25),
                "z-scored": [0.01, np.nan] + [0.02] * 23,
                "top only": [0.5],
            },
            tmp_path / "aniso.png",
            xlabel="layer (BERT-large)",
        )
    )
    assert wide > width


def test_layer_curves_png_rejects_bad_inputs(tmp_path):
    target = tmp_path / "x.png"
    with pytest.raises(ValueError, match="curves must be a non-empty dict .* received an empty"):
        layer_curves_png({}, target)
    with pytest.raises(ValueError, match="curves must be a non-empty dict .* received list"):
        layer_curves_png([[0.1, 0.2]], target)
    with pytest.raises(ValueError, match=r"curves\['a'\] must be a non-empty 1-D sequence"):
        layer_curves_png({"a": [[0.1, 0.2]]}, target)
    with pytest.raises(ValueError, match=r"curves\['a'\] must be .* with at least one finite"):
        layer_curves_png({"a": [np.nan, np.nan]}, target)
    with pytest.raises(
        ValueError,
        match=r"styles must name curves of `curves`; received "
        r"\['control'\]",
    ):
        layer_curves_png({"a": [0.1, 0.2]}, target, styles={"control": {"linestyle": "--"}})
    with pytest.raises(ValueError, match="styles must be a dict of curve name -> dict"):
        layer_curves_png({"a": [0.1, 0.2]}, target, styles={"a": "--"})
    assert not target.exists()


def test_a_failed_write_leaves_no_partial_file(tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    def fail(self, *args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(Figure, "savefig", fail)
    with pytest.raises(OSError, match="disk full"):
        layer_curves_png({"a": [0.1, 0.2]}, tmp_path / "x.png")
    assert not list(tmp_path.iterdir())


def test_docstring_examples_run():
    results = doctest.testmod(figures)
    assert results.attempted > 0 and results.failed == 0


@pytest.mark.slow
def test_minilm_attention_grid_for_one_sentence(minilm_dir, tmp_path):
    from kbert.analysis.attention import sentence_attention
    from kbert.checkpoints import load_hf_bert
    from kbert.text import BertPreprocessor

    encoder, tokenizer = load_hf_bert(minilm_dir)
    preprocessor = BertPreprocessor(tokenizer, sequence_length=32)
    text = "We sat on the bank of the river and watched the boats."
    maps, tokens = sentence_attention(encoder, preprocessor, tokenizer, text)
    assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]" and "bank" in tokens
    assert maps.shape == (6, 12, len(tokens), len(tokens))
    np.testing.assert_allclose(maps.sum(-1), 1.0, atol=1e-4)
    # Clark et al. (2019): many heads of a pretrained BERT put most of their attention on [CLS],
    # [SEP] or punctuation; random weights spread it almost uniformly.
    special = maps[..., [0, len(tokens) - 2, len(tokens) - 1]].sum(-1).mean(-1)  # (layers, heads)
    assert special.max() > 0.5
    out = attention_grid_png(
        maps, tokens, tmp_path / "minilm_attention.png", title=f"MiniLM-L6: {text}"
    )
    height, width, _ = _assert_png(out, min_bytes=50_000)
    assert width > 1200 and height > 600
