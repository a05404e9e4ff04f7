"""PERSONA-CHAT reading, splitting by persona, reply examples and TransferTransfo's inputs."""

import pytest

from kbert.data.personachat import (
    Dialog,
    dialog_inputs,
    read_personachat,
    reply_examples,
    split_dialogs,
)

FILE = """1 your persona: i like dogs.
2 your persona: i am a nurse.
3 hi there\thello , i like dogs .
4 me too\tgreat , what else ?
1 your persona: i love cars.
2 hey\thi , do you like cars ?
"""


def _write(tmp_path, text):
    path = tmp_path / "dialogs.txt"
    path.write_text(text, encoding="utf-8")
    return path


def test_dialogs_are_read_from_the_persona_holders_side(tmp_path):
    dialogs = read_personachat(_write(tmp_path, FILE))
    assert dialogs == [
        Dialog(
            ["i like dogs.", "i am a nurse."],
            ["hi there", "hello , i like dogs .", "me too", "great , what else ?"],
        ),
        Dialog(["i love cars."], ["hey", "hi , do you like cars ?"]),
    ]


@pytest.mark.parametrize(
    "text, message",
    [
        ("1 your persona: a.\n3 hi\tho\n", "must restart at 1 and rise by one; 3 follows 1"),
        ("1 your persona: a.\n2 hi\n", r"a turn needs '<partner>\\t<reply>'"),
        ("1 hi\tho\n2 your persona: a.\n", "a persona line after the dialog started"),
        ("your persona: a.\n", "expected '<n> <text>'"),
    ],
)
def test_malformed_files_name_the_line(tmp_path, text, message):
    with pytest.raises(ValueError, match=message):
        read_personachat(_write(tmp_path, text))


def _dialogs(count):
    return [
        Dialog(
            [f"persona {i % 7}."], [f"q{i}.{t}" if t % 2 == 0 else f"a{i}.{t}" for t in range(6)]
        )
        for i in range(count)
    ]


def test_held_out_dialogs_have_unseen_personas():
    dialogs = _dialogs(70)
    train, held_out = split_dialogs(dialogs, held_out=0.3, seed=1)
    assert len(train) + len(held_out) == 70 and held_out
    assert not {tuple(d.persona) for d in train} & {tuple(d.persona) for d in held_out}
    with pytest.raises(ValueError, match=r"held_out must be in \(0, 1\)"):
        split_dialogs(dialogs, held_out=1.0)


def test_reply_examples_take_distractors_from_other_dialogs():
    dialogs = _dialogs(5)
    examples = reply_examples(dialogs, max_history=2, num_distractors=3, seed=0)
    assert len(examples) == 5 * 3
    first = examples[1]  # dialog 0's second reply
    assert first.reply == "a0.3" and first.history == ["a0.1", "q0.2"]
    for example in examples:
        owner = example.reply.split(".")[0][1:]
        assert len(example.distractors) == 3
        assert all(d.startswith("a") and d.split(".")[0][1:] != owner for d in example.distractors)
    with pytest.raises(ValueError, match="at least two dialogs"):
        reply_examples(dialogs[:1])


def test_inputs_mark_speakers_and_score_only_the_reply():
    ids = {"<bos>": 0, "<eos>": 1, "<speaker1>": 2, "<speaker2>": 3}
    encode = lambda text: [100 + len(word) for word in text.split()]  # noqa: E731
    inputs = dialog_inputs(["p p"], ["a b", "c", "d e f"], "r", encode, ids)
    # persona, then history oldest first: partner (a b), bot (c), partner (d e f), bot reply.
    assert inputs["token_ids"] == [0, 101, 101, 2, 101, 101, 3, 101, 2, 101, 101, 101, 3, 101, 1]
    assert inputs["segment_ids"] == [0, 0, 0, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0, 0]
    scored = [i for i, label in enumerate(inputs["labels"]) if label != -100]
    assert scored == [13, 14] and inputs["classify_at"] == 14


@pytest.mark.slow
def test_the_convai2_validation_file(data_root):
    dialogs = read_personachat(data_root / "personachat" / "valid_self_original_no_cands.txt")
    assert len(dialogs) == 1000
    assert sum(len(d.utterances) for d in dialogs) == 15602  # as PERSONA-CHAT reports
    assert sum(len(d.persona) for d in dialogs) == 4483
