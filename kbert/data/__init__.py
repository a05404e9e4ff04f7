"""Dataset readers and the data-directory setting."""

from kbert.data.data_dir import data_dir

__all__ = ["data_dir"]
