"""Tokenizing and packing BERT inputs, in tf.data and inside exported graphs.

Everything here matches Hugging Face `tokenizers` (BERT normalizer, pre-tokenizer, WordPiece,
post-processor and truncation) and uses only core TensorFlow ops plus the classic tf-text ops that
TF Serving's tensorflow-text 2.12 knows (`RegexSplitWithOffsets`, `NormalizeUTF8`,
`WordpieceTokenizeWithOffsets`), so the same layers serve training pipelines and exported models.

Byte-pair encoding (`BytePairTokenizer`, `learn_merges`: the textbook's character BPE and
GPT-2's byte-level BPE) and SentencePiece's unigram model (`UnigramTokenizer`, `learn_unigram`)
run eagerly in Python, with parity against Hugging Face and sentencepiece; they name BERT's role
tokens like WordPiece does (`with_roles()`), so every pretraining pipeline takes any of them.
Their `from_huggingface` loads `tokenizer.json` files built the way real models' are: the
normalizers, pre-tokenizers and post-processors of `normalizers`, `pre_tokenizers` and
`post_processors` (offsets still refer to the original text); anything else is refused by name.
"""

from kbert.text.byte_pair_tokenizer import BytePairTokenizer
from kbert.text.byte_pair_trainer import byte_level_alphabet, learn_merges
from kbert.text.graph_byte_pair_tokenizer import GraphBytePairTokenizer
from kbert.text.input_packer import InputPacker
from kbert.text.long_text import (
    LONG_INPUT_STRATEGIES,
    LongTextPreprocessor,
    aggregate_window_logits,
    window_spans,
)
from kbert.text.masked_lm_masker import MaskedLMMasker, unigram_probabilities_from_counts
from kbert.text.parity import TokenizerAgreement, tokenizer_agreement
from kbert.text.preprocessor import BertPreprocessor
from kbert.text.sentencepiece_tokenizer import SentencePieceTokenizer
from kbert.text.span_masker import SpanMasker
from kbert.text.unigram_tokenizer import UnigramTokenizer
from kbert.text.unigram_trainer import learn_unigram
from kbert.text.vocabulary_trainer import (
    corpus_tokenizer,
    train_wordpiece_vocabulary,
    write_vocabulary,
)
from kbert.text.wordpiece_tokenizer import WordPieceTokenizer

__all__ = [
    "LONG_INPUT_STRATEGIES",
    "BertPreprocessor",
    "BytePairTokenizer",
    "byte_level_alphabet",
    "learn_merges",
    "LongTextPreprocessor",
    "aggregate_window_logits",
    "window_spans",
    "InputPacker",
    "MaskedLMMasker",
    "SentencePieceTokenizer",
    "GraphBytePairTokenizer",
    "SpanMasker",
    "TokenizerAgreement",
    "UnigramTokenizer",
    "learn_unigram",
    "WordPieceTokenizer",
    "corpus_tokenizer",
    "tokenizer_agreement",
    "train_wordpiece_vocabulary",
    "unigram_probabilities_from_counts",
    "write_vocabulary",
]
