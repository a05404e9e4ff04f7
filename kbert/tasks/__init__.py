"""Inference per task family, in one place: what reads a trained model, predicts and scores.

- `kbert.tasks.classification`: `classifier_logits` (texts or pairs through a preprocessor,
  long inputs included) and `evaluate_classifier` (the full classification report).
- `kbert.tasks.ner`: featurizing words per NER method, `predict_entities` (character spans in
  raw texts) and `evaluate_ner` (CoNLL entity scores).
- `kbert.tasks.question_answering`: `predict_answers` and `evaluate_question_answerer` (SQuAD
  v1.1 EM/F1).

Training recipes are in `kbert.train`; the scores themselves (numpy) in `kbert.metrics`.
"""

from kbert.tasks.classification import classifier_logits, evaluate_classifier
from kbert.tasks.ner import NER_METHODS, evaluate_ner, predict_entities
from kbert.tasks.question_answering import evaluate_question_answerer, predict_answers

__all__ = [
    "NER_METHODS",
    "classifier_logits",
    "evaluate_classifier",
    "evaluate_ner",
    "evaluate_question_answerer",
    "predict_answers",
    "predict_entities",
]
