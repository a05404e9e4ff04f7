"""PERSONA-CHAT (ConvAI2) dialogs and TransferTransfo's inputs (NAACL 2019 tutorial, hands-on 5.C).

Zhang et al. (2018) paired crowd workers, each given a persona of 4–5 sentences, to chat; the
ConvAI2 release (ParlAI's `convai2_fix_723.tgz`) writes each dialog from one side: that side's
persona lines (`your persona: …`), then one line per turn, the partner's utterance and the
persona holder's reply separated by a tab.

TransferTransfo (Wolf et al. 2019) adapts a pretrained causal LM to this task by writing one
training sequence per reply, built as the tutorial's slides show:

    <bos> persona … <speaker1> u₁ <speaker2> u₂ … <speaker2> reply <eos>

with segment (speaker) ids marking whose words each token is (the persona and the replies are
the bot's, `<speaker2>`; the partner's utterances `<speaker1>`), a language-modelling loss on
the reply's tokens only, and a next-utterance classification head that reads the last token and
must pick the gold reply among distractors (replies drawn from other dialogs). `reply_examples`
draws the examples; `dialog_inputs` turns one into ids for any tokenizer.
"""

import dataclasses
import random
import re

from kbert.checks import check_int
from kbert.data.data_dir import locate

URL = "http://parl.ai/downloads/convai2/convai2_fix_723.tgz"
VALIDATION_FILE = "personachat/valid_self_original_no_cands.txt"
SPECIAL_TOKENS = ("<bos>", "<eos>", "<speaker1>", "<speaker2>", "<pad>")
_LINE = re.compile(r"(\d+) (.*)")


@dataclasses.dataclass
class Dialog:
    """One PERSONA-CHAT dialog seen from the persona holder's side.

    Attributes:
        persona: list of str. The persona holder's sentences.
        utterances: list of str. The dialog in order, the partner first: even indices are the
            partner's, odd ones the persona holder's replies.
    """

    persona: list
    utterances: list


def read_personachat(path=None, data_dir=None):
    """Reads a ConvAI2 `*_self_original_no_cands.txt` file (or one with candidates).

    Args:
        path: str or Path, default None: `<data_dir>/personachat/valid_self_original_no_cands.txt`,
            downloaded from ParlAI's ConvAI2 archive when online and not found locally.
        data_dir: str or Path, default None (`KBERT_DATA_DIR`, then ../shared/data).

    Returns:
        list of `Dialog`.

    Raises:
        ValueError: a line that is not `<n> <text>`, line numbers that do not restart at 1 per
            dialog and rise by one, a turn without its tab-separated reply, or a persona line
            after the dialog started (the message names the file and line).
    """
    if path is None:
        path = locate(
            VALIDATION_FILE,
            url=URL,
            data_dir_path=data_dir,
            extract_member="valid_self_original_no_cands.txt",
        )
    dialogs, previous = [], 0
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            line = line.rstrip("\n")
            if not line.strip():
                continue
            match = _LINE.fullmatch(line)
            if match is None:
                raise ValueError(f"{path}:{number}: expected '<n> <text>'; received {line!r}")
            index, text = int(match.group(1)), match.group(2)
            if index == 1:
                dialogs.append(Dialog([], []))
            elif index != previous + 1 or not dialogs:
                raise ValueError(
                    f"{path}:{number}: line numbers must restart at 1 and rise by one; "
                    f"{index} follows {previous}"
                )
            previous = index
            dialog = dialogs[-1]
            if text.startswith("your persona: "):
                if dialog.utterances:
                    raise ValueError(f"{path}:{number}: a persona line after the dialog started")
                dialog.persona.append(text[len("your persona: ") :])
                continue
            fields = text.split("\t")
            if len(fields) < 2 or not fields[0].strip() or not fields[1].strip():
                raise ValueError(
                    f"{path}:{number}: a turn needs '<partner>\\t<reply>'; received {text!r}"
                )
            dialog.utterances += [fields[0].strip(), fields[1].strip()]
    return dialogs


def split_dialogs(dialogs, held_out=0.1, seed=0):
    """`(train, held_out)`: dialogs split whole (no dialog's turns on both sides), seeded.

    Dialogs that share a persona are kept on the same side, so held-out personas are unseen.
    """
    if not 0 < held_out < 1:
        raise ValueError(f"held_out must be in (0, 1); received {held_out!r}")
    personas = sorted({tuple(dialog.persona) for dialog in dialogs})
    random.Random(seed).shuffle(personas)
    chosen = set(personas[: max(1, round(held_out * len(personas)))])
    train = [dialog for dialog in dialogs if tuple(dialog.persona) not in chosen]
    return train, [dialog for dialog in dialogs if tuple(dialog.persona) in chosen]


@dataclasses.dataclass
class ReplyExample:
    """One reply to predict: the persona, the history before it, the gold reply, distractors."""

    persona: list
    history: list
    reply: str
    distractors: list


def reply_examples(dialogs, max_history=2, num_distractors=1, seed=0):
    """One example per persona-holder reply, with distractors drawn from other dialogs.

    Args:
        dialogs: list of `Dialog`.
        max_history: int >= 0, default 2. Utterances before the reply kept as history
            (TransferTransfo: the last 2·2+1 = 5 in the HF code; 2 here is smaller and faster).
        num_distractors: int >= 1, default 1. Wrong replies per example (TransferTransfo trains
            with 1; ParlAI's Hits@1 evaluation uses 19).
        seed: int, default 0.

    Returns:
        list of `ReplyExample`.
    """
    max_history = check_int("max_history", max_history, minimum=0, expected="an integer >= 0")
    num_distractors = check_int(
        "num_distractors", num_distractors, minimum=1, expected="an integer >= 1"
    )
    replies = [
        (owner, utterance)
        for owner, dialog in enumerate(dialogs)
        for utterance in dialog.utterances[1::2]
    ]
    if len({owner for owner, _ in replies}) < 2:
        raise ValueError("distractors come from other dialogs: give at least two dialogs")
    rng = random.Random(seed)
    examples = []
    for owner, dialog in enumerate(dialogs):
        for position in range(1, len(dialog.utterances), 2):
            distractors = []
            while len(distractors) < num_distractors:
                other, utterance = replies[rng.randrange(len(replies))]
                if other != owner and utterance != dialog.utterances[position]:
                    distractors.append(utterance)
            start = max(0, position - max_history)
            examples.append(
                ReplyExample(
                    list(dialog.persona),
                    dialog.utterances[start:position],
                    dialog.utterances[position],
                    distractors,
                )
            )
    return examples


def dialog_inputs(persona, history, reply, encode, special_ids, with_eos=True):
    """TransferTransfo's sequence for one candidate reply: ids, segment ids, LM labels.

    Args:
        persona: list of str.
        history: list of str, oldest first; the last one is the partner's (`<speaker1>`),
            speakers alternating backwards from it.
        reply: str. The candidate reply (the bot's, `<speaker2>`).
        encode: callable `str → list of int` (a tokenizer without special tokens).
        special_ids: dict with the ids of "<bos>", "<eos>", "<speaker1>", "<speaker2>".
        with_eos: bool, default True.

    Returns:
        dict: "token_ids", "segment_ids" (0 for the bot and the persona — `<speaker2>`'s side —,
        1 for the partner), "labels" (the reply's tokens and `<eos>` where the LM is scored,
        -100 elsewhere) and "classify_at" (the index of the last token, read by the
        next-utterance head).

    Example:
    >>> ids = {"<bos>": 0, "<eos>": 1, "<speaker1>": 2, "<speaker2>": 3}
    >>> words = {"i": 10, "like": 11, "dogs": 12, "hi": 13, "hello": 14}
    >>> encode = lambda text: [words[w] for w in text.split()]
    >>> inputs = dialog_inputs(["i like dogs"], ["hi"], "hello", encode, ids)
    >>> inputs["token_ids"], inputs["segment_ids"]
    ([0, 10, 11, 12, 2, 13, 3, 14, 1], [0, 0, 0, 0, 1, 1, 0, 0, 0])
    >>> inputs["labels"], inputs["classify_at"]
    ([-100, -100, -100, -100, -100, -100, -100, 14, 1], 8)
    """
    bos, eos = special_ids["<bos>"], special_ids["<eos>"]
    speakers = {0: special_ids["<speaker2>"], 1: special_ids["<speaker1>"]}
    token_ids = [bos] + [token for sentence in persona for token in encode(sentence)]
    segment_ids = [0] * len(token_ids)
    # The last history utterance is the partner's (1); speakers alternate going back.
    for age, utterance in enumerate(history):
        speaker = 1 if (len(history) - 1 - age) % 2 == 0 else 0
        turn = [speakers[speaker]] + list(encode(utterance))
        token_ids += turn
        segment_ids += [speaker] * len(turn)
    answer = [speakers[0]] + list(encode(reply)) + ([eos] if with_eos else [])
    labels = [-100] * len(token_ids) + [-100] + answer[1:]
    token_ids += answer
    segment_ids += [0] * len(answer)
    return {
        "token_ids": token_ids,
        "segment_ids": segment_ids,
        "labels": labels,
        "classify_at": len(token_ids) - 1,
    }
