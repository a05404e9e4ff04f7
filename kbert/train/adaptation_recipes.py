"""Every way the NAACL 2019 tutorial and the textbook adapt a pretrained encoder, one call each.

`adapt_classifier(method, start, data, seed)` builds a fresh classifier from a starting point,
applies one adaptation method, fine-tunes it on `data["train"]` and measures test accuracy, so
labs 3–6, `lab16_peft`, `lab17_distillation` and `benchmarks/adaptation.py` compare methods on one
footing. Each method is a few lines of kbert calls: read them as worked examples.
"""

import dataclasses
import inspect
import time

import keras

from kbert.data.classification_dataset import classification_dataset
from kbert.train.adaptation_run import AdaptationRun, ensemble_result, parameter_counts
from kbert.train.fine_tuning import count_batches, fine_tuning_optimizer
from kbert.train.trainable_weight_recipes import (
    ADAPTER_TRAINABLE,
    adapters,
    feature_extraction,
    full_fine_tuning,
    top_blocks,
)
from kbert.train.unfreezing_recipes import (
    chain_thaw,
    depth_groups,
    discriminative_optimizer,
    gradual_unfreezing,
    schedule_groups,
    schedule_spacing,
)

# Method → its peak learning rate, for a start without rates of its own
# (`StartingPoint.learning_rates`; `adaptation_comparison.START_LEARNING_RATES` holds those the
# grid chose for the labs' two starts). Fine-tuning every weight: BERT's 1e-4 (on 2 cores, a
# few epochs); methods that train a few new weights from scratch want larger rates (Houlsby et
# al. 2019 use 1e-4…1e-3; Hu et al. 2021 train LoRA at 4e-4…5e-4 for 30+ epochs; Lester et al.
# 2021 prompt-tune at 0.3 with Adafactor). LoRA, prefix and prompt tuning's rates are fallbacks
# from the first record of `benchmarks/adaptation_grid.py --studies peft` (6284ddd, MiniLM-L6 at
# 3 epochs): lab16 reads the rates that grid's current record chose for each start
# (`kbert.train.chosen_on_validation`) and falls back to these only where it holds none.
DEFAULT_LEARNING_RATES = {
    "full": 1e-4,
    "feature_extraction": 5e-3,
    "top_2": 1e-4,
    "adapters": 1e-3,
    "gradual_unfreezing": 1e-4,
    "chain_thaw": 1e-4,
    "discriminative_lr": 1e-4,
    "l2_sp": 1e-4,
    "ewc": 1e-4,
    "multitask": 1e-4,
    "lora": 3e-3,
    "prefix_tuning": 2e-2,
    "prompt_tuning": 3e-2,
    "sequential": 1e-4,
    "distillation": 2e-4,
}
ADAPTATION_METHODS = tuple(DEFAULT_LEARNING_RATES) + ("ensemble",)


@dataclasses.dataclass
class StartingPoint:
    """A pretrained encoder to adapt: how to load a fresh copy and how to read a sentence off it.

    Args:
        name: str. Shown in tables.
        load: callable returning `(encoder, preprocessor)`, a fresh copy on every call.
        pooling: str. The classifier's pooling, the one the start was trained to be read by
            (`kbert.checkpoints.trained_pooling`: "mean" for MiniLM-L6, "cls" for a plain BERT;
            "last" for a causal model whose classification token closes the input).
        objective: str or None. The pretraining objective whose head the checkpoint can rebuild
            ("causal": a tied decoder, "masked"), for EWC's Fisher and the multitask LM loss;
            None when the checkpoint ships no usable pretraining head.
        source: str or None. Where the weights come from (a name or directory), so saved
            results can tell two starts of the same name apart.
        learning_rates: dict or None. Method → peak rate chosen on validation for this start
            (`benchmarks/adaptation_grid.py`), in place of `DEFAULT_LEARNING_RATES`: a rate
            is a property of the weights being adapted and the budget as much as of the method
            (at 1,000 TREC-6 questions × 3 epochs both labs' starts fine-tune best at 3e-4, not
            BERT's 1e-4).
        feature_layers: str, default "top". Which layers feature extraction reads, each
            pooled the start's way (`feature_extraction`'s `layers`).
    """

    name: str
    load: object
    pooling: str = "cls"
    objective: str | None = None
    source: str | None = None
    learning_rates: dict | None = None
    feature_layers: str = "top"

    def learning_rate(self, method):
        """The peak rate `method` (a recipe or its name) trains this start at by default."""
        name = method_name(method)
        return (self.learning_rates or {}).get(name, DEFAULT_LEARNING_RATES.get(name))


def pretrained_starting_point(
    name_or_path,
    sequence_length=64,
    classification_token="[CLF]",
    dtype=None,
    name=None,
    learning_rates=None,
):
    """A `StartingPoint` from `kbert.checkpoints.load_pretrained`'s names and directories.

    A causal checkpoint (lab01's tutorial-style model) is adapted as the tutorial's hands-on
    #2 does: a new classification token is added to the vocabulary and closes every input, and
    the classifier reads its final hidden state, the only one that has seen the whole text. A
    bidirectional checkpoint is read the way it was trained to be read
    (`kbert.checkpoints.trained_pooling`: MiniLM-L6 by the mean of its tokens, as its
    `1_Pooling/config.json` says; a plain BERT at [CLS]).

    Args:
        name_or_path: str or Path. "minilm_l6", a Hugging Face BERT directory, or a kbert
            directory (`encoder.keras` + `vocab.txt`) such as lab01's output.
        sequence_length: int, default 64.
        classification_token: str, default "[CLF]". For causal checkpoints only.
        dtype: dtype policy, default None (float32).
        name: str, default None (`name_or_path`). The name shown in tables.
        learning_rates: dict or None. Per-method peak rates for this start
            (`StartingPoint.learning_rates`).

    Returns:
        `StartingPoint`.
    """
    from kbert.checkpoints import load_pretrained, trained_pooling
    from kbert.models.vocabulary_growth import grow_vocabulary
    from kbert.text import BertPreprocessor, WordPieceTokenizer

    # Loading tells the architecture; that first copy is the first `load()`'s fresh one.
    unused = [load_pretrained(name_or_path, dtype=dtype)]
    causal = unused[0][0].config.causal

    def load():
        encoder, tokenizer = unused.pop() if unused else load_pretrained(name_or_path, dtype=dtype)
        if causal:
            encoder, tokenizer = grow_vocabulary(encoder, tokenizer, [classification_token])
            # The packer closes each input with `sep_token`: make it the classification token.
            tokenizer = WordPieceTokenizer.from_config(
                {**tokenizer.get_config(), "sep_token": classification_token}
            )
        length = min(sequence_length, encoder.config.max_sequence_length)
        return encoder, BertPreprocessor(tokenizer, sequence_length=length)

    return StartingPoint(
        name or str(name_or_path),
        load,
        pooling=trained_pooling(name_or_path, causal=causal),
        objective="causal" if causal else None,
        source=str(name_or_path),
        learning_rates=learning_rates,
    )


# === Which weights (tutorial §4.2.A): `kbert.train.trainable_weight_recipes` ===


# === How and when (tutorial §4.2.B; gradual unfreezing and chain-thaw: unfreezing_recipes) ===


def discriminative_learning_rates(run, factor=2.6, decay=None):
    """ULMFiT's per-group rates lr_top / factor^(L − l) on slanted triangular schedules (#5).

    `run.learning_rate` is the top rate; the textbook's layer-wise decay ξ per layer (`decay`,
    e.g. 0.9) replaces `factor` when given. ULMFiT's 2.6 was chosen for a 3-layer LSTM with its
    own top rate: choose both on validation (`benchmarks/adaptation_grid.py`).
    """
    encoder, preprocessor = run.start.load()
    classifier = run.classifier(encoder)

    def optimizer(steps):
        # lr_l = lr_top / 2.6^(L - l) (or lr_top · ξ^(L - l) with a decay ξ), each depth on
        # ULMFiT's slanted triangular schedule.
        return discriminative_optimizer(classifier, run.learning_rate, steps, factor, decay)

    seconds = run.fit(classifier, preprocessor, optimizer=optimizer)
    return run.result(classifier, preprocessor, seconds), classifier


def _anchored(run, strength, fisher_batches):
    from kbert.train.pretrained_anchor import anchor_to_pretrained, estimate_diagonal_fisher

    encoder, preprocessor = run.start.load()
    fisher, fisher_seconds = None, 0.0
    if fisher_batches:
        if run.start.objective is None:
            raise ValueError(
                f"EWC needs the pretraining objective's head; {run.start.name} "
                "ships none (StartingPoint.objective is None)"
            )
        start = time.perf_counter()
        fisher = estimate_diagonal_fisher(
            _pretraining_objective(encoder),
            _language_model_batches(run, preprocessor),
            max_batches=fisher_batches,
            normalize=True,
        )
        fisher_seconds = time.perf_counter() - start
    anchor_to_pretrained(encoder, strength, fisher=fisher)
    classifier = run.classifier(encoder)
    seconds = run.fit(classifier, preprocessor)
    return run.result(
        classifier, preprocessor, seconds + fisher_seconds, fisher_s=fisher_seconds
    ), classifier


def l2_sp(run, strength=0.01):
    """L2-SP (Li et al. 2018): full fine-tuning plus strength/2 · ||w − w₀||² (tutorial #5)."""
    return _anchored(run, strength, 0)


def ewc(run, strength=0.01, fisher_batches=50):
    """EWC (Kirkpatrick et al. 2017): the L2-SP penalty weighted by a diagonal Fisher.

    The Fisher is that of the start's pretraining objective on the task's texts, over
    `fisher_batches` batches, normalised to mean 1 (so λ is on L2-SP's scale).
    """
    return _anchored(run, strength, fisher_batches)


def _pretraining_objective(encoder):
    from kbert.models import CausalLanguageModel, MaskedLanguageModel

    if encoder.config.causal:
        return CausalLanguageModel(encoder)
    return MaskedLanguageModel(encoder)


def _language_model_batches(run, preprocessor):
    """The training texts as LM input dicts (the task's own text; no labels needed)."""
    train = run.data["train"]
    return classification_dataset(preprocessor, train.texts, train.text_pairs, None, run.batch_size)


# === More signal (tutorial §4.3) ===


def sequential_adaptation(
    run, intermediate=None, intermediate_task="sst2", intermediate_examples=None, data_dir=None
):
    """An intermediate task for one epoch, then the target (tutorial §4.3; STILTs).

    Args:
        run: `AdaptationRun`.
        intermediate: `kbert.data.Examples` or None (load `intermediate_task`).
        intermediate_task: str, default "sst2". A `load_classification_task` name.
        intermediate_examples: int or None (as many as the target's training examples).
        data_dir: str or None. Where the intermediate task's data is.
    """
    from kbert.data import load_classification_task

    encoder, preprocessor = run.start.load()
    if intermediate is None:
        intermediate = load_classification_task(
            intermediate_task,
            "train",
            data_dir=data_dir,
            seed=run.seed,
            max_examples=intermediate_examples or len(run.data["train"]),
        )
    first = run.classifier(encoder, len(intermediate.label_names))
    seconds = run.fit(first, preprocessor, train=intermediate, epochs=1)
    classifier = run.classifier(encoder)  # a new head on the adapted encoder
    seconds += run.fit(classifier, preprocessor)
    return run.result(classifier, preprocessor, seconds), classifier


def lora(run, rank=8, alpha=16):
    """LoRA (Hu et al. 2021): W + (alpha/rank) · B A on the attention's query and value."""
    from kbert.models.peft import add_lora

    encoder, preprocessor = run.start.load()
    encoder = add_lora(encoder, rank=rank, alpha=alpha)
    classifier = run.classifier(encoder)
    return run.result(classifier, preprocessor, run.fit(classifier, preprocessor)), classifier


def prefix_tuning(run, prefix_length=10):
    """Prefix tuning (Li & Liang 2021): trained keys and values prepended in every block."""
    from kbert.models.peft import add_prefix_tuning

    encoder, preprocessor = run.start.load()
    encoder = add_prefix_tuning(encoder, prefix_length=prefix_length)
    classifier = run.classifier(encoder)
    return run.result(classifier, preprocessor, run.fit(classifier, preprocessor)), classifier


def prompt_tuning(run, prompt_tokens=20):
    """Prompt tuning (Lester et al. 2021): trained input embeddings before the text."""
    from kbert.models.peft import prompt_tuned_encoder

    encoder, preprocessor = run.start.load()
    prompted = prompt_tuned_encoder(encoder, prompt_tokens)
    classifier = run.classifier(prompted)
    return run.result(classifier, preprocessor, run.fit(classifier, preprocessor)), classifier


def _fit_batches(run, model, batches, steps, callbacks=(), metrics=None):
    """Compiles `model` with the standard optimizer over `steps` and fits it; returns seconds."""
    model.compile(optimizer=fine_tuning_optimizer(steps, run.learning_rate), metrics=metrics)
    start = time.perf_counter()
    model.fit(batches, epochs=run.epochs, callbacks=list(callbacks), verbose=run.verbose)
    return time.perf_counter() - start


def multitask(run, language_model_weight=0.5, language_model_final_weight=None):
    """The tutorial's hands-on #6: classification loss 1.0 + language-modelling loss 0.5.

    A causal checkpoint scores its LM loss on the same forward pass the classifier reads; a
    bidirectional one gets a masked-LM loss on a second, masked pass (15%, 80/10/10), so the
    classifier never sees [MASK]. Optionally the LM weight anneals linearly to
    `language_model_final_weight` over the run (`LossWeightAnnealing`).
    """
    from kbert.data.multitask_batches import joint_batches, with_masked_language_model_inputs
    from kbert.layers.classification_head import ClassificationHead
    from kbert.models.multitask_model import MultitaskModel
    from kbert.text import MaskedLMMasker
    from kbert.train.loss_weight_annealing import LossWeightAnnealing, linear_annealing

    encoder, preprocessor = run.start.load()
    causal = encoder.config.causal
    weight = language_model_weight
    model = MultitaskModel(
        encoder,
        {"task": ClassificationHead(run.num_classes, pooling=run.start.pooling)},
        loss_weights={"task": 1.0},
        language_model=_pretraining_objective(encoder),
        language_model_weight=weight,
    )
    train = run.data["train"]
    batches = joint_batches(
        classification_dataset(
            preprocessor,
            train.texts,
            train.text_pairs,
            train.labels,
            run.batch_size,
            training=True,
            seed=run.seed,
        ),
        "task",
    )
    if not causal:
        tokenizer = preprocessor.tokenizer
        masker = MaskedLMMasker(
            tokenizer.vocabulary_size(),
            tokenizer.mask_token_id,
            tokenizer.special_token_ids,
            max_selections=max(1, int(preprocessor.sequence_length * 0.2)),
            seed=run.seed,
        )
        batches = with_masked_language_model_inputs(batches, masker)
    steps = count_batches(batches) * run.epochs
    callbacks = []
    final = language_model_final_weight
    if final is not None:
        callbacks.append(
            LossWeightAnnealing(
                "language_model", lambda step: linear_annealing(step, weight, final, steps)
            )
        )
    seconds = _fit_batches(run, model, batches, steps, callbacks)
    # Test through the encoder and the task head alone (no LM logits over the vocabulary).
    inputs = {
        name: keras.Input(shape=(None,), dtype="int32", name=name)
        for name in ("token_ids", "segment_ids", "padding_mask")
    }
    classifier = keras.Model(
        inputs, model.heads["task"](encoder(inputs), padding_mask=inputs["padding_mask"])
    )
    return run.result(
        model,
        preprocessor,
        seconds,
        classifier=classifier,
        language_model_weight=weight,
    ), classifier


def distillation(
    run,
    teacher=None,
    student_layers=None,
    temperature=2.0,
    soft_weight=0.5,
    hidden_weight=0.0,
    student_from=None,
):
    """A fine-tuned teacher's soft targets (temperature T) + hard labels → a half-depth student.

    The student (`student_encoder`) copies the embeddings and every other block of
    `student_from` (default the teacher; DistilBERT's initialisation) and gets a new head; a
    `ClassifierEnsemble` teacher has no encoder, so it needs `student_from`. `trainable_pct`
    is the student's size as a share of `student_from`'s; `train_s` is the distillation alone
    (`teacher_s` is the teacher's fine-tuning when this call had to train it).
    """
    from kbert.models.distiller import Distiller
    from kbert.models.student_initialization import student_encoder

    teacher_seconds = 0.0
    _, preprocessor = run.start.load()
    if teacher is None:
        teacher_result, teacher = full_fine_tuning(run)
        teacher_seconds = teacher_result["train_s"]
    source = teacher if student_from is None else student_from
    if getattr(source, "encoder", None) is None:
        raise ValueError(
            "student_from must be a fine-tuned classifier with an encoder to copy blocks from "
            f"(needed with a teacher without one); received {type(source).__name__}"
        )
    layers = source.encoder.config.num_layers
    student = run.classifier(student_encoder(source.encoder, student_layers or max(1, layers // 2)))
    distiller = Distiller(
        teacher,
        student,
        temperature=temperature,
        soft_weight=soft_weight,
        hidden_weight=hidden_weight,
    )
    train = run.data["train"]
    batches = classification_dataset(
        preprocessor,
        train.texts,
        train.text_pairs,
        train.labels,
        run.batch_size,
        training=True,
        seed=run.seed,
    )
    seconds = _fit_batches(
        run, distiller, batches, count_batches(batches) * run.epochs, metrics=["accuracy"]
    )
    counts = (parameter_counts(student)[1], parameter_counts(source)[1])
    return run.result(
        student,
        preprocessor,
        seconds,
        counts=counts,
        teacher_s=teacher_seconds,
        student_layers=student.encoder.config.num_layers,
        teacher_accuracy=float(run.accuracy(teacher, preprocessor)),
    ), student


# Each method's name in tables and results → its recipe.
RECIPES = {
    "full": full_fine_tuning,
    "feature_extraction": feature_extraction,
    "top_2": top_blocks,
    "adapters": adapters,
    "gradual_unfreezing": gradual_unfreezing,
    "chain_thaw": chain_thaw,
    "discriminative_lr": discriminative_learning_rates,
    "l2_sp": l2_sp,
    "ewc": ewc,
    "lora": lora,
    "prefix_tuning": prefix_tuning,
    "prompt_tuning": prompt_tuning,
    "sequential": sequential_adaptation,
    "multitask": multitask,
    "distillation": distillation,
}


def method_name(method):
    """The name of `method` (a name in `RECIPES` or one of its recipes) for tables and rows.

    Raises:
        ValueError: neither a known name nor a recipe function.
    """
    if isinstance(method, str) and (method in RECIPES or method == "ensemble"):
        return method
    if method is ensemble_result:
        return "ensemble"
    for name, recipe in RECIPES.items():
        if method is recipe:
            return name
    raise ValueError(
        f"method must be one of {sorted(RECIPES)} or its recipe function (e.g. "
        f"adaptation_recipes.adapters), or ensemble_result; received {method!r}"
    )


def adapt_classifier(
    method, start, data, seed=0, epochs=3, batch_size=32, learning_rate=None, verbose=0, **options
):
    """Adapts `start` to `data` with one method; returns `(result, trained classifier)`.

    Args:
        method: str or function. A recipe of this module (`adapters`, `gradual_unfreezing`,
            …) or its name in `RECIPES` ("adapters", "top_2", …; every `ADAPTATION_METHODS`
            name except "ensemble", for which see `ensemble_result`).
        start: `StartingPoint`.
        data: dict with `kbert.data.Examples` under "train" and "test", and optionally
            "validation" (then the result has `validation_accuracy` too).
        seed: int, default 0. Keras's global seed (head initialisation, dropout, shuffling).
        epochs: int, default 3.
        batch_size: int, default 32.
        learning_rate: float, default None (the start's rate for the method,
            `StartingPoint.learning_rate`).
        verbose: int, default 0.
        **options: the recipe's own keyword arguments (see each recipe: `bottleneck_dim`,
            `factor`, `strength`, …).

    Returns:
        `(dict, keras.Model)`: the result (`method`, `start`, `seed`, `learning_rate`,
        `epochs` it trained, `trainable_params`, `total_params`, `trainable_pct`, `accuracy`
        on `data["test"]`, `at_majority`, `validation_accuracy` when there is validation data,
        `train_s`, …) and the trained model.

    Raises:
        ValueError: an unknown method or option (the message lists the recipe's options), or
            a method the starting point cannot run.
    """
    name = method_name(method)
    if name == "ensemble":
        raise ValueError(
            "method 'ensemble' combines several fine-tuned models: use ensemble_result, or "
            "adaptation_comparison.compare_methods (its 'full' models of every seed, then "
            "'distillation' teachers)"
        )
    recipe = RECIPES[name]
    accepted = list(inspect.signature(recipe).parameters)[1:]
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise ValueError(
            f"{name} takes the options {accepted}; received unknown option(s) {unknown}"
        )
    keras.utils.set_random_seed(seed)
    rate = learning_rate or start.learning_rate(name)
    run = AdaptationRun(start, data, seed, epochs, batch_size, rate, verbose)
    result, model = recipe(run, **options)
    return {
        "method": name,
        "start": start.name,
        "seed": seed,
        "learning_rate": rate,
        "epochs": epochs,  # a recipe that trains longer (ULMFiT's regime) says so in `result`
        **result,
    }, model


__all__ = [
    "ADAPTATION_METHODS",
    "ADAPTER_TRAINABLE",
    "DEFAULT_LEARNING_RATES",
    "RECIPES",
    "StartingPoint",
    "adapt_classifier",
    "adapters",
    "chain_thaw",
    "depth_groups",
    "discriminative_learning_rates",
    "distillation",
    "ewc",
    "feature_extraction",
    "full_fine_tuning",
    "gradual_unfreezing",
    "l2_sp",
    "lora",
    "method_name",
    "multitask",
    "prefix_tuning",
    "pretrained_starting_point",
    "prompt_tuning",
    "schedule_groups",
    "schedule_spacing",
    "sequential_adaptation",
    "top_blocks",
]
