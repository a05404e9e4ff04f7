"""How a checkpoint was trained to be read: the pooling its own files name.

A sentence-transformers checkpoint (all-MiniLM-L6-v2, say) says how its sentence vector was
made in `1_Pooling/config.json` (`pooling_mode_mean_tokens: true`): read through [CLS]
instead, it is a different, untrained representation (feature extraction on TREC-6 drops from
about the mean's level to near the majority class; see lab15's record). A causal LM's summary is
its last real token; a BERT pretrained with NSP is read through [CLS] (and its pooler).
"""

import json
from pathlib import Path

from kbert.checkpoints.hf_bert import minilm_l6_dir

# sentence-transformers' `1_Pooling/config.json` keys → kbert's pooling names, in the order
# sentence-transformers concatenates them (a config naming several is refused here).
_SENTENCE_TRANSFORMERS_MODES = {
    "pooling_mode_cls_token": "cls",
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_max_tokens": "max",
}
POOLING_FILE = Path("1_Pooling") / "config.json"


def trained_pooling(path_or_name, causal=False, default="cls"):
    """The pooling a checkpoint was trained to be read by.

    Args:
        path_or_name: str or Path. "minilm_l6", a Hugging Face / sentence-transformers
            directory, or a kbert directory (lab01's saves).
        causal: bool, default False. The encoder is causal: read by its last real token.
        default: str, default "cls". For a checkpoint that names no pooling (a plain BERT).

    Returns:
        str: "last", "cls", "mean" or "max".

    Raises:
        ValueError: naming the file, when `1_Pooling/config.json` is unreadable or names a
            pooling kbert's heads do not have (several at once, or mean-sqrt-length).
    """
    if causal:
        return "last"
    directory = minilm_l6_dir() if str(path_or_name) == "minilm_l6" else Path(path_or_name)
    if directory is None:
        return default
    path = Path(directory) / POOLING_FILE
    if not path.is_file():
        return default
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ValueError(f"{path}: cannot be read as JSON ({error})") from None
    if not isinstance(config, dict):
        raise ValueError(f"{path}: expected a JSON object of pooling_mode_* flags")
    chosen = [name for key, name in _SENTENCE_TRANSFORMERS_MODES.items() if config.get(key)]
    others = [
        key
        for key, value in config.items()
        if key.startswith("pooling_mode_") and value and key not in _SENTENCE_TRANSFORMERS_MODES
    ]
    if others or len(chosen) != 1:
        raise ValueError(
            f"{path}: names the pooling {', '.join(chosen + others) or 'none'}; kbert's heads read "
            f"exactly one of {', '.join(_SENTENCE_TRANSFORMERS_MODES)}"
        )
    return chosen[0]
