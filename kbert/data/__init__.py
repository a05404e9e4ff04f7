"""Dataset readers and the data-directory setting."""

from kbert.data.data_dir import data_dir, locate
from kbert.data.sst2 import read_sst2
from kbert.data.trec import read_trec

__all__ = ["data_dir", "locate", "read_sst2", "read_trec"]
