"""A token classifier: a softmax (or a CRF) over tags at every subword (J&M §11.4.3)."""

import keras
import numpy as np
from keras import ops

from kbert.checks import check_int
from kbert.layers.crf import CRF, CRFLoss, bio_constraints
from kbert.layers.dropout import Dropout
from kbert.models.pretraining_utils import (
    IGNORE_INDEX,
    encoder_dtype_policy,
    symbolic_encoder_inputs,
)
from kbert.models.task_model import TaskModel
from kbert.text.feature_batches import feature_batches
from kbert.text.word_scores import word_scores


@keras.saving.register_keras_serializable(package="kbert")
class TokenClassifier(TaskModel):
    """Tags every subword from the encoder's top layer: BIO tagging for NER, POS tagging.

    `Dropout → Dense(num_tags)` on `sequence_output` gives per-token emission logits. Without a
    CRF each token's tag is a softmax over those (J&M's BIO tagger); with `crf=True` a linear-chain
    CRF (`kbert.layers.CRF`) adds learned tag-to-tag transition scores, is trained with the
    sequence log-likelihood, and decodes the best tag sequence with Viterbi, so `I-PER` after `O`
    costs what the data says it should.

    Inputs: the encoder's dict (`token_ids`, `segment_ids`, `padding_mask`).
    Output: float32 logits `(batch, seq, num_tags)`. Labels: `(batch, seq)` int tag ids with
    `IGNORE_INDEX` (-100) at positions not scored ([CLS], [SEP], padding, and non-first subwords
    unless every subword is labelled); see `kbert.data.token_classification_features`.

    Args:
        encoder: `kbert.models.Encoder`, shared (held as `self.encoder`).
        num_tags: int >= 2.
        dropout: float, default 0.1.
        crf: bool, default False.
        **kwargs: `name`, `trainable`.

    Example:
    >>> from kbert.models import Encoder
    >>> tagger = TokenClassifier(Encoder.from_preset("tiny"), num_tags=5, crf=True)
    >>> inputs = {"token_ids": ops.array([[2, 5, 3]]), "segment_ids": ops.zeros((1, 3), "int32"),
    ...           "padding_mask": ops.ones((1, 3), "int32")}
    >>> tuple(tagger(inputs).shape)
    (1, 3, 5)
    """

    def __init__(self, encoder, num_tags, dropout=0.1, crf=False, **kwargs):
        num_tags = check_int("num_tags", num_tags, minimum=2)
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1); received {dropout!r}")
        policy = encoder_dtype_policy(encoder)

        # === Functional model ===
        inputs = symbolic_encoder_inputs()
        x = encoder(inputs)["sequence_output"]  # (batch, seq, hidden)
        x = Dropout(dropout, dtype=policy, name="head_dropout")(x)
        # Float32 logits whatever the encoder's policy: softmax, CRF and loss need the range.
        x = keras.layers.Dense(
            num_tags,
            kernel_initializer=keras.initializers.TruncatedNormal(stddev=0.02),
            dtype="float32",
            name="logits",
        )(x)  # (batch, seq, num_tags)
        crf_layer = None
        if crf:
            crf_layer = CRF(num_tags, name="crf")
            x = crf_layer(x)
        super().__init__(inputs=inputs, outputs=x, **kwargs)

        # === Config ===
        self.encoder = encoder
        self.num_tags = num_tags
        self.dropout = dropout
        self.crf = crf
        self.crf_layer = crf_layer

    def default_loss(self):
        """CRF negative log-likelihood, or softmax cross-entropy ignoring `IGNORE_INDEX`."""
        if self.crf:
            return CRFLoss(self.crf_layer)
        return keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, ignore_class=IGNORE_INDEX
        )

    def token_probabilities(self, logits, mask, tag_names=None):
        """Per-token tag distributions: a softmax, or one-hot Viterbi tags with a CRF.

        Args:
            logits: array (batch, seq, num_tags), this model's output.
            mask: array (batch, seq) 0/1: the positions the CRF chain runs over (the labelled
                positions in training: first subwords, or all word subwords). Ignored without CRF.
            tag_names: sequence of str, default None. With a CRF and IOB2 tag names, Viterbi
                only considers valid IOB2 paths (`kbert.layers.crf.bio_constraints`).

        Returns:
            numpy float32 (batch, seq, num_tags).
        """
        logits = ops.convert_to_tensor(logits, "float32")
        if not self.crf:
            return ops.convert_to_numpy(ops.softmax(logits, axis=-1))
        constraints = None if tag_names is None else bio_constraints(tag_names)
        tags, _ = self.crf_layer.decode(
            logits, ops.convert_to_tensor(mask, "int32"), constraints=constraints
        )
        return np.eye(self.num_tags, dtype=np.float32)[ops.convert_to_numpy(tags)]

    def predict_word_tags(
        self, features, batch_size=64, combine="first", num_sentences=None, tag_names=None
    ):
        """Tag ids per word, read from each word's owning window.

        Args:
            features: dict from `kbert.data.token_classification_features`.
            batch_size: int, default 64.
            combine: str, default "first" (J&M: the first subword's distribution) or "mean"
                (the average over the word's subwords). With a CRF, "first" runs the chain over
                first subwords and "mean" over every subword of the words, then reads the
                first subword's tag.
            num_sentences: int, default None (the highest sentence index + 1).
            tag_names: sequence of str, default None. IOB2 tag names: with a CRF, decode only
                valid IOB2 paths.

        Returns:
            A list (one per sentence) of lists of int tag ids.
        """
        inputs = {key: features[key] for key in ("token_ids", "segment_ids", "padding_mask")}
        logits = []
        for batch in feature_batches(inputs, batch_size=batch_size):
            logits.append(ops.convert_to_numpy(self(batch, training=False)))
        width = features["token_ids"].shape[1]
        logits = np.concatenate(
            [np.pad(part, ((0, 0), (0, width - part.shape[1]), (0, 0))) for part in logits]
        )
        if self.crf:
            chain = features["first_subword"] if combine == "first" else features["owned"]
            probabilities = self.token_probabilities(logits, chain, tag_names)
            combine = "first"
        else:
            probabilities = self.token_probabilities(logits, None)
        if num_sentences is None:
            num_sentences = int(features["sentence_index"].max()) + 1
        scores = word_scores(features, probabilities, num_sentences, combine=combine)
        return [score.argmax(axis=-1).tolist() for score in scores]

    def _config(self):
        return {
            "num_tags": self.num_tags,
            "dropout": self.dropout,
            "crf": self.crf,
        }
