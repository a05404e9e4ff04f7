"""`benchmarks/unfreezing_regime.py` without training: its grid, its run count, its arguments
and the comparison of each method's chosen rate with full fine-tuning's (the runs themselves:
`tests/labs/adaptation_labs_test.py`)."""

import pytest

from benchmarks import unfreezing_regime


def test_every_method_runs_in_ulmfit_s_regime_at_every_rate():
    variants = unfreezing_regime.regime_variants([1e-3, 3e-3])
    assert [label for label, _, _ in variants] == [
        "full lr=0.001",
        "full lr=0.003",
        "gradual_unfreezing lr=0.001",
        "gradual_unfreezing lr=0.003",
        "chain_thaw lr=0.001",
        "chain_thaw lr=0.003",
    ]
    assert all(options["regime"] == "ulmfit" for _, _, options in variants)
    assert unfreezing_regime.run_count([100, 300], [1e-3, 3e-3], seeds=3, starts=2) == 72


def _row(label, seed, validation, test):
    return {
        "label": label,
        "method": label.split(" lr=")[0],
        "start": "s",
        "seed": seed,
        "learning_rate": float(label.split("lr=")[1]),
        "trainable_params": 10,
        "trainable_pct": 100.0,
        "accuracy": test,
        "validation_accuracy": validation,
        "train_s": 1.0,
    }


def test_each_chosen_rate_is_paired_with_the_chosen_full_fine_tuning():
    from kbert.train.adaptation_comparison import summarize

    rows = [
        # Full: 1e-3 wins on validation, though 3e-3 is better on test (never looked at).
        *(_row("full lr=0.001", seed, 0.8, test) for seed, test in enumerate((0.70, 0.72))),
        *(_row("full lr=0.003", seed, 0.7, test) for seed, test in enumerate((0.90, 0.92))),
        # Gradual unfreezing: 3e-3 wins; +5 points over the chosen full on both seeds.
        *(_row("gradual_unfreezing lr=0.001", s, 0.6, t) for s, t in enumerate((0.5, 0.5))),
        *(_row("gradual_unfreezing lr=0.003", s, 0.9, t) for s, t in enumerate((0.75, 0.77))),
    ]
    compared = unfreezing_regime.compare_chosen(rows, summarize(rows))
    by_method = {row["method"]: row for row in compared}
    assert by_method["full"]["chosen"] == "full lr=0.001"
    assert by_method["full"]["difference"] is None
    gradual = by_method["gradual_unfreezing"]
    assert gradual["chosen"] == "gradual_unfreezing lr=0.003" and gradual["seeds"] == 2
    assert gradual["difference"]["mean"] == pytest.approx(0.05)
    assert gradual["difference"]["verdict"] == "better"


def test_bad_arguments_are_refused_naming_the_flag(capsys):
    for arguments, message in (
        (["--sizes", "0"], "--sizes: must be comma-separated integers >= 1"),
        (["--sizes", "100,x"], "--sizes: must be comma-separated integers >= 1"),
        (["--rates", "0"], "--rates: must be comma-separated numbers > 0"),
        (["--methods", "full"], "--methods does not apply here"),
        (["--train-examples", "300"], "give the labelled sizes as --sizes"),
        (["--seeds", "0"], "--seeds and --epochs must be positive integers; received 0, 3"),
    ):
        with pytest.raises(SystemExit) as exit_info:
            unfreezing_regime.parse_arguments(arguments)
        assert exit_info.value.code == 2 and message in capsys.readouterr().err
    _, args = unfreezing_regime.parse_arguments(["--sizes", "100,300", "--rates", "1e-3"])
    assert args.sizes == [100, 300] and args.rates == [1e-3]
