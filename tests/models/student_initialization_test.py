import numpy as np
import pytest

from kbert.models import Encoder, default_student_layers, student_encoder


def _inputs(batch=3, seq=6, seed=0):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(2, seq + 1, size=batch)
    mask = (np.arange(seq)[None, :] < lengths[:, None]).astype("int32")
    token_ids = rng.integers(5, 50, size=(batch, seq)).astype("int32") * mask
    segment_ids = (np.arange(seq)[None, :] >= 2).astype("int32") * mask
    return {"token_ids": token_ids, "segment_ids": segment_ids, "padding_mask": mask}


@pytest.mark.parametrize("norm_first", [False, True])
def test_full_depth_student_reproduces_the_teacher(norm_first):
    teacher = Encoder.from_preset("tiny", num_layers=3, norm_first=norm_first)
    student = student_encoder(teacher, 3, layers=[0, 1, 2])
    assert student is not teacher and student.config == teacher.config
    x = _inputs()
    expected, received = teacher(x), student(x)
    for key in ("sequence_output", "pooled_output"):
        np.testing.assert_allclose(received[key], expected[key], atol=1e-6)


def test_chosen_teacher_blocks_are_copied():
    teacher = Encoder.from_preset("tiny", num_layers=4)
    student = student_encoder(teacher, 2, layers=[1, 3])
    assert student.config.num_layers == 2
    for student_index, teacher_index in enumerate([1, 3]):
        for got, want in zip(
            student.blocks[student_index].get_weights(),
            teacher.blocks[teacher_index].get_weights(),
            strict=True,
        ):
            np.testing.assert_array_equal(got, want)
    for part in ("embeddings", "pooler"):
        for got, want in zip(
            getattr(student, part).get_weights(), getattr(teacher, part).get_weights(), strict=True
        ):
            np.testing.assert_array_equal(got, want)


def test_copies_are_independent_of_the_teacher():
    teacher = Encoder.from_preset("tiny", num_layers=4)
    student = student_encoder(teacher, 2)
    kernel = student.blocks[1].weights[0]
    before = teacher.blocks[2].weights[0].numpy().copy()
    kernel.assign(kernel.numpy() + 1.0)
    np.testing.assert_array_equal(teacher.blocks[2].weights[0].numpy(), before)


def test_default_layers_take_every_other_block():
    assert default_student_layers(6, 3) == [0, 2, 4]
    assert default_student_layers(12, 6) == [0, 2, 4, 6, 8, 10]
    assert default_student_layers(12, 4) == [0, 3, 6, 9]
    assert default_student_layers(5, 5) == [0, 1, 2, 3, 4]
    teacher = Encoder.from_preset("tiny", num_layers=4)
    student = student_encoder(teacher, 2)
    for got, want in zip(
        student.blocks[1].get_weights(), teacher.blocks[2].get_weights(), strict=True
    ):
        np.testing.assert_array_equal(got, want)


def test_dtype_policy_follows_the_teacher():
    teacher = Encoder.from_preset("tiny", dtype="mixed_bfloat16")
    student = student_encoder(teacher, 1)
    assert student.blocks[0].dtype_policy.name == "mixed_bfloat16"
    assert student.embeddings.compute_dtype == "bfloat16"


@pytest.mark.parametrize(
    "num_layers, layers, message",
    [
        (0, None, "num_layers must be an int in 1..4"),
        (5, None, "num_layers must be an int in 1..4"),
        (2, [0], "layers must hold one teacher block index per student block"),
        (2, [0, 4], "layers must be ints in 0..3"),
        (2, [-1, 2], "layers must be ints in 0..3"),
        (2, [2, 1], "layers must be strictly increasing"),
        (2, [1, 1], "layers must be strictly increasing"),
    ],
)
def test_bad_arguments_raise(num_layers, layers, message):
    teacher = Encoder.from_preset("tiny", num_layers=4)
    with pytest.raises(ValueError, match=message):
        student_encoder(teacher, num_layers, layers=layers)


def test_teacher_must_be_an_encoder():
    with pytest.raises(ValueError, match="teacher_encoder must be a kbert.models.Encoder"):
        student_encoder(object(), 1)
