import math

import keras
import numpy as np
import pytest
from keras import ops

from kbert.layers.span_representation import SpanRepresentation
from tests.layer_test_case import run_layer_test

rng = np.random.default_rng(0)
HIDDEN = rng.normal(size=(2, 7, 6)).astype("float32")  # (batch, seq, hidden)
STARTS = np.array([[1, 2, 0, 4], [3, 1, 5, 0]], "int32")  # (batch, spans)
ENDS = np.array([[3, 2, 0, 6], [3, 5, 6, 0]], "int32")  # end inclusive; (0, 0) is padding
SPANS = {"span_starts": STARTS, "span_ends": ENDS}


def _numpy(x):
    return np.asarray(ops.convert_to_numpy(x))


def _gelu(x):
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def _projection(dense, x):
    return _gelu(x @ _numpy(dense.kernel) + _numpy(dense.bias))


def _reference(layer, hidden, starts, ends):
    """[gelu(W_s h_start + b_s); gelu(W_e h_end + b_e); sum_t w_t h_t] and the weights w."""
    batch, spans = starts.shape
    inside = np.zeros((batch, spans, hidden.shape[1]), bool)
    for b in range(batch):
        for s in range(spans):
            inside[b, s, starts[b, s] : ends[b, s] + 1] = True
    if layer.pooling == "mean":
        weights = inside / inside.sum(-1, keepdims=True)
    else:
        scores = (hidden @ _numpy(layer.attention_score.kernel))[..., 0] + _numpy(
            layer.attention_score.bias
        )[0]  # (batch, seq)
        scores = np.where(inside, scores[:, None, :], -np.inf)
        weights = np.exp(scores - scores.max(-1, keepdims=True))
        weights /= weights.sum(-1, keepdims=True)
    start = np.take_along_axis(hidden, starts[:, :, None], axis=1)
    end = np.take_along_axis(hidden, ends[:, :, None], axis=1)
    pooled = np.einsum("bst,bth->bsh", weights, hidden)
    return np.concatenate(
        [
            _projection(layer.start_projection, start),
            _projection(layer.end_projection, end),
            pooled,
        ],
        -1,
    ), weights


@pytest.mark.parametrize("pooling, num_weights", [("mean", 4), ("attention", 6)])
def test_layer_contract(pooling, num_weights):
    # The attention score's bias adds the same amount to every token of a span: softmax
    # ignores it, so its gradient is zero.
    run_layer_test(
        SpanRepresentation,
        {"projection_dim": 3, "pooling": pooling, "activation": "gelu"},
        HIDDEN,
        call_kwargs=SPANS,
        expected_output_shape=(2, 4, 2 * 3 + 6),
        expected_num_trainable_weights=num_weights,
        zero_gradient_weights=("attention_score/bias",),
    )


@pytest.mark.parametrize("pooling", ["mean", "attention"])
def test_output_matches_a_numpy_reference(pooling):
    keras.utils.set_random_seed(1)
    layer = SpanRepresentation(projection_dim=3, pooling=pooling)
    output = _numpy(layer(HIDDEN, STARTS, ENDS))
    if pooling == "attention":  # make the scores matter: the default init is close to uniform
        layer.attention_score.kernel.assign(rng.normal(size=(6, 1)).astype("float32"))
        layer.attention_score.bias.assign([0.7])
        output = _numpy(layer(HIDDEN, STARTS, ENDS))
    expected, weights = _reference(layer, HIDDEN, STARTS, ENDS)
    np.testing.assert_allclose(output, expected, atol=1e-5)
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-6)
    if pooling == "attention":
        assert not np.allclose(weights[0, 0, 1:4], 1 / 3, atol=1e-2)  # not just the mean


def test_attention_weights_sum_to_one_inside_the_span_and_are_zero_outside():
    # Extra hidden columns holding each token's one-hot position, which the score ignores
    # (zero kernel rows): their pooled values are the layer's own attention weights.
    hidden = np.concatenate([HIDDEN, np.broadcast_to(np.eye(7, dtype="float32"), (2, 7, 7))], -1)
    layer = SpanRepresentation(projection_dim=3, pooling="attention")
    layer.build(hidden.shape)
    kernel = np.zeros((13, 1), "float32")
    kernel[:6] = rng.normal(size=(6, 1))
    layer.attention_score.kernel.assign(kernel)
    weights = _numpy(layer(hidden, STARTS, ENDS))[..., -7:]  # (batch, spans, seq)
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-6)
    for b in range(2):
        for s in range(4):
            outside = np.ones(7, bool)
            outside[STARTS[b, s] : ENDS[b, s] + 1] = False
            assert (weights[b, s, outside] == 0).all(), (b, s, weights[b, s])
            if ENDS[b, s] > STARTS[b, s]:
                assert (weights[b, s, ~outside] > 0).all()
    np.testing.assert_allclose(weights, _reference(layer, hidden, STARTS, ENDS)[1], atol=1e-6)


@pytest.mark.parametrize("pooling", ["mean", "attention"])
def test_tokens_outside_a_span_do_not_change_its_vector(pooling):
    keras.utils.set_random_seed(2)
    layer = SpanRepresentation(projection_dim=3, pooling=pooling)
    before = _numpy(layer(HIDDEN, STARTS, ENDS))
    changed = HIDDEN.copy()
    changed[0, [0, 4, 5, 6]] = 100.0  # outside span (1, 3) of row 0 only
    after = _numpy(layer(changed, STARTS, ENDS))
    np.testing.assert_allclose(after[0, 0], before[0, 0], atol=1e-5)
    assert not np.allclose(after[0, 3], before[0, 3])  # span (4, 6) does see them


def test_a_one_token_span_pools_to_that_token():
    layer = SpanRepresentation(projection_dim=2, pooling="attention")
    output = _numpy(layer(HIDDEN, STARTS, ENDS))
    np.testing.assert_allclose(output[0, 1, 4:], HIDDEN[0, 2], atol=1e-6)  # span (2, 2)
    np.testing.assert_allclose(output[0, 2, 4:], HIDDEN[0, 0], atol=1e-6)  # padding (0, 0)


def test_config_round_trip_keeps_every_argument():
    layer = SpanRepresentation(
        projection_dim=5, pooling="attention", activation="relu", name="spans"
    )
    config = layer.get_config()
    assert (config["projection_dim"], config["pooling"], config["activation"]) == (
        5,
        "attention",
        "relu",
    )
    rebuilt = SpanRepresentation.from_config(config)
    assert rebuilt.get_config() == config and rebuilt.attention_score is not None


def test_mixed_precision_gives_finite_outputs():
    layer = SpanRepresentation(projection_dim=3, pooling="attention", dtype="mixed_bfloat16")
    output = layer(HIDDEN, STARTS, ENDS)
    assert output.dtype == "bfloat16"
    assert np.isfinite(_numpy(ops.cast(output, "float32"))).all()


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"projection_dim": 0}, "projection_dim must be a positive int; received 0"),
        ({"projection_dim": 2.0}, "projection_dim must be a positive int; received 2.0"),
        (
            {"projection_dim": 4, "pooling": "max"},
            r"pooling must be one of \('mean', 'attention'\); received 'max'",
        ),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        SpanRepresentation(**kwargs)
