import collections

import keras
import numpy as np
import pytest

from kbert.data.question_answering_features import question_answering_features
from kbert.models import Encoder, QuestionAnswerer, decode_answers
from kbert.text import WordPieceTokenizer
from kbert.text.feature_batches import feature_batches
from tests.model_test_case import run_model_test

Example = collections.namedtuple("Example", "id title context question answers")


def _inputs(batch=4, seq=8, seed=0):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(3, seq + 1, size=batch)
    lengths[0] = seq
    mask = (np.arange(seq)[None, :] < lengths[:, None]).astype("int32")
    token_ids = rng.integers(5, 50, size=(batch, seq)).astype("int32") * mask
    segment_ids = (np.arange(seq)[None, :] >= 3).astype("int32") * mask
    return {"token_ids": token_ids, "segment_ids": segment_ids, "padding_mask": mask}


def test_outputs_are_float32_logits_with_padding_masked():
    model = QuestionAnswerer(Encoder.from_preset("tiny"))
    x = _inputs()
    outputs = model(x)
    assert sorted(outputs) == ["end_logits", "start_logits"]
    for logits in outputs.values():
        logits = keras.ops.convert_to_numpy(logits)
        assert logits.shape == (4, 8) and logits.dtype == np.float32
        padded = x["padding_mask"] == 0
        assert padded.any()
        np.testing.assert_array_equal(logits[padded], -1e4)
        assert (np.abs(logits[~padded]) < 100).all()  # [CLS] and the question stay unmasked
    assert [type(layer).__name__ for layer in model.head_layers()] == ["Dropout", "Dense"]


def test_fit_reduces_the_loss_and_save_load_round_trips(tmp_path):
    keras.utils.set_random_seed(0)
    model = QuestionAnswerer(Encoder.from_preset("tiny"), dropout=0.0)
    x = _inputs(batch=8, seed=1)
    last = x["padding_mask"].sum(axis=1) - 2  # (batch,) the last context token before [SEP]
    starts = np.where(np.arange(8) % 3 == 0, 0, np.minimum(3, last))  # some rows point at [CLS]
    labels = QuestionAnswerer.labels_from_features(
        {"start_positions": starts, "end_positions": np.maximum(starts, last)}
    )
    labels["end_logits"][starts == 0] = 0
    model.compile(keras.optimizers.Adam(1e-2), loss=model.default_loss())
    history = model.fit(x, labels, epochs=15, batch_size=8, verbose=0)
    losses = history.history["loss"]
    assert np.isfinite(losses).all() and losses[-1] < 0.5 * losses[0]

    path = tmp_path / "question_answerer.keras"
    model.save(path)
    restored = keras.saving.load_model(path)
    assert isinstance(restored, QuestionAnswerer) and restored.dropout == 0.0
    expected, actual = model.predict(x, verbose=0), restored.predict(x, verbose=0)
    for key in expected:
        np.testing.assert_allclose(actual[key], expected[key], atol=1e-5)


def test_mixed_precision_encoder_gives_float32_logits():
    model = QuestionAnswerer(Encoder.from_preset("tiny", dtype="mixed_bfloat16"))
    x = _inputs()
    outputs = model(x)
    for logits in outputs.values():
        assert logits.dtype == "float32"
        logits = keras.ops.convert_to_numpy(logits)
        np.testing.assert_array_equal(logits[x["padding_mask"] == 0], -1e4)


def test_trains_on_featurized_batches_and_decodes():
    keras.utils.set_random_seed(0)
    vocabulary = [
        "[PAD]",
        "[UNK]",
        "[CLS]",
        "[SEP]",
        "[MASK]",
        "who",
        "?",
        "bob",
        "ran",
        "far",
        ".",
    ]
    tokenizer = WordPieceTokenizer(vocabulary)
    examples = [
        Example(f"q{i}", "", "Bob ran far. " * 3, "Who?", (("Bob", 13 * i),)) for i in range(3)
    ]
    features = question_answering_features(
        examples, tokenizer, sequence_length=12, stride=2, max_question_length=2, training=True
    )
    keys = ("token_ids", "segment_ids", "padding_mask", "start_positions", "end_positions")
    dataset = feature_batches(
        {key: features[key] for key in keys},
        label_keys=("start_positions", "end_positions"),
        batch_size=4,
        training=True,
    )
    dataset = dataset.map(lambda x, y: (x, QuestionAnswerer.labels_from_features(y)))
    model = QuestionAnswerer(Encoder.from_preset("tiny"))
    model.compile("adam", loss=model.default_loss())
    history = model.fit(dataset, epochs=2, verbose=0)
    assert np.isfinite(history.history["loss"]).all()

    inputs = feature_batches({key: features[key] for key in keys[:3]}, batch_size=4)
    predictions = model.predict(inputs, verbose=0)
    answers = decode_answers(
        examples, features, predictions["start_logits"], predictions["end_logits"]
    )
    assert sorted(answers) == ["q0", "q1", "q2"]
    for answer in answers.values():
        assert answer["text"] == examples[0].context[answer["start"] : answer["end"]]


def test_labels_and_losses_are_keyed_by_output_name():
    model = QuestionAnswerer(Encoder.from_preset("tiny"))
    losses = model.default_loss()
    assert sorted(losses) == ["end_logits", "start_logits"]
    assert all(
        isinstance(loss, keras.losses.SparseCategoricalCrossentropy) for loss in losses.values()
    )
    with pytest.raises(ValueError, match=r"missing \['end_positions'\]"):
        QuestionAnswerer.labels_from_features({"start_positions": np.zeros(2)})
    with pytest.raises(ValueError, match=r"dropout must be in \[0, 1\); received 1.0"):
        QuestionAnswerer(Encoder.from_preset("tiny"), dropout=1.0)


def test_model_contract_and_export():
    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "who", "wrote", "it", "?", "tom"]
    keras.utils.set_random_seed(0)
    model = QuestionAnswerer(Encoder.from_preset("tiny", vocabulary_size=len(vocabulary)))
    x = _inputs()
    x["token_ids"] = x["token_ids"] % len(vocabulary)
    labels = {"start_logits": np.array([3, 4, 5, 3]), "end_logits": np.array([4, 4, 6, 5])}
    run_model_test(
        model,
        x,
        labels,
        zero_gradient_weights=("pooler/kernel", "pooler/bias"),
        export={
            "tokenizer": WordPieceTokenizer(vocabulary),
            "sequence_length": 16,
            "signatures": {"serving_default", "answer", "embed", "token_ids"},
            "call": {"question": ["who wrote it ?", "who ?"], "context": ["tom wrote it", ""]},
        },
    )
