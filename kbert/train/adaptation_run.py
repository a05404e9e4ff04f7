"""One adaptation method's run: the settings every recipe reads, and its fine-tune and score steps.

A recipe of `kbert.train.adaptation_recipes` is a function `recipe(run, **its options)`; the
`AdaptationRun` it receives holds the start, the data and the training settings, fine-tunes
with `fine_tune_classifier` and builds the result row. `ensemble_result` is the row of several
runs' models averaged.
"""

import numpy as np

from kbert.metrics.majority_class import at_majority
from kbert.models.sequence_classifier import SequenceClassifier
from kbert.tasks.classification import evaluate_classifier
from kbert.train.classifier_fine_tuning import fine_tune_classifier
from kbert.train.training_settings import TrainingSettings


def parameter_counts(model):
    """`(trainable, total)` parameter counts of `model` (every variable, by its trainable flag)."""
    trainable = sum(int(np.prod(v.shape)) for v in model.trainable_weights)
    total = sum(int(np.prod(v.shape)) for v in model.weights)
    return trainable, total


class AdaptationRun:
    """One method's run: the settings every recipe reads, and the fine-tune + score steps.

    A recipe is a function `recipe(run, **its options)` returning `(result, model)`; it loads
    a fresh copy of `run.start`, applies its method and calls `run.fit` and `run.result`.
    `adapt_classifier` makes the run (and seeds Keras) before calling a recipe.

    Args:
        start: `StartingPoint`.
        data: dict of `kbert.data.Examples`: "train", "test", optionally "validation".
        seed: int. Passed to the training data's shuffling.
        epochs: int.
        batch_size: int.
        learning_rate: float. The method's peak rate.
        verbose: int. Keras's `fit` verbosity.
    """

    def __init__(self, start, data, seed=0, epochs=3, batch_size=32, learning_rate=1e-4, verbose=0):
        self.start, self.data, self.seed = start, data, seed
        self.epochs, self.batch_size = epochs, batch_size
        self.learning_rate, self.verbose = learning_rate, verbose
        self.num_classes = len(data["train"].label_names)

    def classifier(self, encoder, num_classes=None):
        """A `SequenceClassifier` on `encoder` reading it the start's way (`pooling`)."""
        return SequenceClassifier(
            encoder, num_classes or self.num_classes, pooling=self.start.pooling
        )

    def fit(
        self,
        classifier,
        preprocessor,
        train=None,
        epochs=None,
        learning_rate=None,
        callbacks=(),
        optimizer=None,
    ):
        """`fine_tune_classifier` with the run's settings (each overridable); returns seconds."""
        settings = TrainingSettings(
            epochs=epochs or self.epochs,
            batch_size=self.batch_size,
            learning_rate=learning_rate or self.learning_rate,
            seed=self.seed,
            callbacks=callbacks,
            verbose=self.verbose,
        )
        _, seconds = fine_tune_classifier(
            classifier,
            preprocessor,
            train or self.data["train"],
            settings=settings,
            optimizer=optimizer,
        )
        return seconds

    def accuracy(self, model, preprocessor, split="test"):
        return evaluate_classifier(model, preprocessor, self.data[split])["accuracy"]

    def result(self, model, preprocessor, seconds, counts=None, classifier=None, **extra):
        """The row: sizes from `model`, accuracies from `classifier` (default `model`).

        Test accuracy always, and whether the run landed at the majority class
        (`kbert.metrics.majority_class.at_majority`: its test predictions all one class, or
        within a point of the majority's accuracy); validation accuracy too when `data` has a
        "validation" split (the one to choose settings on).
        """
        trainable, total = counts or parameter_counts(model)
        classifier = model if classifier is None else classifier
        test = evaluate_classifier(classifier, preprocessor, self.data["test"])
        scores = {
            "accuracy": float(test["accuracy"]),
            "at_majority": at_majority(test["predictions"], self.data["test"].labels),
        }
        if "validation" in self.data:
            scores["validation_accuracy"] = float(
                self.accuracy(classifier, preprocessor, "validation")
            )
        return {
            "trainable_params": trainable,
            "total_params": total,
            "trainable_pct": 100.0 * trainable / total,
            **scores,
            "train_s": seconds,
            **extra,
        }


def ensemble_result(models, preprocessor, data, train_seconds=0.0, method="mean_probabilities"):
    """Test accuracy of averaging fine-tuned classifiers' predictions (`ClassifierEnsemble`).

    `trainable_params` is the members' total size and `trainable_pct` that size as a share of
    one member's (300% for three), the cost an ensemble adds at inference.
    """
    from kbert.models.classifier_ensemble import ClassifierEnsemble

    # Every member was fine-tuned in full: the ensemble's size as a share of one member's.
    trainable = sum(parameter_counts(model)[1] for model in models)
    total = parameter_counts(models[0])[1]
    ensemble = ClassifierEnsemble(list(models), method=method)
    test = evaluate_classifier(ensemble, preprocessor, data["test"])
    scores = {
        "accuracy": float(test["accuracy"]),
        "at_majority": at_majority(test["predictions"], data["test"].labels),
    }
    if "validation" in data:
        scores["validation_accuracy"] = float(
            evaluate_classifier(ensemble, preprocessor, data["validation"])["accuracy"]
        )
    return {
        "method": "ensemble",
        "members": len(models),
        "trainable_params": trainable,
        "total_params": total,
        "trainable_pct": 100.0 * trainable / total,
        **scores,
        "train_s": float(train_seconds),
    }
