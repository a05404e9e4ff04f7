"""A shallower student encoder initialised from a teacher's layers (DistilBERT's recipe)."""

from kbert.checks import check_int
from kbert.models.encoder import Encoder


def default_student_layers(teacher_layers, num_layers):
    """The teacher blocks a student copies by default: evenly spaced, starting at block 0.

    Block `i` of the student takes teacher block `floor(i · teacher_layers / num_layers)`, which
    is DistilBERT's every-other layer when the student has half the depth (6 → 3 takes
    `[0, 2, 4]`, 12 → 6 takes `[0, 2, 4, 6, 8, 10]`) and spreads the picks evenly for any other
    ratio (12 → 4 takes `[0, 3, 6, 9]`).

    Args:
        teacher_layers: int. The teacher's number of blocks.
        num_layers: int. The student's number of blocks, in `1 … teacher_layers`.

    Returns:
        list of `num_layers` strictly increasing int teacher block indices.

    Example:
    >>> default_student_layers(6, 3)
    [0, 2, 4]
    """
    return [index * teacher_layers // num_layers for index in range(num_layers)]


def student_encoder(teacher_encoder, num_layers, layers=None):
    """Builds a shallower encoder whose weights are copied from a teacher encoder.

    DistilBERT (Sanh et al. 2019) initialises its 6-layer student from every other layer of
    the 12-layer BERT teacher; a good initialisation matters as much as the distillation loss.
    The student has the teacher's configuration (width, heads, vocabulary, ...) except
    `num_layers`, the same dtype policy and `skip_padding`; its embeddings, pooler and final
    LayerNorm (pre-LN models) are copies of the teacher's, and its block `i` is a copy of
    teacher block `layers[i]`. The copies are independent: training the student leaves the
    teacher unchanged. (Hugging Face's `extract_distilbert.py` used teacher blocks
    `[0, 2, 4, 7, 9, 11]` for 12 → 6; pass them as `layers` to reproduce it exactly.)

    Args:
        teacher_encoder: `kbert.models.Encoder`. The (usually fine-tuned) teacher's encoder.
        num_layers: int. The student's number of blocks, in `1 … teacher's num_layers`.
        layers: sequence of int, default None. Teacher block index for each student block,
            strictly increasing, each in `0 … teacher's num_layers - 1`. None takes evenly
            spaced blocks (`default_student_layers`): every other one for half the depth.
            Ignored (beyond the checks) for an ALBERT teacher (`share_layers=True`), whose one
            shared block is copied.

    Returns:
        A new `kbert.models.Encoder` with `num_layers` blocks.

    Raises:
        ValueError: `teacher_encoder` is not a kbert `Encoder`, `num_layers` is outside
            `1 … teacher's num_layers`, or `layers` has the wrong length, an index out of
            range, or is not strictly increasing.

    Example:
    >>> teacher = Encoder.from_preset("tiny", num_layers=4)
    >>> student = student_encoder(teacher, 2)  # teacher blocks 0 and 2
    >>> student.config.num_layers
    2
    """
    if not isinstance(teacher_encoder, Encoder):
        raise ValueError(
            f"teacher_encoder must be a kbert.models.Encoder; received "
            f"{type(teacher_encoder).__name__}"
        )
    teacher_layers = teacher_encoder.config.num_layers
    num_layers = check_int(
        "num_layers",
        num_layers,
        minimum=1,
        maximum=teacher_layers,
        expected=f"an int in 1..{teacher_layers} (the teacher's num_layers)",
    )
    if layers is None:
        layers = default_student_layers(teacher_layers, num_layers)
    layers = list(layers)
    if len(layers) != num_layers:
        raise ValueError(
            f"layers must hold one teacher block index per student block "
            f"({num_layers}); received {len(layers)}: {layers}"
        )
    for index in layers:
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < teacher_layers:
            raise ValueError(
                f"layers must be ints in 0..{teacher_layers - 1} (teacher block "
                f"indices); received {layers}"
            )
    if any(later <= earlier for earlier, later in zip(layers, layers[1:], strict=False)):
        raise ValueError(
            f"layers must be strictly increasing (student blocks keep the "
            f"teacher's order); received {layers}"
        )

    student = Encoder(
        teacher_encoder.config.replace(num_layers=num_layers),
        skip_padding=teacher_encoder.skip_padding,
        # The argument the teacher was built with: its layers' policy (e.g. mixed_bfloat16).
        dtype=teacher_encoder.layer_dtype,
    )
    pairs = [
        (student.embeddings, teacher_encoder.embeddings),
        (student.pooler, teacher_encoder.pooler),
    ]
    if teacher_encoder.final_norm is not None:
        pairs.append((student.final_norm, teacher_encoder.final_norm))
    if teacher_encoder.config.share_layers:
        # One shared block on both sides: copy it once.
        pairs.append((student.blocks[0], teacher_encoder.blocks[0]))
    else:
        pairs += [
            (student.blocks[i], teacher_encoder.blocks[index]) for i, index in enumerate(layers)
        ]
    for student_layer, teacher_layer in pairs:
        student_layer.set_weights(teacher_layer.get_weights())
    return student
