"""lab21_sequential_adaptation as a user runs it: its whole story on a tiny start and budget."""

import json
from pathlib import Path

import pytest

from kbert.metrics.majority_class import NEAR_MAJORITY
from tests.labs.lab_process import run_lab

ROOT = Path(__file__).resolve().parents[2]
LAB = "labs/lab21_sequential_adaptation.py"


def _run(arguments, data_root, timeout=1800):
    return run_lab(LAB, arguments, data_root, timeout)


@pytest.mark.slow
def test_lab21_runs_its_story_and_records_it(tmp_path, data_root, tiny_models):
    record = tmp_path / "lab21.json"
    result = _run(
        [
            "--model",
            str(tiny_models[1]),
            "--targets",
            "rte",
            "--rte-examples",
            "16,24",
            "--mrpc-examples",
            "32",
            "--eval-examples",
            "40",
            "--sequence-length",
            "32",
            "--epochs",
            "1",
            "--min-steps",
            "2",
            "--seeds",
            "2",
            "--learning-rates",
            "1e-3,3e-3",
            "--validation-examples",
            "16",
            "--run-dir",
            str(tmp_path),
            "--record",
            str(record),
        ],
        data_root,
    )
    # Two seeds (a paired difference needs a spread), RTE at two sizes (its gain by labels),
    # each start's first seed at two rates: 22 fits, each mostly tracing on 2 cores
    # (`tests/conftest.py::tiny_models`). IMDb after SST-2 runs the same code on other files
    # (their readers are checked on the real data elsewhere in the slow tier).
    assert result.returncode == 0, result.stderr[-3000:]
    stdout = result.stdout
    report = json.loads(stdout.strip().splitlines()[-1])
    assert json.loads(record.read_text())["results"] == report
    assert set(report["targets"]) == {"rte"}
    rte = report["targets"]["rte"]
    # The technique's cell: the encoder carried over, the intermediate head dropped, a new one.
    carry = rte["carry_over"]
    assert "carried over: the encoder" in stdout and "dropped:" in stdout and "new:" in stdout
    assert carry["carried_weights"] > 0 and carry["largest_change"] > 0
    # The intermediate head goes and a new one of the same shape comes (other variables).
    assert carry["dropped"] == carry["new"] == ["logits/kernel", "logits/bias"]
    assert rte["intermediate"] == "mrpc" and rte["intermediate_examples"] == 32
    assert rte["test_examples"] == 40 and set(rte["sizes"]) == {"16", "24"}
    # Each start's target rate: both tried at the first seed, the better on the 16 held-out
    # examples kept for both seeds.
    assert rte["validation_examples"] == 16
    for size, choices in rte["rate_choices"].items():
        for start, choice in choices.items():
            best = max(choice["tried"], key=lambda row: row["validation_accuracy"])
            assert [row["learning_rate"] for row in choice["tried"]] == [1e-3, 3e-3]
            rates = [
                run["learning_rate"]
                for run in rte["runs"]
                if str(run["size"]) == size and run["start"] == start
            ]
            assert rates == [best["learning_rate"]] * 2 == [choice["chosen"]] * 2
    # The claim "most help at fewest labels" as one paired difference: per seed, the related
    # task's gain over alone at 16 minus at 24.
    gain, sizes = rte["gain_fewest_minus_most"], rte["sizes"]
    per_seed = [
        (s16 - a16) - (s24 - a24)
        for s16, a16, s24, a24 in zip(
            sizes["16"]["sequential"]["runs"],
            sizes["16"]["alone"]["runs"],
            sizes["24"]["sequential"]["runs"],
            sizes["24"]["alone"]["runs"],
            strict=True,
        )
    ]
    assert (gain["fewest"], gain["most"], gain["n"]) == (16, 24, 2)
    assert gain["mean"] == pytest.approx(sum(per_seed) / 2)
    assert "rte     the related task's gain over alone at 16 labelled minus at 24" in stdout
    assert 0.5 <= rte["majority_accuracy"] <= 1.0
    assert set(rte["intermediate_train_accuracy"]) == {"sequential", "shuffled"}
    for run in rte["runs"]:
        assert isinstance(run["at_majority"], bool)
        # At or below the majority class (within a point) is always counted as there.
        if run["test_accuracy"] <= rte["majority_accuracy"] + NEAR_MAJORITY - 1e-4:
            assert run["at_majority"], run
    for size, rows in rte["sizes"].items():
        assert set(rows) == {"alone", "sequential", "shuffled"}
        for start, row in rows.items():
            assert len(row["runs"]) == 2 and row["sd"] is not None
            assert row["mean"] == pytest.approx(sum(row["runs"]) / 2, abs=1e-4)
            assert ("vs_alone" in row) == (start != "alone")
            # Each row counts the seeds whose run of this size and start landed there.
            flags = [
                run["at_majority"]
                for run in rte["runs"]
                if str(run["size"]) == size and run["start"] == start
            ]
            assert len(flags) == 2 and row["runs_at_majority"] == sum(flags)
        difference = rows["sequential"]["vs_alone"]
        runs, alone = rows["sequential"]["runs"], rows["alone"]["runs"]
        expected = sum(a - b for a, b in zip(runs, alone, strict=True)) / 2
        assert difference["n"] == 2 and difference["mean"] == pytest.approx(expected)
        assert rows["sequential"]["vs_shuffled"]["verdict"] in (
            "better",
            "worse",
            "no difference",
        )
    # 16 pairs in batches of 16 is one step an epoch: --min-steps 2 gives two epochs.
    assert {run["epochs"] for run in rte["runs"] if run["size"] == 16} == {2}
    assert len(rte["runs"]) == 2 * 3 * 2  # seeds × starts × sizes
    assert "majority class" in stdout and "vs its shuffled control" in stdout
    assert "majority  at majority  vs alone" in stdout
    alone = rte["sizes"]["16"]["alone"]
    assert f"{rte['majority_accuracy']:.4f}    {alone['runs_at_majority']} of 2 " in stdout
    from benchmarks.reports import lab21_sequential_adaptation

    page = lab21_sequential_adaptation.render(report)
    assert page.count("| rte | 16 |") == 3
    for start, row in rte["sizes"]["16"].items():
        label = lab21_sequential_adaptation.STARTS[start].replace("intermediate task", "mrpc")
        line = page.split(f"| rte | 16 | {label} |")[1].split("\n")[0]
        assert line.endswith(f"| {rte['majority_accuracy']:.3f} | {row['runs_at_majority']} of 2 |")
    assert "- rte at 16 labelled, mrpc first" in page
    assert "- rte: mrpc's gain over the target alone at 16 labelled minus its gain at 24" in page
    assert lab21_sequential_adaptation.headline(report).startswith("RTE at 16, MRPC first")


@pytest.mark.slow
@pytest.mark.parametrize(
    "arguments, expected",
    [
        (["--targets", "imdb,sst2"], "--targets must list imdb and/or rte"),
        (["--seeds", "0"], "--seeds must be >= 1"),
        (["--eval-examples", "-1"], "--eval-examples must be >= 0"),
        (["--imdb-examples", "0"], "--imdb-examples"),
        (["--learning-rate", "0"], "--learning-rate must be > 0"),
    ],
)
def test_lab21_refuses_bad_settings(data_root, arguments, expected):
    result = _run(arguments, data_root, timeout=300)
    assert result.returncode == 2 and expected in result.stderr, result.stderr[-2000:]
