"""The tokenizers that run inside graphs (tf.data and exported SavedModels), checked in one place.

`WordPieceTokenizer` (BERT), `SentencePieceTokenizer` (a unigram model through SentencePiece's
op) and `GraphBytePairTokenizer` (a `BytePairTokenizer`'s character or byte-level BPE in core
ops and tf-text's regex split) are Keras layers of graph ops. `BertPreprocessor` and
`LongTextPreprocessor` take any of them and read the same attributes from it.
"""

import keras

from kbert.text.graph_byte_pair_tokenizer import GraphBytePairTokenizer
from kbert.text.sentencepiece_tokenizer import SentencePieceTokenizer
from kbert.text.wordpiece_tokenizer import WordPieceTokenizer

GRAPH_TOKENIZERS = (WordPieceTokenizer, SentencePieceTokenizer, GraphBytePairTokenizer)


def packing_tokenizer(tokenizer):
    """Returns `tokenizer` (deserialized when a config dict) once it can feed an input packer.

    Raises:
        ValueError: not a graph tokenizer (the message says which ones are), or one without
            the [CLS], [SEP] and [PAD] roles that packing inserts.
    """
    if isinstance(tokenizer, dict):
        tokenizer = keras.saving.deserialize_keras_object(tokenizer)
    if not isinstance(tokenizer, GRAPH_TOKENIZERS):
        raise ValueError(
            "tokenizer must be one of the tokenizers that run inside graphs: a "
            "GraphBytePairTokenizer for BPE (wrap the Python tokenizer in it), a "
            "SentencePieceTokenizer for a unigram model, or a kbert.text.WordPieceTokenizer; "
            f"received {type(tokenizer).__name__}"
        )
    missing = [
        role for role in ("cls_token", "sep_token", "pad_token") if getattr(tokenizer, role) is None
    ]
    if missing:
        raise ValueError(
            "tokenizer must define cls_token, sep_token and pad_token to pack inputs; received "
            f"None for {missing}"
        )
    return tokenizer
