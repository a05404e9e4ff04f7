"""Classifier inference: logits for texts or pairs (long inputs included), and the full report on `Examples`."""

import numpy as np

from kbert.metrics.classification_metrics import binary_f1, classification_report


def evaluate_classifier(classifier, preprocessor, examples, positive_label=None, batch_size=64):
    """Predicts `examples` in order and returns `classification_report` plus extras.

    Args:
        classifier: a model taking the encoder's input dict and returning logits.
        preprocessor: `kbert.text.BertPreprocessor`.
        examples: `kbert.data.Examples`.
        positive_label: str, default None. When given, also report `f1` of that class (GLUE's
            MRPC metric).
        batch_size: int, default 64.

    Returns:
        dict: the report (accuracy, macro_f1, per_class, confusion_matrix, …), `f1` when
        `positive_label` is given, `source`, and `predictions` (list of class ids).
    """
    logits = classifier_logits(
        classifier, preprocessor, examples.texts, examples.text_pairs, batch_size
    )["logits"]
    predictions = np.argmax(logits, axis=-1)
    names = [str(name) for name in examples.label_names.names]
    report = classification_report(examples.labels, predictions, names)
    if positive_label is not None:
        report["f1"] = binary_f1(
            examples.labels, predictions, positive=names.index(str(positive_label))
        )
    report["source"] = examples.source
    report["predictions"] = predictions.tolist()
    return report


def classifier_logits(classifier, preprocessor, texts, text_pairs=None, batch_size=64):
    """A classifier's logits for texts, one row per text, and how much of each text it read.

    With a `LongTextPreprocessor` the classifier scores every row (window) and the rows of a
    text are combined by its strategy (mean or max of the logits); with a `BertPreprocessor`
    there is one row per text, cut to `sequence_length` tokens.

    Args:
        classifier: a model taking the encoder's input dict and returning logits.
        preprocessor: `kbert.text.BertPreprocessor` or `kbert.text.LongTextPreprocessor`.
        texts: list of str.
        text_pairs: list of str or None, default None.
        batch_size: int, default 64. Rows per `predict` batch.

    Returns:
        dict: `logits` float32 `(texts, classes)`, `tokens` and `tokens_kept` int `(texts,)`
        (lengths with [CLS] and [SEP] before and after truncation) and `rows` (the rows
        scored per text: windows, or 1).
    """
    import tensorflow as tf

    from kbert.data.classification_dataset import classification_dataset, long_text_dataset

    if hasattr(preprocessor, "aggregation"):
        if text_pairs is not None:
            raise ValueError("long-input strategies are for single texts; received text pairs")
        dataset, packed = long_text_dataset(preprocessor, list(texts), batch_size=batch_size)
        rows = np.asarray(classifier.predict(dataset, verbose=0), np.float32)
        logits = preprocessor.aggregate(
            tf.constant(rows),
            {
                "text_index": tf.constant(packed["text_index"]),
                "tokens": tf.constant(packed["tokens"]),
            },
        ).numpy()
        counts = np.bincount(packed["text_index"], minlength=len(texts))
        return {
            "logits": logits,
            "tokens": packed["tokens"],
            "tokens_kept": packed["tokens_kept"],
            "rows": counts,
        }
    logits = classifier.predict(
        classification_dataset(preprocessor, texts, text_pairs, batch_size=batch_size), verbose=0
    )
    tokenizer = preprocessor.tokenizer
    tokens = tokenizer(tf.constant(list(texts))).row_lengths().numpy() + 2
    if text_pairs is not None:
        tokens = tokens + tokenizer(tf.constant(list(text_pairs))).row_lengths().numpy() + 1
    tokens = np.asarray(tokens, np.int64)
    return {
        "logits": np.asarray(logits, np.float32),
        "tokens": tokens,
        "tokens_kept": np.minimum(tokens, preprocessor.sequence_length),
        "rows": np.ones(len(tokens), np.int64),
    }
