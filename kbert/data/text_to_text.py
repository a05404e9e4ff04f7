"""Every task as text in, text out (T5; textbook §20.10): inputs, targets and scoring.

T5 fine-tunes one encoder-decoder on every task by writing each example as an input string with
a task prefix and a target string, and reads its predictions back as text: a classifier's label
is the word it generates, an extractive answer is the span it writes out.

- TREC-6: "trec question: How far is it from Denver to Aspen ?" → "numeric"
- SST-2: "sst2 sentence: it 's a charming … journey ." → "positive"
- SQuAD: "question: Where is Paris? context: Paris is in France." → "France"
"""

import numpy as np
import tensorflow as tf

from kbert.checks import check_int
from kbert.metrics.squad_metrics import exact_match_score, f1_score, metric_max_over_ground_truths
from kbert.text.text_to_text_packing import pack_sources, pack_targets, texts_from_generated

# Label words: plain English words for the codes, as T5 would generate them.
LABEL_WORDS = {
    "trec": {
        "ABBR": "abbreviation",
        "DESC": "description",
        "ENTY": "entity",
        "HUM": "human",
        "LOC": "location",
        "NUM": "numeric",
    },
    "sst2": {"negative": "negative", "positive": "positive"},
}
PREFIXES = {"trec": "trec question: ", "sst2": "sst2 sentence: "}


def classification_pairs(task, examples):
    """`(inputs, targets)` lists of str for a `kbert.data.Examples` of TREC-6 or SST-2.

    Example:
    >>> import numpy as np
    >>> from kbert.data import Examples, LabelVocabulary
    >>> examples = Examples(["Who was Galileo ?"], None, np.array([3], "int32"),
    ...                     LabelVocabulary(["ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM"]), "q")
    >>> classification_pairs("trec", examples)
    (['trec question: Who was Galileo ?'], ['human'])
    """
    if task not in LABEL_WORDS:
        raise ValueError(f"task must be one of {sorted(LABEL_WORDS)}; received {task!r}")
    words = LABEL_WORDS[task]
    names = examples.label_names.names
    missing = sorted(set(names) - set(words))
    if missing:
        raise ValueError(f"labels {missing} of {task} have no label word; expected {sorted(words)}")
    inputs = [PREFIXES[task] + text for text in examples.texts]
    targets = [words[names[label]] for label in examples.labels]
    return inputs, targets


def classification_accuracy(task, generated, examples):
    """Accuracy of generated label words (normalized; a word that is no label is wrong).

    Returns:
        dict: "accuracy" and "invalid" (the share of outputs that are no label word).
    """
    words = LABEL_WORDS[task]
    names = examples.label_names.names
    valid = set(words.values())
    if len(generated) != len(examples.labels):
        raise ValueError(
            f"generated has {len(generated)} texts for {len(examples.labels)} examples"
        )
    outputs = [" ".join(text.lower().split()) for text in generated]
    correct = sum(
        output == words[names[label]]
        for output, label in zip(outputs, examples.labels, strict=True)
    )
    invalid = sum(output not in valid for output in outputs)
    return {"accuracy": correct / len(outputs), "invalid": invalid / len(outputs)}


def squad_pairs(examples):
    """`(inputs, targets)` for SQuAD examples: the first gold answer is the target."""
    inputs = [f"question: {e.question} context: {e.context}" for e in examples]
    targets = [e.answers[0][0] if e.answers else "" for e in examples]
    return inputs, targets


def squad_scores(generated, examples):
    """SQuAD's exact match and F1 (in %) of generated answers against every gold answer."""
    if len(generated) != len(examples):
        raise ValueError(f"generated has {len(generated)} texts for {len(examples)} examples")
    exact = f1 = 0.0
    for text, example in zip(generated, examples, strict=True):
        truths = [answer for answer, _ in example.answers]
        exact += metric_max_over_ground_truths(exact_match_score, text, truths)
        f1 += metric_max_over_ground_truths(f1_score, text, truths)
    return {"exact_match": 100 * exact / len(examples), "f1": 100 * f1 / len(examples)}


def text_to_text_dataset(
    inputs,
    targets,
    tokenizer,
    batch_size,
    source_length=128,
    target_length=16,
    end_token="[SEP]",
    decoder_start_id=0,
    shuffle=True,
    seed=None,
):
    """Training batches `(x, y)` for `kbert.models.EncoderDecoder.fit` from text pairs.

    Each batch is packed by `kbert.text.text_to_text_packing` (padded to its longest source
    and target): `x` holds the four encoder-decoder inputs, `y` the target ids (-100 on
    padding).

    Args:
        inputs, targets: lists of str of one length (see `classification_pairs`, `squad_pairs`).
        tokenizer: `kbert.text.WordPieceTokenizer` (id 0 is padding).
        batch_size: int >= 1.
        source_length: int, default 128. Most source tokens, the end token included.
        target_length: int, default 16. Most target tokens, the end token included.
        end_token: str, default "[SEP]". Ends sources and targets.
        decoder_start_id: int, default 0.
        shuffle: bool, default True. Reshuffled every epoch.
        seed: int or None.

    Returns:
        A `tf.data.Dataset`.
    """
    if len(inputs) != len(targets) or not len(inputs):
        raise ValueError(
            f"inputs and targets must be non-empty lists of one length; received {len(inputs)} "
            f"inputs and {len(targets)} targets"
        )
    batch_size = check_int("batch_size", batch_size, minimum=1, expected="an integer >= 1")
    end_id = tokenizer.token_to_id(end_token)
    dataset = tf.data.Dataset.from_tensor_slices((list(inputs), list(targets)))
    if shuffle:
        dataset = dataset.shuffle(len(inputs), seed=seed, reshuffle_each_iteration=True)

    def pack(sources, answers):
        x = pack_sources(tokenizer, sources, source_length, end_id)
        decoder_inputs, labels = pack_targets(
            tokenizer, answers, target_length, end_id, decoder_start_id
        )
        return {**x, **decoder_inputs}, labels

    return dataset.batch(batch_size).map(pack).prefetch(tf.data.AUTOTUNE)


def generate_texts(
    model,
    tokenizer,
    texts,
    max_new_tokens,
    source_length=128,
    end_token="[SEP]",
    batch_size=64,
    strategy="greedy",
    num_beams=4,
    length_penalty=1.0,
):
    """Text out for text in: packs `texts`, decodes with `model.generate`, detokenizes.

    Args:
        model: `kbert.models.EncoderDecoder`.
        tokenizer: `kbert.text.WordPieceTokenizer`.
        texts: list of str.
        max_new_tokens: int >= 1.
        source_length: int, default 128. As in training.
        end_token: str, default "[SEP]". Ends sources and generated texts.
        batch_size: int, default 64. Texts decoded at once.
        strategy: "greedy" or "beam", default "greedy".
        num_beams, length_penalty: beam search settings.

    Returns:
        list of str, one per text (lowercased by the tokenizer's normalization).
    """
    if strategy not in ("greedy", "beam"):
        raise ValueError(f"strategy must be greedy or beam; received {strategy!r}")
    end_id = tokenizer.token_to_id(end_token)
    outputs = []
    for start in range(0, len(texts), batch_size):
        sources = pack_sources(
            tokenizer, list(texts[start : start + batch_size]), source_length, end_id
        )
        generated = model.generate(
            np.asarray(sources["encoder_token_ids"]),
            max_new_tokens,
            strategy=strategy,
            end_id=end_id,
            num_beams=num_beams,
            length_penalty=length_penalty,
        )
        decoded = texts_from_generated(tokenizer, generated, end_id).numpy()
        outputs.extend(text.decode("utf-8") for text in decoded)
    return outputs


__all__ = [
    "generate_texts",
    "text_to_text_dataset",
    "LABEL_WORDS",
    "classification_accuracy",
    "classification_pairs",
    "squad_pairs",
    "squad_scores",
]
