"""Saving a tokenizer's configuration as one JSON file, the same way for every Python tokenizer."""

import json

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
