"""BERT's objective combinations as one model each, on encoders of one size.

MLM alone (RoBERTa's choice), MLM + NSP (BERT), MLM + SOP (ALBERT) and span masking with
MLM + SBO (SpanBERT) differ only in their heads: the encoder is `pretraining_encoder("masked",
...)` for all four (bidirectional, two segments, post-LN by default), so what fine-tuning
starts from has the same shape and size whichever objective trained it.
"""

from kbert.models.masked_language_model import MaskedLanguageModel
from kbert.models.next_sentence_prediction import NextSentencePrediction
from kbert.models.pretraining_model import PretrainingModel
from kbert.models.pretraining_models import pretraining_encoder
from kbert.models.span_boundary_objective import SpanBoundaryObjective

COMBINED_OBJECTIVES = ("masked", "masked+nsp", "masked+sop", "span+sbo")


def build_combined_pretraining_model(objective, settings, vocabulary_size):
    """A `PretrainingModel` whose first objective is the MLM head, then NSP, SOP or SBO.

    Args:
        objective: str. One of `COMBINED_OBJECTIVES`.
        settings: `kbert.models.pretraining_models.PretrainingModelSettings`.
        vocabulary_size: int.

    Returns:
        `PretrainingModel` with `objectives[0]` a `MaskedLanguageModel` (metrics `mlm_*`) and,
        but for "masked", a second head: `NextSentencePrediction` logged as `nsp_*` or `sop_*`,
        or `SpanBoundaryObjective` (`sbo_*`). The losses are summed with weight 1 each.

    Example:
    >>> from kbert.models.pretraining_models import PretrainingModelSettings
    >>> settings = PretrainingModelSettings(num_layers=1, hidden_dim=16, num_heads=2,
    ...                                     block_length=8)
    >>> model = build_combined_pretraining_model("masked+sop", settings, 50)
    >>> [objective.metric_prefix for objective in model.objectives]
    ['mlm', 'sop']
    """
    if objective not in COMBINED_OBJECTIVES:
        raise ValueError(f"objective must be one of {COMBINED_OBJECTIVES}; received {objective!r}")
    encoder = pretraining_encoder("masked", settings, vocabulary_size)
    objectives = [MaskedLanguageModel(encoder)]
    if objective in ("masked+nsp", "masked+sop"):
        task = objective.split("+")[1]
        objectives.append(NextSentencePrediction(encoder, metric_prefix=task))
    elif objective == "span+sbo":
        objectives.append(SpanBoundaryObjective(encoder))
    return PretrainingModel(encoder, objectives)


__all__ = ["COMBINED_OBJECTIVES", "build_combined_pretraining_model"]
