"""The Python tokenizers' files: their own JSON configuration, and Hugging Face's tokenizer.json."""

import json
import os

from kbert.files import atomic_write_text


class JsonConfigFile:
    """`save(path)` / `load(path)` for a class with `get_config()` and `from_config(config)`."""

    def save(self, path):
        """Writes the configuration as JSON (atomically: a crash leaves the old file or none)."""
        atomic_write_text(path, json.dumps(self.get_config(), ensure_ascii=False) + "\n")

    @classmethod
    def load(cls, path):
        """The object `save` wrote to `path`."""
        with open(path, encoding="utf-8") as stream:
            return cls.from_config(json.load(stream))


def read_hugging_face_spec(path, model_type):
    """A Hugging Face `tokenizer.json` as a dict, checked to hold a `model_type` model and no
    normalizer (the Python tokenizers reproduce none).

    Raises:
        ValueError: another model type, or a normalizer (the message names the file).
    """
    with open(os.fspath(path), encoding="utf-8") as stream:
        spec = json.load(stream)
    model = spec.get("model") or {}
    if model.get("type") != model_type:
        raise ValueError(f"{path}: expected a {model_type} model; received {model.get('type')!r}")
    if spec.get("normalizer") is not None:
        raise ValueError(
            f"{path}: normalizer {spec['normalizer'].get('type')!r} is not supported; expected none"
        )
    return spec
