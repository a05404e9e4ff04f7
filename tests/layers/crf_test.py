import itertools
import os
import tempfile

import keras
import numpy as np
import pytest
import tensorflow as tf
from keras import ops

from kbert.layers import CRF, CRFLoss, bio_constraints
from tests.layer_test_case import run_layer_test

NUM_TAGS = 3
# (batch 3, seq 5) masks: a contiguous prefix, subword-style gaps, an all-zero row, a single
# scored position, everything scored, gaps at both ends.
MASKS = [
    np.array([[1, 1, 1, 0, 0], [0, 1, 0, 1, 1], [0, 0, 0, 0, 0]]),
    np.array([[0, 0, 1, 0, 0], [1, 1, 1, 1, 1], [0, 1, 1, 0, 1]]),
    np.array([[1, 0, 0, 0, 1], [1, 0, 1, 0, 0], [0, 0, 1, 1, 0]]),
]


def _numpy(x):
    return np.asarray(ops.convert_to_numpy(x))


def _random_crf(rng, num_tags=NUM_TAGS):
    crf = CRF(num_tags)
    crf.build((None, None, num_tags))
    crf.transitions.assign(rng.normal(size=(num_tags, num_tags)).astype("float32"))
    crf.start_transitions.assign(rng.normal(size=(num_tags,)).astype("float32"))
    crf.end_transitions.assign(rng.normal(size=(num_tags,)).astype("float32"))
    return crf


def _reference_score(emissions, tags, mask, crf):
    """The path score written out over the scored positions of one row."""
    transitions, start, end = (
        np.array(w) for w in (crf.transitions, crf.start_transitions, crf.end_transitions)
    )
    positions = np.flatnonzero(mask)
    if positions.size == 0:
        return 0.0
    path = tags[positions]
    score = start[path[0]] + end[path[-1]] + emissions[positions, path].sum()
    return score + sum(transitions[a, b] for a, b in zip(path[:-1], path[1:], strict=True))


def _all_paths(mask, seq_len, rng):
    """Every tag path over the scored positions; unscored positions hold random junk ids."""
    positions = np.flatnonzero(mask)
    for path in itertools.product(range(NUM_TAGS), repeat=positions.size):
        tags = rng.integers(-100, NUM_TAGS, size=seq_len)
        tags[positions] = path
        yield tags


def _logsumexp(values):
    top = np.max(values)
    return top + np.log(np.sum(np.exp(np.asarray(values) - top)))


@pytest.mark.parametrize("case", range(len(MASKS)))
def test_matches_brute_force_enumeration(case):
    rng = np.random.default_rng(case)
    mask = MASKS[case]
    batch, seq_len = mask.shape
    crf = _random_crf(rng)
    emissions = rng.normal(size=(batch, seq_len, NUM_TAGS)).astype("float32")

    log_z = _numpy(crf.log_partition(emissions, mask))
    best_tags, best_scores = (_numpy(x) for x in crf.decode(emissions, mask))
    assert best_tags.dtype == np.int32 and best_scores.dtype == np.float32

    for row in range(batch):
        paths = np.stack(list(_all_paths(mask[row], seq_len, rng)))  # (paths, seq)
        scores = np.array([_reference_score(emissions[row], p, mask[row], crf) for p in paths])
        np.testing.assert_allclose(log_z[row], _logsumexp(scores), atol=1e-5)

        # All paths of this row at once, as one batch.
        row_emissions = np.repeat(emissions[row][None], len(paths), axis=0)  # (paths, seq, tags)
        row_mask = np.repeat(mask[row][None], len(paths), axis=0)  # (paths, seq)
        np.testing.assert_allclose(
            _numpy(crf.sequence_score(row_emissions, paths, row_mask)), scores, atol=1e-5
        )
        log_likelihood = _numpy(crf.log_likelihood(row_emissions, paths, row_mask))
        np.testing.assert_allclose(log_likelihood, scores - _logsumexp(scores), atol=1e-5)
        # The probabilities of all paths sum to one.
        np.testing.assert_allclose(np.exp(log_likelihood).sum(), 1.0, atol=1e-5)

        best = paths[np.argmax(scores)]
        expected_tags = np.where(mask[row] == 1, best, 0)
        np.testing.assert_array_equal(best_tags[row], expected_tags)
        np.testing.assert_allclose(best_scores[row], scores.max(), atol=1e-5)


def test_a_row_with_nothing_scored_is_the_empty_path():
    crf = _random_crf(np.random.default_rng(5))
    emissions = np.random.default_rng(6).normal(size=(2, 4, NUM_TAGS)).astype("float32")
    mask = np.array([[0, 0, 0, 0], [0, 1, 0, 0]])
    tags = np.array([[2, 1, 2, -100], [2, 1, 2, -100]])
    np.testing.assert_allclose(_numpy(crf.log_partition(emissions, mask))[0], 0.0)
    np.testing.assert_allclose(_numpy(crf.sequence_score(emissions, tags, mask))[0], 0.0)
    np.testing.assert_allclose(_numpy(crf.log_likelihood(emissions, tags, mask))[0], 0.0)
    best_tags, best_scores = crf.decode(emissions, mask)
    np.testing.assert_array_equal(_numpy(best_tags)[0], [0, 0, 0, 0])
    assert _numpy(best_scores)[0] == 0.0
    assert _numpy(crf.log_partition(emissions, mask))[1] != 0.0  # the other row is scored


def test_bool_and_int_masks_agree_and_call_is_the_identity():
    crf = _random_crf(np.random.default_rng(7))
    emissions = np.random.default_rng(8).normal(size=(3, 5, NUM_TAGS)).astype("float32")
    mask = MASKS[0]
    np.testing.assert_array_equal(
        _numpy(crf.log_partition(emissions, mask)),
        _numpy(crf.log_partition(emissions, mask.astype(bool))),
    )
    output = crf(emissions.astype("float16"))
    assert output.dtype == "float32"
    np.testing.assert_array_equal(_numpy(output), emissions.astype("float16").astype("float32"))


def test_bfloat16_emissions_are_computed_in_float32():
    rng = np.random.default_rng(9)
    crf = _random_crf(rng)
    emissions = 4.0 * rng.normal(size=(3, 5, NUM_TAGS)).astype("float32")
    tags = rng.integers(0, NUM_TAGS, size=(3, 5))
    mask = MASKS[1]
    low = ops.cast(emissions, "bfloat16")
    rounded = _numpy(ops.cast(low, "float32"))  # the same values, held in float32
    for method, args in [
        ("log_likelihood", (tags, mask)),
        ("log_partition", (mask,)),
        ("sequence_score", (tags, mask)),
    ]:
        got = getattr(crf, method)(low, *args)
        assert got.dtype == "float32", method
        np.testing.assert_allclose(
            _numpy(got), _numpy(getattr(crf, method)(rounded, *args)), atol=1e-5, err_msg=method
        )
        # and close to the unrounded float32 input
        np.testing.assert_allclose(
            _numpy(got), _numpy(getattr(crf, method)(emissions, *args)), atol=0.2, err_msg=method
        )
    low_tags, low_scores = crf.decode(low, mask)
    high_tags, high_scores = crf.decode(rounded, mask)
    np.testing.assert_array_equal(_numpy(low_tags), _numpy(high_tags))
    np.testing.assert_allclose(_numpy(low_scores), _numpy(high_scores), atol=1e-5)


def test_graph_mode_with_a_dynamic_sequence_length():
    rng = np.random.default_rng(10)
    crf = _random_crf(rng)
    spec = tf.TensorSpec((None, None, NUM_TAGS), "float32")
    mask_spec = tf.TensorSpec((None, None), "int32")

    @tf.function(input_signature=[spec, mask_spec, mask_spec])
    def run(emissions, tags, mask):
        return crf.log_likelihood(emissions, tags, mask), crf.decode(emissions, mask)

    for seq_len in (4, 7):
        emissions = rng.normal(size=(2, seq_len, NUM_TAGS)).astype("float32")
        tags = rng.integers(0, NUM_TAGS, size=(2, seq_len)).astype("int32")
        mask = (rng.random((2, seq_len)) < 0.6).astype("int32")
        graph_ll, (graph_tags, graph_scores) = run(emissions, tags, mask)
        eager_tags, eager_scores = crf.decode(emissions, mask)
        np.testing.assert_allclose(
            _numpy(graph_ll), _numpy(crf.log_likelihood(emissions, tags, mask)), atol=1e-6
        )
        np.testing.assert_array_equal(_numpy(graph_tags), _numpy(eager_tags))
        np.testing.assert_allclose(_numpy(graph_scores), _numpy(eager_scores), atol=1e-6)


def test_gradients_reach_emissions_and_all_three_weights():
    rng = np.random.default_rng(11)
    crf = _random_crf(rng)
    emissions = tf.Variable(rng.normal(size=(3, 5, NUM_TAGS)).astype("float32"))
    tags = rng.integers(0, NUM_TAGS, size=(3, 5))
    with tf.GradientTape() as tape:
        loss = -ops.sum(crf.log_likelihood(emissions, tags, MASKS[0]))
    variables = [emissions] + [w.value for w in crf.trainable_weights]
    gradients = tape.gradient(loss, variables)
    for variable, gradient in zip(variables, gradients, strict=True):
        assert gradient is not None and np.abs(_numpy(gradient)).sum() > 0, variable.name
    # No gradient reaches unscored emissions.
    unscored = np.broadcast_to((MASKS[0] == 0)[..., None], emissions.shape)
    assert np.all(_numpy(gradients[0])[unscored] == 0)


def _tagging_model(num_features=4):
    inputs = keras.Input(shape=(None, num_features))  # dynamic sequence length
    emissions = keras.layers.Dense(NUM_TAGS, name="emissions")(inputs)
    crf = CRF(NUM_TAGS, name="crf")
    return keras.Model(inputs, crf(emissions)), crf


def test_fit_learns_a_tag_pattern_carried_only_by_transitions():
    # Constant inputs give every position the same emissions, so the pattern 0 -> 1 -> 2 -> 0
    # over the scored positions can only be learned by the start and transition weights.
    keras.utils.set_random_seed(0)
    model, crf = _tagging_model()
    x = np.ones((8, 7, 4), "float32")
    y = np.array(
        [
            [-100, 0, -100, 1, 2, 0, -100],  # [CLS] w -- w w w [SEP]
            [-100, 0, 1, -100, -100, 2, -100],
            [-100, 0, 1, 2, 0, 1, -100],
            [-100, 0, -100, -100, -100, -100, -100],
        ]
        * 2,
        "int32",
    )
    model.compile(optimizer=keras.optimizers.Adam(0.1), loss=CRFLoss(crf))
    before = [np.array(w) for w in crf.trainable_weights]
    initial_loss = model.evaluate(x, y, verbose=0)
    model.fit(x, y, batch_size=8, epochs=40, verbose=0)
    final_loss = model.evaluate(x, y, verbose=0)
    assert final_loss < 0.2 * initial_loss, (initial_loss, final_loss)
    for weight, old in zip(crf.trainable_weights, before, strict=True):
        assert not np.allclose(np.array(weight), old), f"{weight.path} did not train"

    mask = y >= 0
    tags, _ = crf.decode(model.predict(x, verbose=0), mask)
    np.testing.assert_array_equal(_numpy(tags), np.where(mask, y, 0))


def test_loss_ignores_negative_labels_and_averages_the_batch():
    crf = _random_crf(np.random.default_rng(12))
    emissions = np.random.default_rng(13).normal(size=(2, 4, NUM_TAGS)).astype("float32")
    y_true = np.array([[-100, 2, 0, -100], [1, -1, -100, 2]])
    mask = y_true >= 0
    expected = -_numpy(crf.log_likelihood(emissions, np.where(mask, y_true, 0), mask)).mean()
    np.testing.assert_allclose(_numpy(CRFLoss(crf)(y_true, emissions)), expected, rtol=1e-6)


def test_layer_contract():
    # The call is the identity, so no loss on its output trains the weights: skip `fit`.
    emissions = np.random.default_rng(14).normal(size=(2, 8, NUM_TAGS)).astype("float32")
    run_layer_test(
        CRF,
        {"num_tags": NUM_TAGS},
        emissions,
        expected_output_shape=(2, 8, NUM_TAGS),
        expected_num_trainable_weights=3,
        precision_output_dtype="float32",  # CRF arithmetic is float32 whatever the policy
        run_fit=False,
    )


def test_saved_model_keeps_the_transitions():
    rng = np.random.default_rng(15)
    model, crf = _tagging_model()
    crf.transitions.assign(rng.normal(size=(NUM_TAGS, NUM_TAGS)).astype("float32"))
    crf.start_transitions.assign(rng.normal(size=(NUM_TAGS,)).astype("float32"))
    crf.end_transitions.assign(rng.normal(size=(NUM_TAGS,)).astype("float32"))
    model.compile(optimizer="sgd", loss=CRFLoss(crf))
    x = rng.normal(size=(2, 5, 4)).astype("float32")
    y = np.where(MASKS[1][:2] == 1, rng.integers(0, NUM_TAGS, size=(2, 5)), -100)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "tagger.keras")
        model.save(path)
        # A config cannot hand the loss the loaded model's CRF: say so rather than train a copy.
        with pytest.raises(
            ValueError,
            match=r"load_model\(path, compile=False\).*"
            r"CRFLoss\(model.get_layer\('crf'\)\)",
        ):
            keras.models.load_model(path)
        restored = keras.models.load_model(path, compile=False)
    restored_crf = restored.get_layer("crf")
    assert restored_crf.get_config() == crf.get_config()
    for weight, saved in zip(restored_crf.weights, crf.weights, strict=True):
        np.testing.assert_array_equal(np.array(weight), np.array(saved))
    emissions = restored.predict(x, verbose=0)
    np.testing.assert_allclose(emissions, model.predict(x, verbose=0), atol=1e-6)
    mask = y >= 0
    tags, scores = restored_crf.decode(emissions, mask)
    want_tags, want_scores = crf.decode(emissions, mask)
    np.testing.assert_array_equal(_numpy(tags), _numpy(want_tags))
    np.testing.assert_allclose(_numpy(scores), _numpy(want_scores), atol=1e-6)
    restored.compile(optimizer="sgd", loss=CRFLoss(restored_crf))
    np.testing.assert_allclose(
        restored.evaluate(x, y, verbose=0), model.evaluate(x, y, verbose=0), rtol=1e-6
    )


def test_loss_config_names_its_crf():
    crf = CRF(4, name="tagger")
    loss = CRFLoss(crf, name="nll", reduction="sum")
    config = loss.get_config()
    assert config == {"name": "nll", "reduction": "sum", "crf": "tagger"}
    rebuilt = CRFLoss.from_config({**config, "crf": crf})  # with the layer handed back
    assert rebuilt.crf is crf and rebuilt.get_config() == config
    with pytest.raises(ValueError, match="received crf='tagger'"):
        CRFLoss.from_config(config)


@pytest.mark.parametrize("num_tags", [1, 0, 2.0, True])
def test_num_tags_must_be_an_int_of_at_least_two(num_tags):
    with pytest.raises(ValueError, match=f"num_tags must be an int >= 2; received {num_tags!r}"):
        CRF(num_tags)


def test_loss_needs_a_crf_layer():
    with pytest.raises(ValueError, match="CRFLoss expected crf to be a CRF layer; received"):
        CRFLoss(keras.layers.Dense(3))


@pytest.mark.parametrize(
    "method", ["call", "log_likelihood", "log_partition", "sequence_score", "decode"]
)
def test_a_wrong_number_of_tags_is_named(method):
    crf = CRF(NUM_TAGS)
    emissions = np.zeros((2, 5, 4), "float32")
    tags, mask = np.zeros((2, 5), "int32"), np.ones((2, 5), "int32")
    args = {
        "call": (),
        "log_likelihood": (tags, mask),
        "log_partition": (mask,),
        "sequence_score": (tags, mask),
        "decode": (mask,),
    }[method]
    function = crf if method == "call" else getattr(crf, method)
    with pytest.raises(
        ValueError,
        match=r"num_tags=3; received shape \(2, 5, 4\) with last "
        r"dimension 4",
    ):
        function(emissions, *args)


def test_emissions_must_have_rank_three():
    with pytest.raises(ValueError, match=r"received shape \(2, 3\) of rank 2"):
        CRF(NUM_TAGS).decode(np.zeros((2, 3), "float32"), np.ones((2,)))


def test_bio_constraints_forbid_exactly_the_invalid_iob2_transitions():
    names = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    constraints = bio_constraints(names)
    forbidden = {
        (i, j)
        for i, a in enumerate(names)
        for j, b in enumerate(names)
        if b.startswith("I-") and a[2:] != b[2:]
    }
    forbidden |= {(0, 2), (0, 4)}  # O -> I-X
    for i in range(5):
        for j in range(5):
            assert (constraints["transitions"][i, j] < 0) == ((i, j) in forbidden), (i, j)
    assert constraints["start"].tolist() == [0.0, 0.0, -1e4, 0.0, -1e4]
    with pytest.raises(ValueError, match="IOB2"):
        bio_constraints(["O", "PER"])


def test_constrained_decode_is_the_best_valid_path_by_brute_force():
    names = ["O", "B-PER", "I-PER"]
    rng = np.random.default_rng(7)
    crf = CRF(3)
    crf.build()
    crf.transitions.assign(rng.normal(size=(3, 3)).astype("float32"))
    crf.start_transitions.assign(np.array([0.0, 0.0, 3.0], "float32"))
    emissions = rng.normal(size=(2, 5, 3)).astype("float32")
    emissions[:, :, 2] += 2.0  # the unconstrained best path starts with I-PER
    mask = np.array([[1, 1, 1, 1, 1], [0, 1, 0, 1, 1]])
    constraints = bio_constraints(names)
    tags, scores = crf.decode(emissions, mask, constraints=constraints)
    tags = ops.convert_to_numpy(tags)
    transitions = ops.convert_to_numpy(crf.transitions)
    start = ops.convert_to_numpy(crf.start_transitions)
    for row in range(2):
        positions = np.nonzero(mask[row])[0]
        best, best_path = -np.inf, None
        for path in itertools.product(range(3), repeat=len(positions)):
            labels = [names[t] for t in path]
            if labels[0] == "I-PER" or any(
                b == "I-PER" and a == "O" for a, b in zip(labels, labels[1:], strict=False)
            ):
                continue
            score = start[path[0]] + sum(
                emissions[row, p, t] for p, t in zip(positions, path, strict=False)
            )
            score += sum(transitions[a, b] for a, b in zip(path, path[1:], strict=False))
            if score > best:
                best, best_path = score, path
        assert tags[row, positions].tolist() == list(best_path)
