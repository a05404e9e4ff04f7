"""Lab 4: gradual unfreezing and chain-thaw — when each layer starts to train.

Reproduces hands-on #4 of the NAACL 2019 tutorial "Transfer Learning in NLP" (§4.2.B, "how and
when to update"): ULMFiT's gradual unfreezing (Howard & Ruder 2018) trains the head first and
unfreezes one more layer group from the top every k steps, so the randomly initialised head
does not send large gradients through pretrained layers it would damage; DeepMoji's chain-thaw
(Felbo et al. 2017) trains the head alone, then each group alone, then everything. Compared on
TREC-6 with full fine-tuning from the start and with freezing all but the top 2 blocks.

Both are Keras callbacks (`kbert.train.GradualUnfreezing`, `ChainThaw`) acting on the layer
groups the encoder names (embeddings, block_0 … block_N, pooler, head). Here the stages are
spaced so every group trains for at least the second half of the run (ULMFiT unfreezes one per
epoch; with 3 epochs, one every k steps); the pooler is left out when the head reads [CLS] or
the last token directly (alone, it would get no gradient). The cells below build one gradual
unfreezing run by hand on the first starting point (print its plan, fit, score), print
chain-thaw's plan, then compare the recipes (`kbert.train.adaptation_recipes`) over starting
points and seeds.

What it should show: on a well-pretrained model with a short run gradual unfreezing is close to
full fine-tuning (its benefit in ULMFiT was stability on small data with an LSTM); freezing all
but the top blocks is cheaper and loses a little. What the record found
(docs/results.md#lab04_gradual_unfreezing, one seed): on MiniLM-L6 every schedule lands close
to full fine-tuning, the top blocks alone included; on lab01's small model gradual unfreezing
and chain-thaw stay below full fine-tuning, and the top blocks alone lose far more than a
little.

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

# %% The comparison over starting points and seeds: when each layer group starts to train.
variants = [
    ("full", recipes.full_fine_tuning, {}),
    ("top_2", recipes.top_blocks, {"top_k": 2}),
    ("gradual_unfreezing", recipes.gradual_unfreezing, {"stages_share": 0.5}),
    ("chain_thaw", recipes.chain_thaw, {"stages_share": 0.5}),
]
compare_and_print(selected_variants(parser, args, variants), starts, data, args)
