"""Every task as text in, text out (T5; textbook §20.10): inputs, targets and scoring.

T5 fine-tunes one encoder-decoder on every task by writing each example as an input string with
a task prefix and a target string, and reads its predictions back as text: a classifier's label
is the word it generates, an extractive answer is the span it writes out.

- TREC-6: "trec question: How far is it from Denver to Aspen ?" → "numeric"
- SST-2: "sst2 sentence: it 's a charming … journey ." → "positive"
- SQuAD: "question: Where is Paris? context: Paris is in France." → "France"
"""

from kbert.metrics.squad_metrics import exact_match_score, f1_score, metric_max_over_ground_truths

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


__all__ = [
    "LABEL_WORDS",
    "classification_accuracy",
    "classification_pairs",
    "squad_pairs",
    "squad_scores",
]
