"""The unigram tokenizer inside graphs: SentencePiece's own op, for tf.data and serving exports.

`UnigramTokenizer` is the readable Python reference; it cannot sit in a SavedModel. This layer
writes the same model as a SentencePiece `ModelProto` (`UnigramTokenizer.to_sentencepiece`) and
runs it with tf-text's `SentencepieceTokenizer`, whose ops (`SentencepieceOp`,
`SentencepieceTokenizeOp`, `SentencepieceDetokenizeOp`) are in the tf-text op library that
TF Serving links, so a model exported with it serves raw text. It segments as the Python
tokenizer does with `float32_scores=True` (SentencePiece's conventions;
`benchmarks/tokenizer_parity.py` measures the agreement on real text), and it names BERT's role
tokens, so `BertPreprocessor` packs its ids as it packs WordPiece's.

A unigram `tokenizer.json` with a Hugging Face normalizer or pre-tokenizer runs as `tokenizers`
runs it: the text is normalized and split by graph ops (`graph_normalizers`,
`graph_pre_tokenizers`; what they cannot compute, such as `Precompiled`, is refused by name),
and SentencePiece's op segments each split on its own, with spaces kept as they are.
"""

import hashlib
import os

import keras
import tensorflow as tf
import tensorflow_text

from kbert.text import _bert_text
from kbert.text.graph_normalizers import check_graph_normalizer, graph_normalize
from kbert.text.graph_pre_tokenizers import check_graph_pre_tokenizer, graph_pre_tokenize
from kbert.text.graph_tokenizer_layer import GraphTokenizerLayer
from kbert.text.unigram_tokenizer import UnigramTokenizer
from kbert.text.wordpiece_tokenizer import as_texts

# tf-text's SentencePiece kernels, through TensorFlow's public op-library loader (tf-text has
# already loaded the library; this returns its op wrappers).
_OPS = tf.load_op_library(
    os.path.join(
        os.path.dirname(tensorflow_text.__file__), "python", "ops", "_sentencepiece_tokenizer.so"
    )
)


class _SentencePieceModel(tf.saved_model.experimental.TrackableResource):
    """The SentencePiece processor as a graph resource, shared by name across kernels.

    tf-text's own `SentencepieceTokenizer` makes the resource private to the kernel that created
    it, so anything that clears TensorFlow's eager kernel cache (`tf.random.set_seed`,
    `keras.utils.set_random_seed`) destroys it and every later call fails with "Resource ...
    does not exist". Named by a hash of the model, the resource outlives its kernel, and two
    layers (or a restored SavedModel) with the same model share one processor.
    """

    def __init__(self, model):
        self._model = model
        self._shared_name = "kbert_sentencepiece_" + hashlib.sha256(model).hexdigest()[:24]
        super().__init__()
        _ = self.resource_handle  # creates it now, outside any function being traced

    def _create_resource(self):
        return _OPS.sentencepiece_op(model=self._model, shared_name=self._shared_name)


@keras.saving.register_keras_serializable(package="kbert")
class SentencePieceTokenizer(GraphTokenizerLayer):
    """A `UnigramTokenizer` as a Keras layer of graph ops: text in, ids out.

    Args:
        unigram: `UnigramTokenizer`, or its `get_config()` dict. Its role tokens (`pad_token`,
            `cls_token`, `sep_token`, `mask_token`; `with_roles()` adds them) become this
            layer's.
        **kwargs: passed to `keras.layers.Layer`.

    Example:
    >>> unigram = UnigramTokenizer(
    ...     [("<unk>", 0.0), ("▁", -2.0), ("▁low", -3.0), ("est", -3.5), ("l", -6.0),
    ...      ("o", -6.0), ("w", -6.0), ("e", -6.0), ("s", -6.0), ("t", -6.0)]).with_roles()
    >>> layer = SentencePieceTokenizer(unigram)
    >>> layer(["lowest"]).to_list(), layer.cls_token_id
    ([[2, 3]], 11)
    """

    def __init__(self, unigram, **kwargs):
        super().__init__(**kwargs)
        if isinstance(unigram, dict):
            unigram = UnigramTokenizer.from_config(unigram)
        if not isinstance(unigram, UnigramTokenizer):
            raise ValueError(
                "unigram must be a kbert.text.UnigramTokenizer or its config; received "
                f"{type(unigram).__name__}"
            )
        where = "SentencePieceTokenizer"
        # A Hugging Face pipeline: normalized and split by graph ops, each split segmented
        # apart by SentencePiece's op, as `UnigramTokenizer` does.
        self._normalizer = check_graph_normalizer(unigram.normalizer, where)
        self._pre_tokenizer = unigram.pre_tokenizer
        if self._pre_tokenizer is not None:
            check_graph_pre_tokenizer(
                self._pre_tokenizer, where, normalized=unigram.normalizer is not None
            )
        self._splits = self._normalizer is not None or self._pre_tokenizer is not None
        # The Python reference with SentencePiece's conventions: what this layer computes.
        self.unigram = UnigramTokenizer.from_config(
            {**unigram.get_config(), "float32_scores": True}
        )
        self.reference = self.unigram
        self._adopt_roles(f"SentencePiece model of {self.vocabulary_size()} pieces")
        with tf.init_scope():
            # The model proto travels inside the graph as the op's attribute; the resource is
            # tracked by this layer (and by a SavedModel exported from it).
            self._model = _SentencePieceModel(self.unigram.to_sentencepiece(splits=self._splits))
        self.built = True

    # ------------------------------------------------------------------ vocabulary and roles

    def get_vocabulary(self):
        """The pieces, indexed by id (list of str)."""
        return [piece for piece, _ in self.unigram.pieces]

    unknown_token_id = property(lambda self: self.unigram.unknown_id, doc="int.")

    # ------------------------------------------------------------------ tokenizing

    def call(self, inputs):
        """Text to ids.

        Args:
            inputs: a string scalar, a 1-D string tensor, or a Python str or list of str.

        Returns:
            A 1-D int32 `tf.Tensor` for a scalar, an int32 `tf.RaggedTensor` (batch, None) for
            a batch.
        """
        texts = as_texts(inputs)
        batch = texts[tf.newaxis] if texts.shape.rank == 0 else texts
        if self._splits:
            ids = self._split_ids(batch)
        else:
            ids = self._segment(batch)
        return ids[0] if texts.shape.rank == 0 else ids

    def _split_ids(self, batch):
        """Ids (batch, None) of a Hugging Face pipeline: each split segmented apart."""
        batch = _bert_text.replace_invalid_utf8(batch)
        if self._normalizer is not None:
            batch = graph_normalize(self._normalizer, batch)
        if self._pre_tokenizer is None:
            words = tf.RaggedTensor.from_tensor(batch[:, tf.newaxis])  # (batch, 1)
        else:
            starts = tf.zeros_like(batch, tf.int64)
            words, _ = graph_pre_tokenize(self._pre_tokenizer, batch, starts)  # (batch, words)
        ids = self._segment(words.flat_values)  # (words, None)
        return words.with_flat_values(ids).merge_dims(1, 2)

    def _segment(self, batch):
        """SentencePiece's ids (n, None) of the strings `batch` (n,)."""
        values, splits = _OPS.sentencepiece_tokenize_op(
            self._model.resource_handle,
            batch,
            nbest_size=0,
            alpha=1.0,
            add_bos=False,
            add_eos=False,
            reverse=False,
            out_type=tf.int32,
        )
        return tf.RaggedTensor.from_row_splits(values, splits, validate=False)  # (n, None)

    def detokenize(self, token_ids):
        """Ids back to text (SentencePiece's decoding: control and role pieces dropped).

        Args:
            token_ids: int tensor, ragged tensor or nested list; 1-D for one text, 2-D for a
                batch.

        Returns:
            A string scalar for 1-D input, a 1-D string tensor for a batch.
        """
        token_ids, single = self._id_batch(token_ids, tf.int32)
        texts = _OPS.sentencepiece_detokenize_op(
            self._model.resource_handle,
            token_ids.flat_values,
            token_ids.row_splits,
            add_bos=False,
            add_eos=False,
            reverse=False,
        )  # (batch,)
        return texts[0] if single else texts

    def get_config(self):
        config = super().get_config()
        config["unigram"] = self.unigram.get_config()
        return config
