import keras
import numpy as np
import pytest

from kbert.train import BestCheckpoint, count_batches, fine_tuning_optimizer, warmup_linear_decay


def test_optimizer_follows_warmup_then_linear_decay_and_skips_decay_on_biases_and_norms():
    optimizer = fine_tuning_optimizer(100, learning_rate=1e-3, warmup_fraction=0.1)
    for step in (0, 5, 9, 10, 50, 99, 100):
        expected = warmup_linear_decay(step, 1e-3, 100, warmup_steps=10)
        assert float(optimizer._learning_rate(step)) == pytest.approx(expected)
    bias = keras.Variable(np.ones(2), name="bias")
    kernel = keras.Variable(np.ones(2), name="kernel")
    optimizer.build([bias, kernel])
    optimizer.apply([np.zeros(2), np.zeros(2)], [bias, kernel])
    assert bias.numpy().tolist() == [1.0, 1.0]  # no decay: zero gradient leaves it alone
    assert kernel.numpy()[0] < 1.0  # decoupled weight decay shrinks it


def test_the_optimizer_is_bias_corrected_adam_its_first_update_is_the_rate():
    # Bias-corrected Adam (Keras's AdamW always is) divides m and v by 1 − β^t, so the first
    # update is lr · g / |g| = lr per weight, whatever the gradient's size. BERT's original
    # optimizer skipped the correction: its first update would be lr · (1 − β1) / √(1 − β2)
    # ≈ 3.16 lr (β1 0.9, β2 0.999), the early instability Mosbach et al. 2021 point at.
    rate = 1e-3
    optimizer = fine_tuning_optimizer(100, learning_rate=rate, warmup_fraction=0.0)
    bias = keras.Variable(np.zeros(3), name="bias")  # a bias: no weight decay on it
    optimizer.build([bias])
    optimizer.apply([np.array([0.5, -2.0, 1e-2])], [bias])
    np.testing.assert_allclose(bias.numpy(), [-rate, rate, -rate], rtol=1e-3)  # ε: 1e-7
    uncorrected = rate * (1 - optimizer.beta_1) / np.sqrt(1 - optimizer.beta_2)
    assert uncorrected == pytest.approx(3.162e-3, rel=1e-3)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"total_steps": 0}, "total_steps"),
        ({"total_steps": 5, "warmup_fraction": 2}, "warmup_fraction"),
    ],
)
def test_optimizer_arguments_are_checked(kwargs, message):
    with pytest.raises(ValueError, match=message):
        fine_tuning_optimizer(**kwargs)


def test_count_batches():
    import tensorflow as tf

    assert count_batches(tf.data.Dataset.range(10).batch(3)) == 4


def test_best_checkpoint_keeps_the_best_epoch_and_never_a_partial_file(tmp_path):
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    path = tmp_path / "best" / "model.keras"
    checkpoint = BestCheckpoint(path, monitor="val_loss", mode="min")
    values = iter([3.0, 1.0, 2.0])
    checkpoint.set_model(model)
    for epoch in range(3):
        checkpoint.on_epoch_end(epoch, {"val_loss": next(values)})
    assert checkpoint.best == 1.0 and checkpoint.best_epoch == 2
    assert path.is_file() and not list(path.parent.glob(".*partial*"))
    with pytest.raises(ValueError, match="monitors 'val_accuracy', which the epoch logs lack"):
        BestCheckpoint(tmp_path / "m.keras").on_epoch_end(0, {"loss": 1.0})
    with pytest.raises(ValueError, match="must end in .keras"):
        BestCheckpoint(tmp_path / "m.h5")


def test_an_unread_pooler_is_frozen_while_training_and_no_warning_is_raised(tmp_path):
    import warnings

    from kbert.data import Examples
    from kbert.data.label_vocabulary import LabelVocabulary
    from kbert.models import Encoder, QuestionAnswerer, SequenceClassifier
    from kbert.text import BertPreprocessor, WordPieceTokenizer
    from kbert.train import TrainingSettings, fine_tune_classifier
    from kbert.train.fine_tuning import reads_pooler, unused_pooler_frozen

    encoder = Encoder.from_preset("tiny", vocabulary_size=7, max_sequence_length=8)
    assert reads_pooler(SequenceClassifier(encoder, 2, pooling="pooler"))
    assert not reads_pooler(QuestionAnswerer(encoder))
    assert reads_pooler(keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)]))
    reader = SequenceClassifier(encoder, 2, pooling="pooler")
    with unused_pooler_frozen(reader):  # it reads the pooler: trained
        assert encoder.pooler.trainable

    classifier = SequenceClassifier(encoder, 2, pooling="cls")
    pooler_before = [w.numpy().copy() for w in encoder.pooler.weights]
    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b"]
    preprocessor = BertPreprocessor(WordPieceTokenizer(vocabulary), sequence_length=8)
    train = Examples(
        ["a b", "b a", "a", "b"], None, np.array([0, 1, 0, 1], np.int32),
        LabelVocabulary(["x", "y"]), "test",
    )  # fmt: skip
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fine_tune_classifier(
            classifier,
            preprocessor,
            train,
            settings=TrainingSettings(epochs=2, batch_size=2, verbose=0),
        )
    messages = [str(warning.message) for warning in caught]
    assert not [m for m in messages if "Gradients do not exist" in m or "shuffle" in m], messages
    assert not [m for m in messages if "ran out of data" in m], messages
    assert encoder.pooler.trainable  # given back
    for before, after in zip(pooler_before, encoder.pooler.weights, strict=True):
        np.testing.assert_array_equal(before, after.numpy())  # neither trained nor decayed
