"""Tests of the attention maps: they are the probabilities each block really uses."""

import doctest
import importlib

import numpy as np
import pytest

from kbert.analysis.attention import attention_maps, sentence_attention
from kbert.models import Encoder
from kbert.text import BertPreprocessor, WordPieceTokenizer

TOKEN_IDS = np.array([[2, 7, 8, 9, 3, 0, 0], [2, 10, 11, 3, 12, 13, 3]], "int32")
SEGMENT_IDS = np.array([[0] * 7, [0, 0, 0, 0, 1, 1, 1]], "int32")
PADDING_MASK = (TOKEN_IDS != 0).astype("int32")
INPUTS = {"token_ids": TOKEN_IDS, "segment_ids": SEGMENT_IDS, "padding_mask": PADDING_MASK}
REAL = PADDING_MASK.astype(bool)  # (batch, seq)

VARIANTS = {
    "post_ln": {},
    "pre_ln": {"norm_first": True},
    "shared": {"share_layers": True},
    "causal_pre_ln": {"causal": True, "norm_first": True},
}


def _encoder(**changes):
    # Weights far larger than BERT's 0.02 make the attention far from uniform, so that matching
    # maps mean something (with 0.02 every map is uniform to about 1e-3).
    return Encoder.from_preset("tiny", num_layers=3, initializer_range=0.5, **changes)


def _layer_norm(x, layer):
    mean = x.mean(-1, keepdims=True)
    variance = x.var(-1, keepdims=True)
    gamma, beta = (np.asarray(w) for w in (layer.gamma, layer.beta))
    return (x - mean) / np.sqrt(variance + layer.epsilon) * gamma + beta


def _numpy_attention(block, x, padding_mask):
    """softmax(Q K^T / sqrt(head_dim) + mask) from the block's own kernels, in numpy."""
    attention = block.attention
    if block.norm_first:
        x = _layer_norm(x, block.attention_norm)
    batch, seq, _ = x.shape
    heads, head_dim = attention.num_heads, attention.head_dim

    def project(dense):
        y = x @ np.asarray(dense.kernel) + np.asarray(dense.bias)  # (batch, seq, hidden)
        return y.reshape(batch, seq, heads, head_dim).transpose(0, 2, 1, 3)

    scores = project(attention.query) @ project(attention.key).transpose(0, 1, 3, 2)
    scores = scores / np.sqrt(head_dim)  # (batch, heads, seq, keys)
    allowed = padding_mask.astype(bool)[:, None, None, :]
    if attention.causal:
        allowed = allowed & np.tril(np.ones((seq, seq), bool))[None, None]
    scores = np.where(allowed, scores, -1e9)
    scores = scores - scores.max(-1, keepdims=True)
    weights = np.exp(scores)
    return weights / weights.sum(-1, keepdims=True)


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_maps_are_the_attention_each_block_uses(variant):
    encoder = _encoder(**VARIANTS[variant])
    maps = attention_maps(encoder, INPUTS)
    assert maps.shape == (2, 3, 2, 7, 7) and maps.dtype == np.float32
    assert maps.max() > 0.5  # some query attends mostly to one key

    hidden_states = [np.asarray(h) for h in encoder(INPUTS, training=False)["hidden_states"]]
    for index, block in enumerate(encoder.blocks):
        # hidden_states[index] is the block's input: the block maps it to the next state.
        output = np.asarray(block(hidden_states[index], padding_mask=PADDING_MASK, training=False))
        if encoder.final_norm is not None and index == len(encoder.blocks) - 1:
            output = np.asarray(encoder.final_norm(output))
        np.testing.assert_allclose(output[REAL], hidden_states[index + 1][REAL], atol=1e-5)
        # The same probabilities, recomputed from the query and key kernels (real query rows:
        # padded queries are not projected with skip_padding, and nothing reads them).
        expected = _numpy_attention(block, hidden_states[index], PADDING_MASK)
        for row in range(2):
            np.testing.assert_allclose(
                maps[row, index][:, REAL[row]], expected[row][:, REAL[row]], atol=1e-5
            )

    np.testing.assert_allclose(maps.sum(-1), 1.0, atol=1e-5)  # every query row is a distribution
    assert np.all(maps[0, ..., ~REAL[0]] == 0.0)  # padded keys get nothing
    if encoder.config.causal:
        assert np.all(np.triu(maps, k=1) == 0.0)  # nobody attends to the future
    else:
        assert np.any(np.triu(maps[1], k=1) > 0.01)


def test_shared_block_gives_different_maps_at_each_layer():
    maps = attention_maps(_encoder(share_layers=True), INPUTS)
    # One set of weights, but each layer attends over a different input.
    assert not np.allclose(maps[:, 0], maps[:, 1], atol=1e-4)


def test_bad_encoders_and_inputs_are_rejected():
    with pytest.raises(ValueError, match=r"encoder must be a kbert Encoder .* received object"):
        attention_maps(object(), INPUTS)
    encoder = _encoder()

    class NoHiddenStates:
        blocks = encoder.blocks

        def __call__(self, inputs, training=None):
            return {"sequence_output": encoder(inputs)["sequence_output"]}

    with pytest.raises(
        ValueError,
        match=r"`hidden_states` list .* \(4 tensors\); received "
        r"outputs of type dict without `hidden_states`",
    ):
        attention_maps(NoHiddenStates(), INPUTS)
    with pytest.raises(
        ValueError, match=r"inputs must have the keys .* missing \['padding_mask'\]"
    ):
        attention_maps(encoder, {"token_ids": TOKEN_IDS, "segment_ids": SEGMENT_IDS})
    with pytest.raises(ValueError, match=r"inputs must hold three int arrays of one shape"):
        attention_maps(encoder, {**INPUTS, "padding_mask": PADDING_MASK[:, :5]})
    with pytest.raises(ValueError, match="inputs must be a dict"):
        attention_maps(encoder, TOKEN_IDS)


VOCABULARY = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "the",
    "bank",
    "of",
    "river",
    "##s",
    ".",
]


def test_sentence_attention_trims_to_real_tokens():
    tokenizer = WordPieceTokenizer(VOCABULARY)
    preprocessor = BertPreprocessor(tokenizer, sequence_length=12)
    encoder = _encoder()
    maps, tokens = sentence_attention(encoder, preprocessor, tokenizer, "The bank of rivers.")
    assert tokens == ["[CLS]", "the", "bank", "of", "river", "##s", ".", "[SEP]"]
    assert maps.shape == (3, 2, 8, 8)
    np.testing.assert_allclose(maps.sum(-1), 1.0, atol=1e-5)  # padding held no mass
    full = attention_maps(encoder, preprocessor(["The bank of rivers."]))
    np.testing.assert_array_equal(maps, full[0, :, :, :8, :8])

    with pytest.raises(ValueError, match="text must be a non-empty str"):
        sentence_attention(encoder, preprocessor, tokenizer, "  ")
    with pytest.raises(ValueError, match="text must be a non-empty str"):
        sentence_attention(encoder, preprocessor, tokenizer, ["The bank."])
    with pytest.raises(ValueError, match="tokenizer must have an id_to_token method"):
        sentence_attention(encoder, preprocessor, object(), "The bank.")


def test_docstring_examples_run():
    # By module path: the package's `attention_maps` attribute is the function, not the module.
    module = importlib.import_module("kbert.analysis.attention")
    results = doctest.testmod(module)
    assert results.attempted > 0 and results.failed == 0
