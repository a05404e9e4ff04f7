"""When each layer group trains: gradual unfreezing and chain-thaw as adaptation recipes.

Two regimes. The tutorial's (hands-on #4, `regime="tutorial"`): the run's own epochs, rate and
schedule (warmup, then linear decay), one more group every k steps so the stages fill a share of
the run. ULMFiT's (Howard & Ruder 2018, §3.2–3.3, `regime="ulmfit"`): one group per epoch from
the top, slanted triangular rates (cut_frac 0.1, ratio 32) and discriminative rates (÷2.6 per
group going down), then every group together for the remaining epochs; `full_fine_tuning(run,
regime="ulmfit")` trains every group from the start with the same rates and epochs, so a
comparison changes only when each group starts to train.

The recipes are registered in `kbert.train.adaptation_recipes.RECIPES`; this module holds the
pieces they share (`schedule_groups`, `depth_groups`, `discriminative_optimizer`).
"""

from kbert.data.classification_dataset import classification_dataset
from kbert.train.discriminative_learning_rates import DiscriminativeOptimizer, layerwise_schedules
from kbert.train.fine_tuning import count_batches, decoupled_adamw
from kbert.train.freezing import HEAD, layer_groups
from kbert.train.unfreezing import ChainThaw, GradualUnfreezing

REGIMES = ("tutorial", "ulmfit")
ULMFIT_FACTOR = 2.6  # ULMFiT's ratio between a layer group's rate and the one above (cited)


def check_regime(regime):
    """Returns `regime` if it names one of `REGIMES`.

    Raises:
        ValueError: `regime must be one of ('tutorial', 'ulmfit'); received …`.
    """
    if regime not in REGIMES:
        raise ValueError(f"regime must be one of {REGIMES}; received {regime!r}")
    return regime


def training_steps(preprocessor, train, batch_size, epochs, seed):
    """Optimizer steps of `epochs` passes over `train` in the recipes' batches."""
    batches = classification_dataset(
        preprocessor,
        train.texts,
        train.text_pairs,
        train.labels,
        batch_size,
        training=True,
        seed=seed,
    )
    return count_batches(batches) * epochs


def schedule_groups(classifier, callback_class, pooling):
    """The layer groups `callback_class` should schedule on `classifier`, in its order.

    Leaves out the pooler when the head does not read it (`pooling` other than "pooler"): a
    chain-thaw stage training it alone would get no gradient at all.
    """
    names = [name for name in layer_groups(classifier) if name != "pooler" or pooling == "pooler"]
    if callback_class is ChainThaw:
        return [HEAD] + [name for name in names if name != HEAD]
    return list(reversed(names))


def schedule_spacing(preprocessor, train, batch_size, epochs, num_stages, stages_share=0.5, seed=0):
    """`(total_steps, every)` so `num_stages` stages, `every` steps apart, fill `stages_share`.

    ULMFiT unfreezes one layer group per epoch; with fewer epochs than groups, the stages are
    spaced `every` steps apart so that the last one starts at `stages_share` of the run.
    """
    steps = training_steps(preprocessor, train, batch_size, epochs, seed)
    return steps, max(1, int(steps * stages_share) // num_stages)


def depth_groups(classifier):
    """Each layer group's depth for per-layer rates: `{group: depth name}`, bottom to top.

    ULMFiT's layers are the embeddings, each block, and the classifier on top: the groups
    above the last block (a final LayerNorm, the pooler, the head) share the top depth, so the
    last block trains at lr_top / 2.6 and the head at lr_top, whatever extra groups the model
    names.
    """
    names = list(layer_groups(classifier))
    blocks = [name for name in names if name.startswith("block_")]
    return {name: name if name == "embeddings" or name in blocks else "top" for name in names}


def discriminative_optimizer(classifier, learning_rate, total_steps, factor=2.6, decay=None):
    """ULMFiT's optimizer: per-depth rates lr_top / factor^(L − l), each slanted triangular.

    Args:
        classifier: a task model whose `layer_groups` the rates act on (`depth_groups`).
        learning_rate: float. The top depth's peak rate.
        total_steps: int. The run's optimizer steps (the schedules' length).
        factor: float, default 2.6. The ratio between neighbouring depths' rates.
        decay: float or None. The textbook's layer-wise decay ξ, in place of `factor`.

    Returns:
        `DiscriminativeOptimizer` (AdamW per group, global clipping at norm 1).
    """
    depths = depth_groups(classifier)
    order = list(dict.fromkeys(depths.values()))  # embeddings, block_0 … block_N, top
    schedules = layerwise_schedules(
        order,
        "slanted_triangular",
        learning_rate,
        factor=factor,
        decay=decay,
        total_steps=total_steps,
    )
    rates = {group: schedules[depth] for group, depth in depths.items()}
    return DiscriminativeOptimizer(classifier, decoupled_adamw, rates, global_clipnorm=1.0)


def ulmfit_epochs(num_groups, epochs):
    """Epochs of a ULMFiT-regime run over `num_groups` scheduled groups: at least `epochs`.

    One group per epoch, so gradual unfreezing trains every group from epoch `num_groups` − 1
    and chain-thaw (one stage per group, then all together) from epoch `num_groups`; the run
    lasts at least one epoch more, so chain-thaw's last stage trains too.

    Example:
    >>> ulmfit_epochs(8, 3), ulmfit_epochs(8, 12)
    (9, 12)
    """
    return max(epochs, num_groups + 1)


def ulmfit_fit(run, callback_class=None):
    """Fits in ULMFiT's regime; `callback_class` (None: every group from the start) thaws one
    group per epoch. Returns `(result, classifier)`; the result has `epochs` (and `stages`)."""
    encoder, preprocessor = run.start.load()
    classifier = run.classifier(encoder)
    groups = schedule_groups(classifier, callback_class or GradualUnfreezing, run.start.pooling)
    epochs = ulmfit_epochs(len(groups), run.epochs)

    def optimizer(steps):
        return discriminative_optimizer(classifier, run.learning_rate, steps, ULMFIT_FACTOR)

    callbacks = []
    if callback_class is not None:
        callbacks.append(callback_class(groups, every="epoch", epochs=epochs))
    seconds = run.fit(
        classifier, preprocessor, epochs=epochs, callbacks=callbacks, optimizer=optimizer
    )
    extra = {"epochs": epochs}
    if callbacks:
        extra["stages"] = len(callbacks[0].history)
    return run.result(classifier, preprocessor, seconds, **extra), classifier


def _group_schedule(run, callback_class, stages_share, regime):
    """Fits with `callback_class`: in ULMFiT's regime (`ulmfit_fit`), or spacing its stages so
    they fill `stages_share` of the run's own epochs (the tutorial's)."""
    if check_regime(regime) == "ulmfit":
        return ulmfit_fit(run, callback_class)
    if not 0 < stages_share <= 1:
        raise ValueError(f"stages_share must be in (0, 1]; received {stages_share!r}")
    encoder, preprocessor = run.start.load()
    classifier = run.classifier(encoder)
    groups = schedule_groups(classifier, callback_class, run.start.pooling)
    stages = len(groups) + (1 if callback_class is ChainThaw else 0)
    steps, every = schedule_spacing(
        preprocessor, run.data["train"], run.batch_size, run.epochs, stages, stages_share, run.seed
    )
    callback = callback_class(groups, every=every, total_steps=steps)
    seconds = run.fit(classifier, preprocessor, callbacks=[callback])
    return run.result(classifier, preprocessor, seconds, stages=len(callback.history)), classifier


def gradual_unfreezing(run, stages_share=0.5, regime="tutorial"):
    """ULMFiT's gradual unfreezing (tutorial #4, §4.2.B): head first, then one more group.

    `regime="tutorial"`: one group every k steps, so the stages fill `stages_share` of the
    run's epochs and the whole model trains for the rest. `regime="ulmfit"`: one group per
    epoch on ULMFiT's rates (`ulmfit_fit`; `stages_share` is not used).
    """
    return _group_schedule(run, GradualUnfreezing, stages_share, regime)


def chain_thaw(run, stages_share=0.5, regime="tutorial"):
    """DeepMoji's chain-thaw (tutorial #4): the head, then each group alone, then all.

    The regimes as `gradual_unfreezing`'s.
    """
    return _group_schedule(run, ChainThaw, stages_share, regime)


__all__ = [
    "REGIMES",
    "ULMFIT_FACTOR",
    "chain_thaw",
    "check_regime",
    "depth_groups",
    "discriminative_optimizer",
    "gradual_unfreezing",
    "schedule_groups",
    "schedule_spacing",
    "training_steps",
    "ulmfit_epochs",
    "ulmfit_fit",
]
