"""Scoring a classifier on `Examples`: predictions, then the full classification report."""

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
    from kbert.data.classification_dataset import classification_dataset

    logits = classifier.predict(classification_dataset(
        preprocessor, examples.texts, examples.text_pairs, batch_size=batch_size), verbose=0)
    predictions = np.argmax(logits, axis=-1)
    names = [str(name) for name in examples.label_names.names]
    report = classification_report(examples.labels, predictions, names)
    if positive_label is not None:
        report["f1"] = binary_f1(examples.labels, predictions,
                                 positive=names.index(str(positive_label)))
    report["source"] = examples.source
    report["predictions"] = predictions.tolist()
    return report
