"""The pieces of `kbert.train.unfreezing_recipes` that need no training (the recipes' runs are
in `adaptation_recipes_test.py`)."""

import pytest

from kbert.models import Encoder, SequenceClassifier
from kbert.train.freezing import layer_groups
from kbert.train.unfreezing import ChainThaw, GradualUnfreezing
from kbert.train.unfreezing_recipes import (
    check_regime,
    depth_groups,
    discriminative_optimizer,
    schedule_groups,
    ulmfit_epochs,
)


def _classifier(pooling="cls"):
    return SequenceClassifier(Encoder.from_preset("tiny"), num_classes=3, pooling=pooling)


def test_regimes_are_checked_by_name():
    assert check_regime("tutorial") == "tutorial" and check_regime("ulmfit") == "ulmfit"
    for bad in ("ULMFiT", "", None):
        with pytest.raises(ValueError, match=r"regime must be one of .*; received "):
            check_regime(bad)


def test_ulmfit_runs_one_epoch_per_group_and_one_more_unless_asked_for_more():
    assert ulmfit_epochs(8, 3) == 9
    assert ulmfit_epochs(8, 9) == 9
    assert ulmfit_epochs(8, 12) == 12
    # Chain-thaw's stages (one per group, then all) fit in those epochs; gradual unfreezing's too.
    classifier = _classifier()
    groups = schedule_groups(classifier, ChainThaw, "cls")
    epochs = ulmfit_epochs(len(groups), 1)
    ChainThaw(groups, epochs=epochs)
    GradualUnfreezing(schedule_groups(classifier, GradualUnfreezing, "cls"), epochs=epochs)
    with pytest.raises(ValueError, match="needs epochs >= "):
        ChainThaw(groups, epochs=epochs - 1)


def test_schedules_leave_out_a_pooler_the_head_does_not_read():
    classifier = _classifier()
    names = list(layer_groups(classifier))
    assert "pooler" in names
    gradual = schedule_groups(classifier, GradualUnfreezing, "cls")
    assert gradual[0] == "head" and gradual[-1] == "embeddings" and "pooler" not in gradual
    chain = schedule_groups(classifier, ChainThaw, "cls")
    assert chain[0] == "head" and chain[1] == "embeddings"
    assert "pooler" in schedule_groups(_classifier("pooler"), ChainThaw, "pooler")


def test_the_discriminative_optimizer_divides_the_rate_per_depth():
    classifier = _classifier()
    depths = depth_groups(classifier)
    assert depths["head"] == depths["pooler"] == "top" and depths["block_1"] == "block_1"
    optimizer = discriminative_optimizer(classifier, 1e-3, total_steps=100, factor=2.0)
    rates = {name: float(inner.learning_rate) for name, inner in optimizer.group_optimizers.items()}
    assert rates["head"] / rates["block_1"] == pytest.approx(2.0)
    assert rates["head"] / rates["embeddings"] == pytest.approx(2.0**3)
