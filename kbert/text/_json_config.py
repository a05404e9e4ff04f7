"""The Python tokenizers' files: their own JSON configuration, and Hugging Face's tokenizer.json."""

import json
import os

from kbert.files import atomic_write_text
from kbert.text import normalizers, post_processors, pre_tokenizers


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
    """A Hugging Face `tokenizer.json` as a dict, checked to hold a `model_type` model and only
    a normalizer, pre-tokenizer and post-processor that kbert reproduces
    (`kbert.text.normalizers`, `pre_tokenizers`, `post_processors`).

    Raises:
        ValueError: another model type, or a component kbert cannot reproduce (the message
            names the file and the component).
    """
    with open(os.fspath(path), encoding="utf-8") as stream:
        spec = json.load(stream)
    model = spec.get("model") or {}
    if model.get("type") != model_type:
        raise ValueError(f"{path}: expected a {model_type} model; received {model.get('type')!r}")
    normalizers.check_normalizer(spec.get("normalizer"), str(path))
    if spec.get("pre_tokenizer") is not None:
        pre_tokenizers.check_pre_tokenizer(spec["pre_tokenizer"], str(path))
    post_processors.check_post_processor(spec.get("post_processor"), str(path))
    return spec


def component_name(spec):
    """A Hugging Face component's name (its parts' for a Sequence), for error messages."""
    if not isinstance(spec, dict):
        return repr(spec)
    parts = spec.get("normalizers") or spec.get("pretokenizers") or spec.get("processors")
    if spec.get("type") == "Sequence" and parts:
        return "Sequence[" + ", ".join(component_name(part) for part in parts) + "]"
    return str(spec.get("type"))
