import argparse
import json

import pytest

from kbert.train.adaptation_comparison import START_LEARNING_RATES
from kbert.train.chosen_on_validation import chosen_rates
from kbert.train.lab_run_arguments import (
    add_lab_run_arguments,
    add_learning_rates_argument,
    finish_lab,
    resolve_learning_rates,
)


def test_the_shared_flags_and_the_chosen_rate_with_its_source(capsys):
    parser = argparse.ArgumentParser()
    add_lab_run_arguments(parser, "runs/labxx", "sequential", seeds_help="runs per row")
    args = parser.parse_args([])
    chosen = chosen_rates("minilm_l6", START_LEARNING_RATES["minilm_l6"])
    assert args.learning_rate == chosen.value["sequential"]
    assert (args.seeds, args.seed, args.run_dir, args.dtype) == (3, 0, "runs/labxx", "auto")
    assert args.data_dir is None and args.verbose == 0 and args.record is None
    with pytest.raises(SystemExit):
        parser.parse_args(["--help"])
    # --help says which record the rate came from (or why the fallback is used).
    assert "adaptation_grid_minilm.json" in " ".join(capsys.readouterr().out.split())
    with pytest.raises(SystemExit):
        parser.parse_args(["--dtype", "float16"])
    assert "--dtype: invalid choice: 'float16'" in capsys.readouterr().err


def test_finish_lab_writes_the_run_folder_s_results_and_prints_them_last(tmp_path, capsys):
    args = argparse.Namespace(run_dir=str(tmp_path / "runs" / "labxx"), record=None)
    finish_lab(args, {"rows": [{"acc": 0.5}]})
    written = json.loads((tmp_path / "runs" / "labxx" / "results.json").read_text())
    assert written == {"rows": [{"acc": 0.5}]}
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1]) == written


def test_the_rates_a_lab_tries_default_around_its_rate_and_refuse_a_repeat(capsys):
    parser = argparse.ArgumentParser()
    parser.add_argument("--learning-rate", type=float, default=3e-4)
    add_learning_rates_argument(parser, "row")
    args = parser.parse_args([])
    resolve_learning_rates(parser, args)
    assert args.learning_rates == pytest.approx([1e-4, 3e-4, 9e-4])
    args = parser.parse_args(["--learning-rates", "1e-3"])
    resolve_learning_rates(parser, args)
    assert args.learning_rates == [1e-3]  # one rate: no choice to make
    with pytest.raises(SystemExit):
        resolve_learning_rates(parser, parser.parse_args(["--learning-rates", "1e-3,1e-3"]))
    assert "--learning-rates must not repeat a rate" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parser.parse_args(["--learning-rates", "0,1e-3"])
    assert "must be comma-separated numbers > 0" in capsys.readouterr().err
