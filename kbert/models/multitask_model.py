"""Multi-task fine-tuning: several heads on one encoder pass, an optional auxiliary LM loss."""

import keras
import numpy as np
from keras import ops

from kbert.models import pretraining_utils
from kbert.models.pretraining_objective import PretrainingObjective
from kbert.models.pretraining_utils import IGNORE_INDEX

LANGUAGE_MODEL = "language_model"
LANGUAGE_MODEL_INPUTS = "language_model_inputs"


def _check_weight(name, value):
    if isinstance(value, (bool, str)):
        raise ValueError(f"the loss weight of {name!r} must be a number >= 0; received {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(
            f"the loss weight of {name!r} must be a number >= 0; received {value!r}"
        ) from None
    if not 0.0 <= number < float("inf"):
        raise ValueError(
            f"the loss weight of {name!r} must be a finite number >= 0; received {value!r}"
        )
    return number


@keras.saving.register_keras_serializable(package="kbert")
class MultitaskModel(keras.Model):
    """Heads for several tasks on one shared encoder, trained on a weighted sum of losses.

    The NAACL 2019 transfer-learning tutorial's §4.3 (multi-task fine-tuning; Liu et al.
    2019's MT-DNN) and its hands-on #6 (a classifier fine-tuned with its language-modelling
    loss kept as an auxiliary loss: weights 1.0 and 0.5). The loss Keras minimizes (and logs
    as `loss`) is `Σ_t w_t · loss_t + w_lm · lm_loss`, plus regularization losses.

    Each task's loss is the mean softmax cross-entropy of its logits against its integer
    labels over the scored labels (those not equal to `IGNORE_INDEX`, -100, the token
    classifier's convention), so a batch may carry labels for some tasks only: a task missing
    from `y`, or with all labels `IGNORE_INDEX`, adds exactly 0 (its head gets a zero
    gradient) and does not update its metrics. See `kbert.data.multitask_batches` for the
    batch format and per-step task sampling (`multitask_dataset`).

    Every loss weight is a non-trainable float32 variable, so a callback
    (`kbert.train.LossWeightAnnealing`) can change it while `fit` runs without retracing.

    Auxiliary language model: a `CausalLanguageModel` on the same encoder scores the same
    forward pass the heads read. Any other objective (a `MaskedLanguageModel`) reads
    `x["language_model_inputs"]` (masked encoder inputs plus `mask_positions`, `mask_ids`,
    `mask_weights`; `kbert.data.with_masked_language_model_inputs` adds it) through a second
    encoder pass, so the heads never see masked tokens. A causal LM uses
    `x["language_model_inputs"]` too when it is given (e.g. LM text unlike the task's).

    Metrics: `{task}_loss` (mean over the batches that carry the task), `{task}_accuracy`
    (over scored labels: examples, or non-ignored tokens for tagging), `language_model_loss`,
    and the language model's own metrics except its loss (e.g. `clm_perplexity`).

    Args:
        encoder: `kbert.models.Encoder`, shared (held as `self.encoder`).
        heads: dict from task name to a head layer called as
            `head(encoder_outputs, padding_mask=..., training=...)` and returning float
            logits (`kbert.layers.ClassificationHead`, `kbert.layers.TaggingHead`).
        loss_weights: dict from task name to a float >= 0, default None (1.0 per task);
            tasks left out get 1.0.
        language_model: `PretrainingObjective` built on `encoder`, default None.
        language_model_weight: float >= 0, default 0.5.
        dtype: dtype policy, default None (the encoder's).
        **kwargs: `name`, `trainable`.

    Returns (from `call`):
        dict from task name to logits, plus `"language_model"` → the LM head's output dict
        when there is a language model.

    Example:
    >>> from keras import ops
    >>> from kbert.layers import ClassificationHead, TaggingHead
    >>> from kbert.models import CausalLanguageModel, Encoder
    >>> encoder = Encoder.from_preset("tiny", causal=True)
    >>> model = MultitaskModel(
    ...     encoder, {"sentiment": ClassificationHead(2, pooling="last"),
    ...               "pos": TaggingHead(5)},
    ...     language_model=CausalLanguageModel(encoder), language_model_weight=0.5)
    >>> x = {"token_ids": ops.array([[2, 7, 9, 3]]), "padding_mask": ops.ones((1, 4), "int32"),
    ...      "segment_ids": ops.zeros((1, 4), "int32")}
    >>> {task: tuple(out.shape) for task, out in model(x).items() if task != "language_model"}
    {'sentiment': (1, 2), 'pos': (1, 4, 5)}
    >>> model.loss_weight("language_model")
    0.5
    """

    def __init__(
        self,
        encoder,
        heads,
        loss_weights=None,
        language_model=None,
        language_model_weight=0.5,
        dtype=None,
        **kwargs,
    ):
        if not isinstance(heads, dict) or not heads:
            raise ValueError(
                f"heads must be a non-empty dict from task name to head layer; received {heads!r}"
            )
        for task, head in heads.items():
            if not isinstance(task, str) or not task or "/" in task:
                raise ValueError(
                    f"task names must be non-empty strings without '/' (they "
                    f"name variables and metrics); received {task!r}"
                )
            if task == LANGUAGE_MODEL:
                raise ValueError(
                    f"{LANGUAGE_MODEL!r} is reserved for the auxiliary language "
                    "model's output and loss weight; expected another task name"
                )
            if not isinstance(head, keras.layers.Layer):
                raise ValueError(
                    f"heads[{task!r}] must be a keras Layer; received {type(head).__name__}"
                )
        loss_weights = {} if loss_weights is None else dict(loss_weights)
        unknown = sorted(set(loss_weights) - set(heads))
        if unknown:
            raise ValueError(
                f"loss_weights names unknown task(s) {unknown}; expected names "
                f"among the heads {list(heads)}"
            )
        weights = {task: _check_weight(task, loss_weights.get(task, 1.0)) for task in heads}
        if language_model is not None:
            if not isinstance(language_model, PretrainingObjective):
                raise ValueError(
                    "language_model must be a PretrainingObjective (e.g. "
                    "CausalLanguageModel(encoder)); received "
                    f"{type(language_model).__name__}"
                )
            if language_model.encoder is not encoder:
                raise ValueError(
                    f"language_model ({type(language_model).__name__}) holds a different "
                    "encoder; expected one built on the encoder passed here"
                )
            weights[LANGUAGE_MODEL] = _check_weight(LANGUAGE_MODEL, language_model_weight)
        if dtype is None:
            dtype = pretraining_utils.encoder_dtype_policy(encoder)
        super().__init__(dtype=dtype, **kwargs)
        self.encoder = encoder
        self.heads = dict(heads)
        self.language_model = language_model
        self._loss_weight_variables = {
            name: self.add_weight(
                shape=(),
                dtype="float32",
                trainable=False,
                initializer=keras.initializers.Constant(value),
                name=f"{name}_loss_weight",
            )
            for name, value in weights.items()
        }
        self.task_loss_metrics = {task: keras.metrics.Mean(name=f"{task}_loss") for task in heads}
        self.task_accuracy_metrics = {
            task: keras.metrics.Mean(name=f"{task}_accuracy") for task in heads
        }
        self.language_model_loss_metric = None
        if language_model is not None:
            self.language_model_loss_metric = keras.metrics.Mean(name="language_model_loss")
        self._build_heads()
        self.built = True

    def _build_heads(self):
        # Build every head now, symbolically, so its weights exist before `fit` traces a step.
        inputs = pretraining_utils.symbolic_encoder_inputs()
        encoder_outputs = self.encoder(inputs)
        for head in self.heads.values():
            head(encoder_outputs, padding_mask=inputs["padding_mask"])

    @property
    def tasks(self):
        """The task names, in the order of `heads`."""
        return list(self.heads)

    def task_model(self, task):
        """One task's classifier as a functional model on the shared encoder and that head.

        The view holds the same variables (no copy), takes the encoder's input dict and
        returns that head's logits, so it serves anywhere a single-task model does (e.g.
        `kbert.tasks.evaluate_classifier`).

        Args:
            task: str. One of `tasks`.

        Returns:
            `keras.Model` from the encoder's inputs to `heads[task]`'s logits.
        """
        if task not in self.heads:
            raise ValueError(f"no head named {task!r}; expected one of {self.tasks}")
        inputs = pretraining_utils.symbolic_encoder_inputs()
        outputs = self.encoder(inputs)
        logits = self.heads[task](outputs, padding_mask=inputs["padding_mask"])
        return keras.Model(inputs, logits, name=f"{task}_model")

    @property
    def loss_weight_names(self):
        """The names `loss_weight` and `set_loss_weight` accept: tasks, then "language_model"."""
        return list(self._loss_weight_variables)

    def _variable(self, name):
        if name not in self._loss_weight_variables:
            raise ValueError(
                f"no loss weight named {name!r}; expected one of {self.loss_weight_names}"
            )
        return self._loss_weight_variables[name]

    def loss_weight(self, name):
        """The current weight of a task's loss, or of "language_model", as a Python float.

        The variable is float32; the float returned has the fewest digits that identify that
        float32 value, so a weight set to 0.3 reads back as 0.3.
        """
        value = np.float32(ops.convert_to_numpy(self._variable(name)))
        return float(np.format_float_positional(value, unique=True))

    def set_loss_weight(self, name, value):
        """Sets the weight of a task's loss (or "language_model") to a float >= 0.

        Assigns a variable read by the compiled train step, so it takes effect at the next
        step without retracing.
        """
        self._variable(name).assign(_check_weight(name, value))

    @property
    def metrics(self):
        # Keras lists only metrics it compiled plus sub-layers' that it can see; the task
        # metrics live in dicts and the LM's in a sub-model, so they are listed here.
        metrics = super().metrics
        known = {id(metric) for metric in metrics}
        extra = [
            metric
            for task in self.heads
            for metric in (self.task_loss_metrics[task], self.task_accuracy_metrics[task])
        ]
        if self.language_model is not None:
            extra.append(self.language_model_loss_metric)
            extra += [
                metric
                for metric in self.language_model.objective_metrics
                if metric is not self.language_model.loss_metric
            ]
        return metrics + [metric for metric in extra if id(metric) not in known]

    def _language_model_inputs(self, x):
        if LANGUAGE_MODEL_INPUTS in x:
            lm_x = x[LANGUAGE_MODEL_INPUTS]
            self.language_model.validate_inputs(lm_x)
            return lm_x
        # A causal LM reads only the encoder inputs: it scores the heads' own forward pass.
        needs = set(self.language_model.required_keys) - set(pretraining_utils.ENCODER_KEYS)
        if needs:
            raise ValueError(
                f"MultitaskModel with a {type(self.language_model).__name__} needs "
                f"x[{LANGUAGE_MODEL_INPUTS!r}] (its masked encoder inputs plus "
                f"{sorted(needs)}; see kbert.data.with_masked_language_model_inputs), so that "
                f"the task heads read unmasked text; received x keys {sorted(x)}"
            )
        return None

    def call(self, x, training=None):
        pretraining_utils.require_inputs(
            x, pretraining_utils.REQUIRED_ENCODER_KEYS, type(self).__name__
        )
        inputs = pretraining_utils.encoder_inputs(x)
        encoder_outputs = self.encoder(inputs, training=training)
        outputs = {
            task: head(encoder_outputs, padding_mask=inputs["padding_mask"], training=training)
            for task, head in self.heads.items()
        }
        if self.language_model is not None:
            lm_x = self._language_model_inputs(x)
            if lm_x is None:
                lm_x, lm_outputs = x, encoder_outputs
            else:
                lm_outputs = self.encoder(pretraining_utils.encoder_inputs(lm_x), training=training)
            outputs[LANGUAGE_MODEL] = self.language_model.call_head(
                lm_outputs, lm_x, training=training
            )
        return outputs

    def _task_loss(self, task, labels, logits):
        labels = ops.convert_to_tensor(labels)
        if len(labels.shape) != len(logits.shape) - 1:
            raise ValueError(
                f"labels of task {task!r} must have rank {len(logits.shape) - 1} (the head's "
                f"logits have shape {tuple(logits.shape)}); received shape {tuple(labels.shape)}"
            )
        labels = ops.cast(labels, "int32")
        scored = ops.not_equal(labels, IGNORE_INDEX)
        weights = ops.cast(scored, "float32")
        # Ignored labels are replaced by a valid class before the loss, then weighted by 0.
        safe_labels = ops.where(scored, labels, ops.zeros_like(labels))
        nll = pretraining_utils.sparse_cross_entropy(safe_labels, logits)
        loss = pretraining_utils.weighted_mean(nll, weights)
        present = ops.cast(ops.sum(weights) > 0, "float32")
        self.task_loss_metrics[task].update_state(loss, sample_weight=present)
        self.task_accuracy_metrics[task].update_state(
            pretraining_utils.predicted_correctly(safe_labels, logits), sample_weight=weights
        )
        return loss

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        if y is None:
            y = {}
        if not isinstance(y, dict):
            raise ValueError(
                f"MultitaskModel expects y as a dict from task name to labels "
                f"(tasks {self.tasks}); received {type(y).__name__}"
            )
        unknown = sorted(set(y) - set(self.heads))
        if unknown:
            raise ValueError(
                f"y names unknown task(s) {unknown}; expected names among the heads {self.tasks}"
            )
        if sample_weight is not None:
            raise ValueError(
                "MultitaskModel weighs examples through labels (IGNORE_INDEX, "
                "-100, is not scored); expected sample_weight None, received "
                f"{type(sample_weight).__name__}"
            )
        loss = ops.zeros((), "float32")
        for task in self.heads:
            if task in y:
                task_loss = self._task_loss(task, y[task], y_pred[task])
                loss = loss + self._loss_weight_variables[task] * task_loss
        if self.language_model is not None:
            lm_x = x.get(LANGUAGE_MODEL_INPUTS, x)
            lm_loss = self.language_model.objective_loss(lm_x, y_pred[LANGUAGE_MODEL])
            self.language_model_loss_metric.update_state(lm_loss)
            loss = loss + self._loss_weight_variables[LANGUAGE_MODEL] * lm_loss
        return pretraining_utils.with_regularization(self, loss)

    def get_config(self):
        language_model = None
        if self.language_model is not None:
            # The shared encoder is stored once, below, not inside the language model.
            language_model = pretraining_utils.serialize_objective(self.language_model)
        config = {
            "encoder": keras.saving.serialize_keras_object(self.encoder),
            "heads": {
                task: keras.saving.serialize_keras_object(head) for task, head in self.heads.items()
            },
            "loss_weights": {task: self.loss_weight(task) for task in self.heads},
            "language_model": language_model,
            "name": self.name,
            "trainable": self.trainable,
            "dtype": keras.dtype_policies.serialize(self.dtype_policy),
        }
        if self.language_model is not None:
            config["language_model_weight"] = self.loss_weight(LANGUAGE_MODEL)
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        encoder = keras.saving.deserialize_keras_object(config.pop("encoder"))
        heads = {
            task: keras.saving.deserialize_keras_object(spec)
            for task, spec in config.pop("heads").items()
        }
        spec = config.pop("language_model", None)
        language_model = (
            None if spec is None else pretraining_utils.deserialize_objective(spec, encoder)
        )
        if isinstance(config.get("dtype"), dict):
            config["dtype"] = keras.dtype_policies.deserialize(config["dtype"])
        return cls(encoder, heads, language_model=language_model, **config)
