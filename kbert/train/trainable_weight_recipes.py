"""Which weights train (tutorial §4.2.A): full fine-tuning, feature extraction, top blocks,
adapters. Part of `kbert.train.adaptation_recipes` (re-exported there with every other recipe).
"""

from kbert.models.feature_classifier import FEATURE_LAYERS, frozen_encoder_classifier
from kbert.models.peft import adapter_trainable_setup, add_adapters
from kbert.train.freezing import freeze_all_but_top, freeze_for_feature_extraction
from kbert.train.unfreezing_recipes import check_regime, ulmfit_fit

# Which weights train beside the adapters and the head, by name:
#   "tutorial": the NAACL 2019 tutorial's hands-on #3 also trains the embeddings ("we need to
#       train the embeddings"), ~25% of its small model; its code freezes every other weight,
#       the LayerNorms included (it keeps only names with "embeddings", "classification" or
#       "adapters" trainable);
#   "houlsby": Houlsby et al. (2019) train the LayerNorms with the adapters;
#   "adapters_only": nothing else, so the base stays shared by every task's adapters.
ADAPTER_TRAINABLE = {
    "tutorial": {"train_embeddings": True, "train_layer_norms": False},
    "houlsby": {"train_embeddings": False, "train_layer_norms": True},
    "adapters_only": {"train_embeddings": False, "train_layer_norms": False},
}


def full_fine_tuning(run, regime="tutorial"):
    """Every weight trains at one rate, warmup then linear decay (tutorial §4.2.A; BERT).

    `regime="ulmfit"`: every group from the start on ULMFiT's slanted triangular and
    discriminative rates and epochs (`unfreezing_recipes.ulmfit_fit`), the baseline of
    gradual unfreezing and chain-thaw in that regime.
    """
    if check_regime(regime) == "ulmfit":
        return ulmfit_fit(run)
    encoder, preprocessor = run.start.load()
    classifier = run.classifier(encoder)
    seconds = run.fit(classifier, preprocessor)
    return run.result(classifier, preprocessor, seconds), classifier


def feature_extraction(run, layers=None):
    """The encoder frozen, only a new linear head trains (tutorial §4.2.A, "keep the weights").

    Every layer is read the start's way (`StartingPoint.pooling`); `layers` (default the
    start's `feature_layers`) says which:
    "top" (the last layer, through the start's usual classifier head), "last4" (the mean of
    the last four, the BERT paper's feature-based reading) or "scalar_mix" (ELMo's learned
    mix of every layer), as `kbert.models.FeatureClassifier` reads them.

    Raises:
        ValueError: `layers` is not one of `FEATURE_LAYERS`.
    """
    layers = run.start.feature_layers if layers is None else layers
    if layers not in FEATURE_LAYERS:
        raise ValueError(
            f"feature_extraction's layers must be one of {FEATURE_LAYERS}; received {layers!r}"
        )
    encoder, preprocessor = run.start.load()
    if layers == "top":
        classifier = run.classifier(encoder)
        freeze_for_feature_extraction(classifier)
    else:
        # The encoder's every layer pooled the start's way, then mixed: the head alone trains.
        classifier = frozen_encoder_classifier(
            encoder, run.num_classes, layers=layers, pooling=run.start.pooling
        )
    return run.result(classifier, preprocessor, run.fit(classifier, preprocessor)), classifier


def top_blocks(run, top_k=2):
    """All but the top `top_k` blocks frozen (the textbook's partial freezing)."""
    encoder, preprocessor = run.start.load()
    classifier = run.classifier(encoder)
    freeze_all_but_top(classifier, top_k)
    return run.result(classifier, preprocessor, run.fit(classifier, preprocessor)), classifier


def adapters(
    run, bottleneck_dim=32, placement="houlsby", trainable="houlsby", rate_multiplier=None
):
    """Bottleneck adapters in every block, the rest frozen but for `trainable`'s set (#3).

    Houlsby et al. (2019) place two per block (after attention and after the feed-forward
    network), Pfeiffer et al. (2021) one ("pfeiffer"). What trains besides the adapters and
    the head (`ADAPTER_TRAINABLE`): "tutorial" (the tutorial's hands-on #3: the embeddings
    too), "houlsby" (the LayerNorms) or "adapters_only". The result's
    `trainable_pct` is the share that trained. With `rate_multiplier` (the tutorial's 10), the
    peak rate is that multiple of the start's full fine-tuning rate, in place of the run's.

    Raises:
        ValueError: an unknown `trainable` (or `placement`: `add_adapters`), or a
            `rate_multiplier` that is not a number > 0.
    """
    rate = run.learning_rate
    if rate_multiplier is not None:
        if isinstance(rate_multiplier, bool) or not (
            isinstance(rate_multiplier, (int, float)) and rate_multiplier > 0
        ):
            raise ValueError(
                f"adapters' rate_multiplier must be a number > 0; received {rate_multiplier!r}"
            )
        rate = rate_multiplier * run.start.learning_rate("full")
    if trainable not in ADAPTER_TRAINABLE:
        raise ValueError(
            f"adapters' trainable must be one of {tuple(ADAPTER_TRAINABLE)}; received {trainable!r}"
        )
    encoder, preprocessor = run.start.load()
    encoder = add_adapters(encoder, bottleneck_dim=bottleneck_dim, placement=placement)
    classifier = run.classifier(encoder)
    adapter_trainable_setup(classifier, **ADAPTER_TRAINABLE[trainable])
    seconds = run.fit(classifier, preprocessor, learning_rate=rate)
    return run.result(classifier, preprocessor, seconds, learning_rate=rate), classifier
