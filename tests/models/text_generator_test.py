import numpy as np
import pytest

from kbert.models import Encoder
from kbert.models.text_generator import TextGenerator, filter_logits

PROMPT = np.array([[2, 7, 9, 11], [2, 5, 5, 8]], "int32")


def _causal(**changes):
    return Encoder.from_preset(
        "tiny", causal=True, norm_first=True, dropout=0.0, attention_dropout=0.0, **changes
    )


def _full(encoder, ids):
    inputs = {
        "token_ids": ids,
        "segment_ids": np.zeros_like(ids),
        "padding_mask": np.ones_like(ids),
    }
    return np.array(encoder(inputs)["sequence_output"])


@pytest.mark.parametrize("norm_first", [True, False])
def test_cached_decoding_equals_the_full_forward_pass(norm_first):
    encoder = (
        _causal()
        if norm_first
        else Encoder.from_preset("tiny", causal=True, dropout=0.0, attention_dropout=0.0)
    )
    ids = np.array([[2, 7, 9, 11, 13, 4], [2, 5, 5, 8, 1, 3]], "int32")
    expected = _full(encoder, ids)
    cache = encoder.init_cache(2, 6)
    hidden, cache = encoder.decode(ids[:, :3], cache, 0)  # prefill the prompt
    np.testing.assert_allclose(np.array(hidden), expected[:, :3], atol=1e-5)
    for position in range(3, 6):  # then one position per step
        hidden, cache = encoder.decode(ids[:, position : position + 1], cache, position)
        np.testing.assert_allclose(np.array(hidden)[:, 0], expected[:, position], atol=1e-5)


def test_greedy_generation_equals_naive_recomputation():
    encoder = _causal()
    generated = TextGenerator(encoder).generate(PROMPT, max_new_tokens=5)
    table = np.array(encoder.embeddings.token_embedding.embeddings)
    ids = PROMPT
    for _ in range(5):  # recompute the whole prefix for every token
        logits = _full(encoder, ids)[:, -1] @ table.T
        ids = np.concatenate([ids, logits.argmax(-1)[:, None].astype("int32")], axis=1)
    np.testing.assert_array_equal(generated, ids)


def test_sampling_is_reproducible_with_a_seed_and_stops_at_the_end_token():
    generator = TextGenerator(_causal(), end_token_id=3)
    a = generator.generate(PROMPT, 6, strategy="top_p", top_p=0.95, temperature=1.5, seed=1)
    b = generator.generate(PROMPT, 6, strategy="top_p", top_p=0.95, temperature=1.5, seed=1)
    np.testing.assert_array_equal(a, b)
    assert a.shape == (2, 10)
    for row in a:
        ends = np.flatnonzero(row[4:] == 3)
        if ends.size:
            assert (row[4 + ends[0] :] == 3).all()


def test_filters_keep_the_intended_support():
    logits = np.log(np.array([[0.5, 0.3, 0.15, 0.05]]))
    assert np.isfinite(filter_logits(logits, "greedy").numpy()).sum() == 1
    assert np.isfinite(filter_logits(logits, "top_k", top_k=3).numpy()).tolist() == [
        [True, True, True, False]
    ]
    # Nucleus: 0.5 + 0.3 = 0.8 < 0.85, so the third token is needed; the fourth is not.
    assert np.isfinite(filter_logits(logits, "top_p", top_p=0.85).numpy()).tolist() == [
        [True, True, True, False]
    ]
    assert np.isfinite(filter_logits(logits, "top_p", top_p=0.4).numpy()).sum() == 1
    sharpened = filter_logits(logits, "top_k", top_k=4, temperature=0.5).numpy()
    np.testing.assert_allclose(sharpened, logits / 0.5, rtol=1e-6)


def test_bad_arguments_are_errors():
    with pytest.raises(ValueError, match="causal"):
        TextGenerator(Encoder.from_preset("tiny"))
    generator = TextGenerator(_causal())
    with pytest.raises(ValueError, match="above the model's max_sequence_length=16"):
        generator.generate(PROMPT, max_new_tokens=20)
    with pytest.raises(ValueError, match="strategy must be one of"):
        generator.generate(PROMPT, 2, strategy="beam")
    with pytest.raises(ValueError, match="temperature must be > 0"):
        generator.generate(PROMPT, 2, strategy="top_k", temperature=0)
    with pytest.raises(ValueError, match="prompt_ids must be a non-empty"):
        generator.generate(np.zeros((2, 0), "int32"), 2)
    with pytest.raises(ValueError, match="cache is for causal attention"):
        Encoder.from_preset("tiny").blocks[0].attention(
            np.zeros((1, 1, 16), "float32"),
            cache=np.zeros((1, 2, 2, 4, 8), "float32"),
            cache_index=0,
        )


def test_greedy_generation_with_speaker_segments_equals_full_recomputation():
    encoder = _causal()  # the tiny preset has 2 segments: speakers, as in a dialog model
    speakers = np.array([[0, 0, 1, 1], [0, 1, 1, 0]], "int32")
    generator = TextGenerator(encoder)
    output = generator.generate(PROMPT, max_new_tokens=3, prompt_segment_ids=speakers, segment_id=1)
    table = np.array(encoder.embeddings.token_embedding.embeddings)
    ids, segments = PROMPT, speakers
    for _ in range(3):  # recompute everything each step, generated tokens in segment 1
        inputs = {"token_ids": ids, "segment_ids": segments, "padding_mask": np.ones_like(ids)}
        hidden = np.array(encoder(inputs)["sequence_output"])[:, -1]
        next_ids = (hidden @ table.T).argmax(-1).astype("int32")
        ids = np.concatenate([ids, next_ids[:, None]], axis=1)
        segments = np.concatenate([segments, np.ones((2, 1), "int32")], axis=1)
    np.testing.assert_array_equal(output, ids)
    with pytest.raises(ValueError, match="prompt_segment_ids must have the prompt's shape"):
        generator.generate(PROMPT, 2, prompt_segment_ids=np.zeros((2, 3), "int32"))
    plain = TextGenerator(_causal(num_segments=0))
    with pytest.raises(ValueError, match="needs an encoder with segment embeddings"):
        plain.generate(PROMPT, 2, prompt_segment_ids=speakers)
