"""Fixtures of the CLI tests: the toy sentiment checkpoint and runs fine-tuned from it once.

The runs are shared by the whole session: a test that changes a run works on a copy
(`shutil.copytree(trained_run, tmp_path / "run")`).
"""

import pytest

from kbert.cli.main import main
from tests.cli.toy_sentiment import finetune_arguments, save_tiny_model, sentiment_rows, write_tsv


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    """A tiny checkpoint with the toy sentiment vocabulary (32 positions)."""
    return save_tiny_model(tmp_path_factory.mktemp("model") / "tiny")


def _trained_run(root, tiny_model, pair):
    train = write_tsv(root / "train.tsv", sentiment_rows(12, pair=pair))
    test = write_tsv(root / "test.tsv", sentiment_rows(4, pair=pair))
    arguments = finetune_arguments(root / "run", tiny_model, train, test, "--epochs", "1")
    assert main([*arguments, "--learning-rate", "1e-3", "--verbose", "0"]) == 0
    return root / "run"


@pytest.fixture(scope="session")
def trained_run(tmp_path_factory, tiny_model):
    """A finished run of single texts: 12 training rows, 4 test rows, one epoch. Read only."""
    return _trained_run(tmp_path_factory.mktemp("trained"), tiny_model, pair=False)


@pytest.fixture(scope="session")
def trained_pair_run(tmp_path_factory, tiny_model):
    """The same run on text pairs. Read only."""
    return _trained_run(tmp_path_factory.mktemp("trained_pair"), tiny_model, pair=True)
