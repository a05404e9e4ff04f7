"""`adapt_classifier`'s recipes on tiny saved checkpoints: what each method trains and reports."""

import numpy as np
import pytest

from kbert.checkpoints import save_pretrained
from kbert.data import Examples
from kbert.data.classification_dataset import classification_dataset
from kbert.data.label_vocabulary import LabelVocabulary
from kbert.models import Encoder
from kbert.text import WordPieceTokenizer
from kbert.train.adaptation_recipes import (
    ADAPTATION_METHODS,
    StartingPoint,
    adapt_classifier,
    pretrained_starting_point,
)
from kbert.train.adaptation_run import ensemble_result, parameter_counts
from kbert.train.discriminative_learning_rates import DiscriminativeOptimizer
from kbert.train.unfreezing import GradualUnfreezing
from kbert.train.unfreezing_recipes import schedule_groups

# About 100 s of fine-tuning runs (17 of them, each traced anew): the slow tier.
pytestmark = pytest.mark.slow

# Three question types, 8 + 4 questions each: train, then test.
QUESTIONS = {
    "location": [
        "where is paris",
        "where is the river",
        "where is the city of rome",
        "where is the old tower",
        "where is the lake",
        "where is the big city",
        "where is the river of rome",
        "where is the tower",
        "where is the park",
        "where is the old city",
        "where is the lake of paris",
        "where is rome",
    ],
    "person": [
        "who wrote the book",
        "who is the king",
        "who built the tower",
        "who wrote the old song",
        "who is the queen",
        "who built the city",
        "who wrote the song",
        "who is the old king",
        "who built the park",
        "who wrote the poem",
        "who is the poet",
        "who built rome",
    ],
    "number": [
        "how many books are there",
        "how many rivers are there",
        "how many days",
        "how many people live in paris",
        "how many cities are there",
        "how many kings",
        "how many songs are there",
        "how many towers",
        "how many lakes are there",
        "how many parks",
        "how many poems are there",
        "how many people live in rome",
    ],
}
LABELS = LabelVocabulary(list(QUESTIONS))
# An intermediate task for "sequential": is the question long or short.
INTERMEDIATE = {
    "short": ["where is rome", "who is the king", "how many days", "who built rome"],
    "long": [
        "where is the river of rome",
        "who wrote the old song",
        "how many people live in paris",
        "how many songs are there",
    ],
}
TRAIN_PER_CLASS = 8
SEQUENCE_LENGTH = 16
BATCH_SIZE = 8


def _examples(groups, rows, source):
    names = list(groups)
    texts = [groups[name][row] for name in names for row in rows]
    labels = np.array([index for index in range(len(names)) for _ in rows], np.int32)
    return Examples(
        texts=texts,
        text_pairs=None,
        labels=labels,
        label_names=LabelVocabulary(names),
        source=source,
    )


def _vocabulary():
    words = sorted(
        {
            word
            for texts in (*QUESTIONS.values(), *INTERMEDIATE.values())
            for text in texts
            for word in text.split()
        }
    )
    return ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]


def _save_start(directory, **changes):
    tokenizer = WordPieceTokenizer(_vocabulary())
    encoder = Encoder.from_preset(
        "tiny", vocabulary_size=tokenizer.vocabulary_size(), max_sequence_length=32, **changes
    )
    return pretrained_starting_point(
        save_pretrained(encoder, tokenizer, directory), sequence_length=SEQUENCE_LENGTH
    )


@pytest.fixture(scope="module")
def data():
    train_rows = range(TRAIN_PER_CLASS)
    test_rows = range(TRAIN_PER_CLASS, len(QUESTIONS["location"]))
    return {
        "train": _examples(QUESTIONS, train_rows, "questions train"),
        "test": _examples(QUESTIONS, test_rows, "questions test"),
    }


@pytest.fixture(scope="module")
def bidirectional(tmp_path_factory):
    return _save_start(tmp_path_factory.mktemp("starts") / "bidirectional")


@pytest.fixture(scope="module")
def causal(tmp_path_factory):
    return _save_start(
        tmp_path_factory.mktemp("starts") / "causal", causal=True, norm_first=True, num_segments=0
    )


def _adapt(method, start, data, **arguments):
    arguments = {"seed": 0, "epochs": 1, "batch_size": BATCH_SIZE, **arguments}
    return adapt_classifier(method, start, data, **arguments)


@pytest.fixture(scope="module")
def full(bidirectional, data):
    """One "full" fine-tuning run, shared by the tests that need a trained classifier."""
    return _adapt("full", bidirectional, data)


def _weights_by_path(model):
    weights = {}
    for variable in model.weights:
        weights.setdefault(variable.path, np.asarray(variable))
    return weights


def _changed_pretrained_weights(start, model):
    """Paths of the checkpoint's weights whose values in `model` differ from a fresh load."""
    pretrained, _ = start.load()
    trained = _weights_by_path(model)
    missing = [v.path for v in pretrained.weights if v.path not in trained]
    assert not missing, f"the model lacks pretrained weights {missing}"
    return [
        v.path for v in pretrained.weights if not np.array_equal(np.asarray(v), trained[v.path])
    ]


def _test_accuracy(model, start, data):
    """Accuracy on the 12 test questions, recomputed from the model's eager logits."""
    test = data["test"]
    batch = next(iter(classification_dataset(start.load()[1], test.texts, batch_size=64)))
    return float(np.mean(np.argmax(np.asarray(model(batch)), axis=-1) == test.labels))


def _check_result(result, method, start, model, data):
    assert result["method"] == method and result["start"] == start.name
    assert result["accuracy"] == pytest.approx(_test_accuracy(model, start, data))
    assert result["train_s"] > 0
    assert 0 < result["trainable_pct"] <= 100
    assert result["trainable_pct"] == pytest.approx(
        100.0 * result["trainable_params"] / result["total_params"]
    )


# Methods run on the bidirectional start by `test_method_runs_and_reports`, with tiny-model
# options. The group schedules need one step per stage: 24 examples in batches of 4.
OPTIONS = {
    "full": {},
    "feature_extraction": {},
    "top_2": {"top_k": 1},
    "adapters": {"bottleneck_dim": 4},
    "gradual_unfreezing": {"batch_size": 4},
    "chain_thaw": {"batch_size": 4},
    "discriminative_lr": {},
    "l2_sp": {},
    "lora": {"rank": 2},
    "prefix_tuning": {"prefix_length": 2},
    "prompt_tuning": {"prompt_tokens": 2},
    "sequential": {"intermediate": _examples(INTERMEDIATE, range(4), "question length")},
}
PARAMETER_EFFICIENT = ("lora", "prefix_tuning", "prompt_tuning")


def _read_at_pooler(start):
    """`start` with the classifier on the pooler, so every layer group gets gradients."""
    return StartingPoint(
        f"{start.name} (pooler)", start.load, pooling="pooler", objective=start.objective
    )


@pytest.fixture(scope="module")
def adapted(bidirectional, data, full):
    """method → `(result, model)` on the bidirectional start, each run once, when first asked."""
    runs = {"full": full}

    def get(method):
        if method not in runs:
            # Chain-thaw through a pooler-reading head: every group, the pooler too, gets a stage.
            start = _read_at_pooler(bidirectional) if method == "chain_thaw" else bidirectional
            runs[method] = _adapt(method, start, data, **OPTIONS[method])
        return runs[method]

    return get


def test_methods_cover_every_recipe():
    assert set(OPTIONS) | {"ewc", "multitask", "distillation", "ensemble"} == set(
        ADAPTATION_METHODS
    )


@pytest.mark.parametrize("method", list(OPTIONS))
def test_method_runs_and_reports(method, adapted, bidirectional, data):
    result, model = adapted(method)
    assert result["start"].startswith(bidirectional.name)
    assert result["method"] == method and result["seed"] == 0
    assert result["accuracy"] == pytest.approx(_test_accuracy(model, bidirectional, data))
    assert result["train_s"] > 0
    assert 0 < result["trainable_pct"] <= 100
    assert (result["trainable_params"], result["total_params"]) == parameter_counts(model)
    assert result["trainable_pct"] == pytest.approx(
        100.0 * result["trainable_params"] / result["total_params"]
    )
    batch = next(
        iter(classification_dataset(bidirectional.load()[1], data["test"].texts, batch_size=5))
    )
    assert tuple(model(batch).shape) == (5, len(LABELS))  # eager: no predict trace to pay


def test_trainable_shares_order_the_methods(adapted):
    share = {
        method: adapted(method)[0]["trainable_pct"]
        for method in ("full", "feature_extraction", "top_2", "adapters", *PARAMETER_EFFICIENT)
    }
    assert share["full"] == 100.0
    assert share["feature_extraction"] < share["adapters"] < share["full"]
    assert share["feature_extraction"] < share["top_2"] < share["full"]
    for method in PARAMETER_EFFICIENT:
        assert share[method] < 50, method


@pytest.mark.parametrize("method", ["feature_extraction", *PARAMETER_EFFICIENT])
def test_frozen_methods_leave_pretrained_weights_unchanged(method, adapted, bidirectional):
    assert _changed_pretrained_weights(bidirectional, adapted(method)[1]) == []


def test_full_fine_tuning_changes_pretrained_weights(full, bidirectional):
    changed = _changed_pretrained_weights(bidirectional, full[1])
    assert "block_0/attention/query/kernel" in changed
    assert "block_1/feed_forward/output/kernel" in changed


def test_a_run_records_its_epochs_and_whether_it_landed_at_the_majority_class(
    full, bidirectional, data
):
    from kbert.metrics.majority_class import at_majority
    from kbert.tasks import evaluate_classifier

    result, model = full
    assert result["epochs"] == 1  # `_adapt`'s, the run's own
    _, preprocessor = bidirectional.load()
    predictions = evaluate_classifier(model, preprocessor, data["test"])["predictions"]
    assert result["at_majority"] is at_majority(predictions, data["test"].labels)


def test_feature_extraction_trains_only_the_head(adapted):
    _, model = adapted("feature_extraction")
    assert {v.path for v in model.trainable_weights} == {"logits/kernel", "logits/bias"}


@pytest.mark.parametrize("method", ["gradual_unfreezing", "chain_thaw"])
def test_group_schedules_record_their_stages(method, adapted):
    result, _ = adapted(method)
    # Five groups (embeddings, two blocks, pooler, head): five stages, chain-thaw one more,
    # spaced over the first half of training.
    assert 2 <= result["stages"] <= (5 if method == "gradual_unfreezing" else 6)


@pytest.mark.parametrize("method", ["gradual_unfreezing", "chain_thaw"])
def test_group_schedules_refuse_too_few_steps(method, bidirectional, data):
    small = {"train": data["train"].subset(range(4)), "test": data["test"]}
    with pytest.raises(ValueError, match=r"needs >= \d+ training steps; training has 1"):
        _adapt(method, bidirectional, small)


def test_chain_thaw_on_a_cls_classifier_leaves_the_unread_pooler_out(bidirectional, data):
    # A [CLS] classifier never reads the pooler: a stage training it alone would have no
    # gradient at all, so the schedule leaves it out.
    result, _ = _adapt("chain_thaw", bidirectional, data, batch_size=2)
    assert result["stages"] >= 2


def test_discriminative_lr_compiles_a_discriminative_optimizer(adapted):
    _, model = adapted("discriminative_lr")
    optimizer = model.optimizer
    assert isinstance(optimizer, DiscriminativeOptimizer)
    assert int(optimizer.iterations) > 0
    inner = optimizer.group_optimizers
    for group in ("embeddings", "block_0", "block_1", "head"):
        assert int(inner[group].iterations) == int(optimizer.iterations), group
    # ULMFiT's factor 2.6 per depth: the head (and the pooler above the blocks) on top, then
    # block_1, block_0, embeddings.
    ratio = float(inner["head"].learning_rate) / float(inner["embeddings"].learning_rate)
    assert ratio == pytest.approx(2.6**3, rel=1e-4)
    assert float(inner["pooler"].learning_rate) == float(inner["head"].learning_rate)
    ratio = float(inner["head"].learning_rate) / float(inner["block_1"].learning_rate)
    assert ratio == pytest.approx(2.6, rel=1e-4)


def test_ewc_on_the_causal_start(causal, data):
    result, model = _adapt("ewc", causal, data, fisher_batches=2)
    _check_result(result, "ewc", causal, model, data)
    assert result["trainable_pct"] == 100.0
    assert 0 < result["fisher_s"] < result["train_s"]


def test_ewc_needs_a_pretraining_objective(bidirectional, data):
    assert bidirectional.objective is None
    with pytest.raises(
        ValueError,
        match="EWC needs the pretraining objective's head.*"
        r"StartingPoint.objective is None",
    ):
        _adapt("ewc", bidirectional, data)


def test_starting_points_read_their_checkpoints(bidirectional, causal):
    assert (bidirectional.pooling, bidirectional.objective) == ("cls", None)
    assert (causal.pooling, causal.objective) == ("last", "causal")
    encoder, preprocessor = causal.load()
    # The causal start closes every input with a new classification token.
    assert preprocessor.tokenizer.token_to_id("[CLF]") == len(_vocabulary())
    assert encoder.config.vocabulary_size == len(_vocabulary()) + 1
    assert preprocessor.sequence_length == SEQUENCE_LENGTH


@pytest.mark.parametrize("start_name", ["bidirectional", "causal"])
def test_multitask(start_name, request, data):
    start = request.getfixturevalue(start_name)
    result, classifier = _adapt("multitask", start, data, language_model_weight=0.3)
    _check_result(result, "multitask", start, classifier, data)
    assert result["language_model_weight"] == 0.3
    _, preprocessor = start.load()
    batch = next(iter(classification_dataset(preprocessor, data["test"].texts, batch_size=5)))
    assert tuple(classifier(batch).shape) == (5, len(LABELS))


def test_ensemble_averages_member_probabilities(adapted, bidirectional, data):
    # Two classifiers fine-tuned on every weight (the second with per-group rates), reused.
    members = [adapted("full")[1], adapted("discriminative_lr")[1]]
    _, preprocessor = bidirectional.load()
    result = ensemble_result(members, preprocessor, data, train_seconds=3.0)

    test = data["test"]
    probabilities = []
    for model in members:
        logits = model.predict(
            classification_dataset(preprocessor, test.texts, batch_size=64), verbose=0
        )
        exponentials = np.exp(logits - logits.max(axis=-1, keepdims=True))
        probabilities.append(exponentials / exponentials.sum(axis=-1, keepdims=True))
    expected = np.mean(np.argmax(np.mean(probabilities, axis=0), axis=-1) == test.labels)
    assert result["accuracy"] == pytest.approx(expected)
    # Its size: both members' parameters, as a share of one member's.
    size = parameter_counts(members[0])[1]
    assert (result["trainable_params"], result["total_params"]) == (2 * size, size)
    assert result["trainable_pct"] == pytest.approx(200.0)
    assert result["method"] == "ensemble" and result["members"] == 2
    assert result["train_s"] == 3.0


def test_distillation_halves_the_teacher(full, bidirectional, data):
    teacher = full[1]
    teacher_total = parameter_counts(teacher)[1]
    result, student = _adapt("distillation", bidirectional, data, teacher=teacher)
    _check_result(result, "distillation", bidirectional, student, data)
    assert result["student_layers"] == teacher.encoder.config.num_layers // 2 == 1
    assert student.encoder.config.num_layers == 1
    assert result["teacher_s"] == 0.0  # the teacher was given, not trained here
    assert result["teacher_accuracy"] == pytest.approx(_test_accuracy(teacher, bidirectional, data))
    assert result["trainable_pct"] == pytest.approx(
        100.0 * parameter_counts(student)[1] / teacher_total
    )
    assert result["trainable_pct"] < 100


def test_distilling_an_ensemble_copies_blocks_from_student_from(adapted, bidirectional, data):
    from kbert.models import ClassifierEnsemble

    members = [adapted("full")[1], adapted("discriminative_lr")[1]]
    ensemble = ClassifierEnsemble(members)
    with pytest.raises(ValueError, match="student_from must be a fine-tuned classifier"):
        _adapt("distillation", bidirectional, data, teacher=ensemble)
    result, student = _adapt(
        "distillation", bidirectional, data, teacher=ensemble, student_from=members[0]
    )
    _check_result(result, "distillation", bidirectional, student, data)
    _, preprocessor = bidirectional.load()
    # The row's teacher accuracy is the ensemble's (its mean probabilities' arg-max).
    expected = ensemble_result(members, preprocessor, data)["accuracy"]
    assert result["teacher_accuracy"] == pytest.approx(expected)
    assert student.encoder.config.num_layers == 1
    assert result["trainable_pct"] == pytest.approx(
        100.0 * parameter_counts(student)[1] / parameter_counts(members[0])[1]
    )


def test_unknown_method_names_the_valid_ones(bidirectional, data):
    with pytest.raises(
        ValueError,
        match=r"method must be one of \[.*'full'.*'multitask'.*\] or its recipe function"
        r".*; received 'finetune'",
    ):
        _adapt("finetune", bidirectional, data)
    with pytest.raises(ValueError, match="use ensemble_result"):
        _adapt("ensemble", bidirectional, data)


def test_a_recipe_function_is_its_method(bidirectional, data):
    from kbert.train import adaptation_recipes as recipes

    result, _ = _adapt(recipes.top_blocks, bidirectional, data, top_k=1)
    assert result["method"] == "top_2" and result["learning_rate"] == 1e-4


def test_starting_point_defaults():
    start = StartingPoint("custom", load=None)
    assert (start.pooling, start.objective) == ("cls", None)


def test_a_validation_split_is_scored_and_the_rate_is_reported(bidirectional, data):
    with_validation = {**data, "validation": data["test"]}
    result, model = _adapt("full", bidirectional, with_validation, learning_rate=3e-4)
    assert result["learning_rate"] == 3e-4
    # Validation here is the test questions: the two scores are the same measurement.
    assert result["validation_accuracy"] == result["accuracy"]
    _, preprocessor = bidirectional.load()
    ensemble = ensemble_result([model], preprocessor, with_validation)
    assert ensemble["validation_accuracy"] == ensemble["accuracy"] == result["accuracy"]
    # Without a validation split there is no validation score (and no crash).
    assert "validation_accuracy" not in _adapt("full", bidirectional, data)[0]


@pytest.mark.parametrize("method", ["full", "gradual_unfreezing", "chain_thaw"])
def test_ulmfit_regime_thaws_one_group_per_epoch_on_ulmfit_s_rates(method, bidirectional, data):
    result, model = _adapt(method, bidirectional, data, regime="ulmfit", epochs=2)
    _check_result(result, method, bidirectional, model, data)
    groups = schedule_groups(model, GradualUnfreezing, bidirectional.pooling)
    # One epoch per group and one more, above the 2 asked for; the same for the three methods.
    assert result["epochs"] == len(groups) + 1 > 2
    stages = {"full": None, "gradual_unfreezing": len(groups), "chain_thaw": len(groups) + 1}
    assert result.get("stages") == stages[method]
    optimizer = model.optimizer
    assert isinstance(optimizer, DiscriminativeOptimizer)
    inner = optimizer.group_optimizers
    ratio = float(inner["head"].learning_rate) / float(inner["block_1"].learning_rate)
    assert ratio == pytest.approx(2.6, rel=1e-4)
    # Every group trained in the end: the whole model is trainable again.
    assert result["trainable_pct"] == 100.0


def test_an_unknown_regime_is_refused_naming_the_regimes(bidirectional, data):
    for method in ("full", "gradual_unfreezing", "chain_thaw"):
        with pytest.raises(ValueError, match=r"regime must be one of \('tutorial', 'ulmfit'\)"):
            _adapt(method, bidirectional, data, regime="ULMFiT")


def test_adapter_trainable_sets_train_what_they_name(bidirectional, data):
    shares, trained, embeddings = {}, {}, set()
    for trainable in ("adapters_only", "houlsby", "tutorial"):
        # A multiple of the start's full fine-tuning rate (the default 1e-4), not its own 1e-3.
        multiplier = {"rate_multiplier": 30} if trainable == "tutorial" else {}
        result, model = _adapt(
            "adapters", bidirectional, data, bottleneck_dim=4, trainable=trainable, **multiplier
        )
        assert result["learning_rate"] == pytest.approx(3e-3 if multiplier else 1e-3)
        shares[trainable] = result["trainable_pct"]
        trained[trainable] = {variable.path for variable in model.trainable_weights}
        embeddings |= {variable.path for variable in model.encoder.embeddings.weights}
    assert shares["adapters_only"] < shares["houlsby"] < shares["tutorial"] < 100
    assert not any("token_embedding" in path for path in trained["houlsby"])
    assert any("token_embedding" in path for path in trained["tutorial"])
    assert not any("norm" in path for path in trained["adapters_only"])
    assert any("norm" in path for path in trained["houlsby"])
    # The tutorial's code keeps only embeddings, head and adapters trainable: the blocks'
    # LayerNorms stay frozen (Houlsby et al. train them).
    block_norms = {path for path in trained["houlsby"] if "norm" in path} - embeddings
    assert block_norms and not block_norms & trained["tutorial"]
    with pytest.raises(ValueError, match="adapters' trainable must be one of .*received 'all'"):
        _adapt("adapters", bidirectional, data, bottleneck_dim=4, trainable="all")
    with pytest.raises(ValueError, match="rate_multiplier must be a number > 0; received 0"):
        _adapt("adapters", bidirectional, data, bottleneck_dim=4, rate_multiplier=0)


def test_feature_extraction_reads_a_mix_of_layers_the_start_s_way(bidirectional, data):
    result, model = _adapt("feature_extraction", bidirectional, data, layers="scalar_mix")
    _check_result(result, "feature_extraction", bidirectional, model, data)
    # The mix's weights, its scale and the linear head train; the encoder is untouched.
    assert len(model.trainable_weights) == 4
    trained = _weights_by_path(model)  # the unread pooler is not part of this model
    pretrained = {v.path: np.asarray(v) for v in bidirectional.load()[0].weights}
    assert "block_1/attention/query/kernel" in trained
    assert all(
        np.array_equal(trained[path], pretrained[path]) for path in trained if path in pretrained
    )
    with pytest.raises(ValueError, match="needs num_features_layers >= 4; received 3"):
        _adapt("feature_extraction", bidirectional, data, layers="last4")  # 2 blocks
    with pytest.raises(ValueError, match="layers must be one of .*received 'top3'"):
        _adapt("feature_extraction", bidirectional, data, layers="top3")
