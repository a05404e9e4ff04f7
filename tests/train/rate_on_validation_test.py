import pytest

from kbert.train.rate_on_validation import rate_then_seeds


def _train(calls, validation=None):
    """A fake run: its validation score by rate (best at 3e-4), its test score by seed."""
    validation = validation or {1e-4: 0.7, 3e-4: 0.8, 1e-3: 0.75}

    def train(rate, seed):
        calls.append((rate, seed))
        # Test is best at 1e-3: a choice made on test would differ.
        test = {1e-4: 0.6, 3e-4: 0.7, 1e-3: 0.9}[rate] + seed / 100
        return {"val_accuracy": validation[rate], "test_accuracy": test, "seed": seed}

    return train


def test_the_first_seed_tries_every_rate_and_validation_chooses_for_the_others():
    calls = []
    runs, choice = rate_then_seeds([1e-4, 3e-4, 1e-3], [5, 6, 7], _train(calls), "val_accuracy")
    # Rates + seeds − 1 runs: the chosen rate's first-seed run is kept, not run again.
    assert calls == [(1e-4, 5), (3e-4, 5), (1e-3, 5), (3e-4, 6), (3e-4, 7)]
    assert choice["chosen"] == 3e-4 and choice["chosen_on"] == "val_accuracy"
    assert [run["seed"] for run in runs] == [5, 6, 7]
    assert [run["test_accuracy"] for run in runs] == pytest.approx([0.75, 0.76, 0.77])
    assert choice["tried"][2] == {
        "learning_rate": 1e-3,
        "val_accuracy": 0.75,
        "test_accuracy": pytest.approx(0.95),
    }


def test_a_tie_keeps_the_first_rate_listed_and_one_rate_chooses_nothing():
    calls = []
    tie = {1e-4: 0.8, 3e-4: 0.8, 1e-3: 0.8}
    _, choice = rate_then_seeds([1e-3, 1e-4], [0], _train(calls, tie), "val_accuracy")
    assert choice["chosen"] == 1e-3
    calls.clear()
    runs, choice = rate_then_seeds([3e-4], [0, 1], _train(calls), "val_accuracy")
    assert calls == [(3e-4, 0), (3e-4, 1)] and choice["tried"] == [] and len(runs) == 2


def test_bad_requests_are_refused_by_name():
    with pytest.raises(ValueError, match="rates and seeds must each hold one at least"):
        rate_then_seeds([], [0], _train([]), "val_accuracy")
    with pytest.raises(ValueError, match=r"the runs at \[0.0001, 0.0003\] hold no 'val_f1'"):
        rate_then_seeds([1e-4, 3e-4], [0], _train([]), "val_f1")
