"""A TF Serving SavedModel that writes text: an `EncoderDecoder` with tokenizer, beam search and
detokenization in the graph (T5's text in, text out; textbook §20.10).

`export_text_to_text` writes `<export_dir>/<name>/<version>/` (TF Serving's layout) with one
signature, `generate` (also `serving_default`):

| input              | outputs                                                             |
|--------------------|---------------------------------------------------------------------|
| text string (b,)   | text string (b,): the generated text, detokenized (lowercased)      |
|                    | token_ids int32 (b, 1 + max_new_tokens): the decoder start id, then |
|                    | the generated ids (after the end token, the end token repeats)      |

The graph packs each input as training did (`kbert.text.text_to_text_packing.pack_sources`),
runs `EncoderDecoder.beam_search` (or `greedy_search` for one beam) — the same code the Keras
model decodes with eagerly, unrolled over `max_new_tokens` steps with key/value caches — and
reads the ids back with `texts_from_generated`. So a fresh process that loads the export gives
exactly what `kbert.data.text_to_text.generate_texts` gives on the Keras model (tested). Its ops
are core TensorFlow plus the classic tf-text ops of `WordPieceTokenizer` (load with
`kbert.export.load_exported`, which imports `tensorflow_text` first).

Input rules as in `kbert.export.export_saved_model`: invalid UTF-8 is replaced, each text is cut
to `max_input_chars` characters before tokenization and to `source_length` tokens after, and a
request that is not a rank-1 string batch fails with an error naming the signature and input.
"""

import os
import tempfile

import keras
import tensorflow as tf

from kbert.checks import check_int
from kbert.export.assets import line_table, write_lines
from kbert.export.graph_inputs import checked_texts, clean_texts
from kbert.export.saved_model_files import load_exported, write_new_version
from kbert.text import WordPieceTokenizer
from kbert.text.text_to_text_packing import pack_sources, texts_from_generated

CHARS_PER_TOKEN = 32  # as kbert.export.export_settings: 8x the ~4 characters of a token


def _check(model, tokenizer, source_length, max_new_tokens, num_beams, length_penalty):
    if not hasattr(model, "beam_search") or not hasattr(model, "greedy_search"):
        raise ValueError(
            f"model must be a kbert.models.EncoderDecoder; received {type(model).__name__}"
        )
    if not isinstance(tokenizer, WordPieceTokenizer):
        raise ValueError(
            "tokenizer must be a kbert.text.WordPieceTokenizer (it runs inside the graph); "
            f"received {type(tokenizer).__name__}"
        )
    if len(tokenizer.get_vocabulary()) != model.vocabulary_size:
        raise ValueError(
            f"the tokenizer has {len(tokenizer.get_vocabulary())} tokens but the model's "
            f"vocabulary_size is {model.vocabulary_size}; expected the tokenizer it was trained "
            "with"
        )
    check_int("source_length", source_length, 2, expected="an integer >= 2")
    check_int("max_new_tokens", max_new_tokens, 1, expected="an integer >= 1")
    check_int("num_beams", num_beams, 1, expected="an integer >= 1")
    if isinstance(length_penalty, bool) or not isinstance(length_penalty, (int, float)):
        raise ValueError(f"length_penalty must be a number >= 0; received {length_penalty!r}")
    if length_penalty < 0:
        raise ValueError(f"length_penalty must be a number >= 0; received {length_penalty!r}")


def _verify(path):
    """Loads the written SavedModel and generates for a two-row batch."""
    outputs = load_exported(path).signatures["generate"](
        text=tf.constant(["kbert export check", ""])
    )
    for key, value in outputs.items():
        if value.shape[0] != 2:
            raise RuntimeError(
                f"signature 'generate' output {key!r} has shape {value.shape} for a batch of 2 "
                "in the verification run"
            )


def export_text_to_text(
    model,
    tokenizer,
    export_dir,
    name,
    version=None,
    source_length=128,
    max_new_tokens=16,
    num_beams=4,
    length_penalty=1.0,
    end_token="[SEP]",
    max_input_chars=None,
):
    """Writes a `generate` SavedModel of an `EncoderDecoder` (see the module docstring).

    Written into a hidden sibling, loaded and run once, then renamed into place: the version
    directory appears complete or not at all, and an existing version is never replaced.

    Args:
        model: `kbert.models.EncoderDecoder`.
        tokenizer: `kbert.text.WordPieceTokenizer` it was trained with (id 0 is padding).
        export_dir: str or `os.PathLike`, the model base directory's parent.
        name: str, the model name (TF Serving's `model_name`).
        version: int >= 0 or None, default None (1 + the highest existing version).
        source_length: int >= 2, default 128. Most source tokens, the end token included.
        max_new_tokens: int >= 1, default 16. Decoding steps (unrolled in the graph).
        num_beams: int >= 1, default 4. 1 decodes greedily.
        length_penalty: float >= 0, default 1.0 (`EncoderDecoder.beam_search`).
        end_token: str, default "[SEP]". Ends sources and generated texts.
        max_input_chars: int or None, default None (`CHARS_PER_TOKEN * source_length`).

    Returns:
        str, the version directory.

    Raises:
        ValueError: a model that is no `EncoderDecoder`, a tokenizer that cannot run in the
            graph or does not match the model's vocabulary, an end token not in the vocabulary,
            a bad number, an `export_dir` that is a file or not writable, or an existing
            version.
    """
    _check(model, tokenizer, source_length, max_new_tokens, num_beams, length_penalty)
    try:
        end_id = tokenizer.token_to_id(end_token)
    except ValueError:
        raise ValueError(
            f"end_token must be a token of the tokenizer's vocabulary; received {end_token!r}"
        ) from None
    if max_input_chars is None:
        max_input_chars = CHARS_PER_TOKEN * source_length
    check_int("max_input_chars", max_input_chars, 1, expected="an integer >= 1")

    def generate(text):
        (text,) = checked_texts("generate", text=text)
        sources = pack_sources(tokenizer, clean_texts(text, max_input_chars), source_length, end_id)
        ids = sources["encoder_token_ids"]
        if num_beams == 1:
            generated = model.greedy_search(ids, max_new_tokens, end_id)
        else:
            generated = model.beam_search(ids, max_new_tokens, num_beams, length_penalty, end_id)
        generated = tf.cast(generated, tf.int32)
        return {"text": texts_from_generated(tokenizer, generated, end_id), "token_ids": generated}

    def write(temporary):
        archive = keras.export.ExportArchive()
        archive.track(model)
        archive.track(tokenizer)
        with tempfile.TemporaryDirectory(prefix="kbert-assets-") as asset_dir:
            # The vocabulary travels as an asset, for clients that read token_ids themselves.
            vocab_path = os.path.join(asset_dir, "vocab.txt")
            write_lines(vocab_path, tokenizer.get_vocabulary(), "vocabulary tokens")
            archive.track(line_table(vocab_path, key_is_line_number=False))
            archive.add_endpoint(
                "generate", generate, input_signature=[tf.TensorSpec([None], tf.string)]
            )
            archive.write_out(temporary, verbose=False)

    return write_new_version(export_dir, name, version, write, lambda path, _: _verify(path))


__all__ = ["export_text_to_text"]
