"""BERT's objective combinations: one encoder size, the MLM head first, one fit step each."""

import numpy as np
import pytest

from kbert.data.combined_pretraining_inputs import (
    COMBINED_OBJECTIVES as DATA_OBJECTIVES,
)
from kbert.data.combined_pretraining_inputs import combined_pretraining_datasets
from kbert.models import MaskedLanguageModel, NextSentencePrediction, SpanBoundaryObjective
from kbert.models.combined_pretraining_model import (
    COMBINED_OBJECTIVES,
    build_combined_pretraining_model,
)
from kbert.models.pretraining_models import PretrainingModelSettings, pretrained_encoder
from kbert.text import WordPieceTokenizer
from kbert.train.pretraining_optimizer import compile_for_pretraining

SETTINGS = PretrainingModelSettings(num_layers=1, hidden_dim=16, num_heads=2, block_length=24)
VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "old", "man", "sea", "."]
TOKENIZER = WordPieceTokenizer(VOCABULARY)
DOCUMENTS = [["The old man. The sea. Old sea man. The man."], ["Sea. Old man. The sea."]] * 3
HEADS = {
    "masked": [],
    "masked+nsp": [(NextSentencePrediction, "nsp")],
    "masked+sop": [(NextSentencePrediction, "sop")],
    "span+sbo": [(SpanBoundaryObjective, "sbo")],
}


def test_the_models_and_the_pipelines_name_the_same_combinations():
    assert COMBINED_OBJECTIVES == DATA_OBJECTIVES == tuple(HEADS)


@pytest.mark.parametrize("objective", COMBINED_OBJECTIVES)
def test_each_combination_trains_the_same_encoder_on_its_own_batches(objective):
    model = build_combined_pretraining_model(objective, SETTINGS, len(VOCABULARY))
    mlm, *others = model.objectives
    assert isinstance(mlm, MaskedLanguageModel) and mlm.metric_prefix == "mlm"
    assert [(type(o), o.metric_prefix) for o in others] == HEADS[objective]
    config = pretrained_encoder(model).config
    assert (config.num_layers, config.hidden_dim, config.num_segments) == (1, 16, 2)
    assert not config.causal and not config.norm_first  # BERT's post-LN encoder
    train, _ = combined_pretraining_datasets(objective, (DOCUMENTS, None), TOKENIZER, 24, 2, seed=1)
    compile_for_pretraining(model, 1e-3, total_steps=4, warmup_steps=1, gradient_accumulation=1)
    before = model.encoder.get_weights()
    history = model.fit(train, steps_per_epoch=2, epochs=1, verbose=0).history
    prefixes = ["mlm"] + [prefix for _, prefix in HEADS[objective]]
    for prefix in prefixes:
        assert np.isfinite(history[f"{prefix}_loss"][-1])
    moved = max(
        float(np.max(np.abs(a - b)))
        for a, b in zip(before, model.encoder.get_weights(), strict=True)
    )
    assert moved > 0  # the encoder trained


def test_an_unknown_combination_is_refused_by_name():
    with pytest.raises(ValueError, match="objective must be one of .*received 'electra\\+nsp'"):
        build_combined_pretraining_model("electra+nsp", SETTINGS, len(VOCABULARY))
