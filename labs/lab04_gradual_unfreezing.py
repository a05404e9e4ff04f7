"""Lab 4: gradual unfreezing and chain-thaw — when each layer starts to train.

Reproduces hands-on #4 of the NAACL 2019 tutorial "Transfer Learning in NLP" (§4.2.B, "how and
when to update"): ULMFiT's gradual unfreezing (Howard & Ruder 2018) trains the head first and
unfreezes one more layer group from the top, so the randomly initialised head does not send
large gradients through pretrained layers it would damage; DeepMoji's chain-thaw (Felbo et al.
2017) trains the head alone, then each group alone, then everything. Compared on TREC-6, each
beside full fine-tuning at the same rate and epochs, in two regimes:

- the tutorial's: the run's own epochs and schedule (warmup, then linear decay), one more group
  at a fixed interval, spaced so every group trains for at least the second half of the run;
  freezing all but the top 2 blocks beside them;
- ULMFiT's: one group per epoch from the top (so at least as many epochs as groups, then every
  group together for the rest), slanted triangular rates and discriminative rates (÷2.6 per
  group going down); its baseline is full fine-tuning with those rates and epochs, every group
  training from the start. That baseline is paired with nothing: beside the tutorial's full
  fine-tuning it would differ in epochs and in learning rates at once, two changes in one Δ.

The tutorial claims nothing for transformers ("not investigated in detail for Transformer models
⇒ no specific hyper-parameters advocated"); ULMFiT's gains were measured with LSTMs, most with
few labels. So this lab reports what it finds: docs/results.md#lab04_gradual_unfreezing for this
table, docs/results.md#unfreezing_regime (`benchmarks/unfreezing_regime.py`) for the ULMFiT
regime at several labelled sizes with each method's rate chosen on validation.

Both schedules are Keras callbacks (`kbert.train.GradualUnfreezing`, `ChainThaw`) acting on the
layer groups the encoder names (embeddings, block_0 … block_N, pooler, head); the pooler is
left out when the head reads [CLS] or the last token directly (alone, it would get no gradient).
The cells below build one gradual unfreezing run by hand on the first starting point (print its
plan, fit, score), print chain-thaw's plan and ULMFiT's one-group-per-epoch plan, then compare
the recipes (`kbert.train.adaptation_recipes`) over starting points and seeds.

What to take from it: when each layer starts to train is a setting to test, not a rule. A
schedule that helped an LSTM need not help a residual transformer whose pretrained weights
already sit close to a good solution; read each row's paired difference to full fine-tuning in
its own regime, and take a difference inside the seeds' spread as no difference.

    python labs/lab04_gradual_unfreezing.py
    python labs/lab04_gradual_unfreezing.py --starts minilm_l6 --seeds 1   # one seed: a quick look
"""

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

from kbert.models import SequenceClassifier
from kbert.tasks import evaluate_classifier
from kbert.train import (
    ChainThaw,
    GradualUnfreezing,
    TrainingSettings,
    fine_tune_classifier,
    layer_groups,
)
from kbert.train import adaptation_recipes as recipes
from kbert.train.adaptation_comparison import (
    compare_and_print,
    comparison_parser,
    selected_variants,
    starting_points,
    trec_data,
)
from kbert.train.unfreezing_recipes import ulmfit_epochs

# %% Settings (`--help` lists them), TREC-6 and the starting points.
parser = comparison_parser(__doc__.split("\n\n")[0], run_dir="runs/lab04_gradual_unfreezing")
args = parser.parse_args()
starts = starting_points(parser, args)
data = trec_data(args)

# %% Gradual unfreezing by hand: the head first, then one more layer group from the top.
start = starts[0]
encoder, preprocessor = start.load()
classifier = SequenceClassifier(encoder, len(data["train"].label_names), pooling=start.pooling)
print(f"{start.name}: layer groups, bottom to top: {list(layer_groups(classifier))}")
groups = recipes.schedule_groups(classifier, GradualUnfreezing, start.pooling)  # top first
steps, every = recipes.schedule_spacing(
    preprocessor, data["train"], args.batch_size, args.epochs, len(groups), stages_share=0.5
)
unfreezing = GradualUnfreezing(groups, every=every, total_steps=steps)
for first_step, trainable in unfreezing.plan(classifier):
    print(f"  GradualUnfreezing from step {first_step:>4} of {steps}: trains {trainable}")
fine_tune_classifier(
    classifier,
    preprocessor,
    data["train"],
    settings=TrainingSettings(
        epochs=args.epochs,
        batch_size=args.batch_size,
        learning_rate=start.learning_rate("gradual_unfreezing"),
        callbacks=[unfreezing],
        verbose=args.verbose,
    ),
)
accuracy = evaluate_classifier(classifier, preprocessor, data["test"])["accuracy"]
print(f"  gradual unfreezing ran {len(unfreezing.history)} stages; test accuracy {accuracy:.4f}")

# %% Chain-thaw's plan: the head alone, each group alone from the bottom, then everything.
chain_groups = recipes.schedule_groups(classifier, ChainThaw, start.pooling)
_, chain_every = recipes.schedule_spacing(
    preprocessor, data["train"], args.batch_size, args.epochs, len(chain_groups) + 1
)
for first_step, trainable in ChainThaw(chain_groups, every=chain_every).plan(classifier):
    print(f"  ChainThaw from step {first_step:>4} of {steps}: trains {trainable}")

# %% ULMFiT's regime: one group per epoch from the top, then every group for the rest.
epochs = ulmfit_epochs(len(groups), args.epochs)
for first_epoch, trainable in GradualUnfreezing(groups, epochs=epochs).plan(classifier):
    print(f"  ULMFiT's GradualUnfreezing from epoch {first_epoch:>2} of {epochs}: {trainable}")

# %% The comparison over starting points and seeds: when each layer group starts to train.
variants = [
    ("full", recipes.full_fine_tuning, {}),
    ("top_2", recipes.top_blocks, {"top_k": 2}),
    ("gradual_unfreezing", recipes.gradual_unfreezing, {"stages_share": 0.5}),
    ("chain_thaw", recipes.chain_thaw, {"stages_share": 0.5}),
    ("full_ulmfit", recipes.full_fine_tuning, {"regime": "ulmfit"}),
    ("gradual_unfreezing_ulmfit", recipes.gradual_unfreezing, {"regime": "ulmfit"}),
    ("chain_thaw_ulmfit", recipes.chain_thaw, {"regime": "ulmfit"}),
]
# Each row beside full fine-tuning in its own regime. full_ulmfit, the ULMFiT rows' baseline,
# has none: its epochs (at least one per group) and its rates both differ from `full`'s.
baselines = {label: "full" for label, _, _ in variants[1:4]}
baselines |= {label: "full_ulmfit" for label, _, _ in variants[5:]}
compare_and_print(selected_variants(parser, args, variants), starts, data, args, baselines)
