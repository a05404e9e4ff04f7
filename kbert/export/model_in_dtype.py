"""The model an export runs: the given one, or a copy with its weights that computes in bfloat16.

A bfloat16 export runs the encoder and the head's hidden layers under Keras's "mixed_bfloat16"
policy: the variables stay float32 and each layer casts them to bfloat16 as it reads them, so the
matmuls and attention run in bfloat16 while kbert's layer norms and the final logits layer keep
computing in float32 (as they do when training under that policy). The copy is rebuilt from the
model's config with the encoder's `dtype` changed, then given the model's weights: the model
passed in is never changed.
"""

from kbert.models import Encoder
from kbert.models.pretraining_utils import encoder_dtype_policy
from kbert.models.task_model import TaskModel

# The Keras dtype policy each export compute dtype rebuilds a model under.
POLICIES = {"float32": "float32", "bfloat16": "mixed_bfloat16"}


def model_in_dtype(model, compute_dtype):
    """`model` itself when its encoder computes in `compute_dtype`, else a copy that does.

    Args:
        model: a kbert `Encoder` or a task model on one (`SequenceClassifier`,
            `TokenClassifier`, `QuestionAnswerer`).
        compute_dtype: str, "float32" or "bfloat16" (a resolved `ExportSettings.dtype`).

    Returns:
        The model to export: `model`, or a copy of it with the same weights, rebuilt under the
        policy of `POLICIES[compute_dtype]`.

    Raises:
        ValueError: an unknown `compute_dtype`, or a model that would need a copy but is not a
            kbert `Encoder` or a task model holding one (a TF Hub encoder computes in its own
            dtype).

    Example:
    >>> classifier = SequenceClassifier(Encoder.from_preset("tiny"), num_classes=2)  # doctest: +SKIP
    >>> model_in_dtype(classifier, "bfloat16").encoder.embeddings.compute_dtype  # doctest: +SKIP
    'bfloat16'
    """
    if compute_dtype not in POLICIES:
        raise ValueError(
            f"compute_dtype must be one of {tuple(POLICIES)}; received {compute_dtype!r}"
        )
    encoder = model if isinstance(model, Encoder) else getattr(model, "encoder", None)
    if encoder is not None and encoder_dtype_policy(encoder).compute_dtype == compute_dtype:
        return model
    if not isinstance(encoder, Encoder) or not (model is encoder or isinstance(model, TaskModel)):
        raise ValueError(
            f"a {compute_dtype} export rebuilds the model in that dtype, which needs a kbert "
            "Encoder or a task model holding one as `.encoder`; received a "
            f"{type(model).__name__} (export it with dtype='float32', its own dtype)"
        )
    copy = Encoder.from_config({**encoder.get_config(), "dtype": POLICIES[compute_dtype]})
    if model is not encoder:
        copy = type(model).from_config({**model.get_config(), "encoder": copy})
    copy.set_weights(model.get_weights())  # same layers in the same order: same shapes
    return copy
