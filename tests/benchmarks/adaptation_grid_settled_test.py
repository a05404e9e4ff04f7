from types import SimpleNamespace

from benchmarks.adaptation_grid import settled


def test_a_child_waits_for_every_seed_before_training_at_a_choice():
    def outcome(*seeds):
        return {"rows": [{"label": f"full lr={i}", "seeds": n} for i, n in enumerate(seeds)]}

    parent = SimpleNamespace(only_seed=None, seeds=3)
    child = SimpleNamespace(only_seed=0, seeds=3)
    # The parent chooses over what it has: its children ran every seed first.
    assert settled(outcome(1, 1), parent)
    # A child has seen seeds 0 (and 1): a choice over them may not be the parent's.
    assert not settled(outcome(1, 1), child) and not settled(outcome(3, 2), child)
    # The last seed's child sees all three: the choice is final, the dependent study runs.
    assert settled(outcome(3, 3), child)
