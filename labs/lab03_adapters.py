"""Lab 3: adapters — train a few small modules inside a frozen pretrained transformer.

Reproduces hands-on #3 of the NAACL 2019 tutorial "Transfer Learning in NLP" (adapters with
freezing) after Houlsby et al. 2019: a bottleneck Dense → GELU → Dense with a skip connection,
inserted after the attention and the feed-forward sublayer of every block and initialised near
the identity. Compared on TREC-6 over 3 seeds, each row paired seed by seed with full
fine-tuning (at the rate the grid chose for it):
- feature extraction (frozen encoder, linear head), reading the start as lab15 found best
  (MiniLM-L6: the mean of its last four mean-pooled layers; `StartingPoint.feature_layers`), at
  the rate the adapters grid chose for it on validation (`chosen_feature_extraction`; the
  library's default until that record exists);
- adapters at the tutorial's own settings ("adapters_tutorial"): size 32, the adapters, the
  embeddings and the head trained (~25% of its small model; the tutorial's code freezes every
  other weight, the LayerNorms included), at ten times the fine-tuning rate;
- adapters at the setting validation chose for each start ("adapters": trainable set, size and
  the peak rate that row trained at, read from the record of `benchmarks/adaptation_grid.py
  --studies adapters` by `kbert.train.chosen_on_validation.chosen_adapters`; the Houlsby set at
  size 32 and 10× until that record exists; each start runs its own choice and never another
  start's, and a start whose grid holds no choice runs the fallback, labelled so);
- Pfeiffer et al.'s placement (after the feed-forward only), with `--methods all`.

Then the point of adapters: the task lives in a small file apart from the base. The lab trains
TREC-6 adapters (and head; the LayerNorms stay the base's, so nothing else changes), saves only
them, loads them into a fresh copy of the base and checks the logits match, then trains a
second task's adapters (SST-2) on the same base and switches back to TREC-6's, for every
starting point, in the cells below; the last cell compares the recipes over seeds.

What the sources claim: the tutorial, "results similar to full fine-tuning … training only
25% of the parameters" (cited, not-measured); Houlsby et al., within 0.4 points of full
fine-tuning on GLUE training 3.6% of the weights (sizes {8, 64, 256} and the rate chosen on
validation; cited, not-measured); the adapter file is a small fraction of the model's. What was
found: docs/results.md#lab03_adapters for this lab, and docs/results.md#adaptation_grid_adapters
for each trainable set's setting chosen on validation (the table marks the tutorial's own row).

    python labs/lab03_adapters.py                          # lab01's model and MiniLM-L6
    python labs/lab03_adapters.py --starts minilm_l6 --seeds 1   # one seed: a quick look
    python labs/lab03_adapters.py --methods all                # and the Pfeiffer placement
"""

import functools
import math
import tempfile
from pathlib import Path

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import numpy as np

from kbert.checkpoints import load_adapters, save_adapters
from kbert.data import load_classification_task
from kbert.data.classification_dataset import classification_dataset
from kbert.layers import Adapter
from kbert.models import (
    SequenceClassifier,
    adapter_trainable_setup,
    add_adapters,
    set_active_adapter,
)
from kbert.tasks import evaluate_classifier
from kbert.train import (
    TrainingSettings,
    fine_tune_classifier,
    format_trainable_report,
    trainable_report,
)
from kbert.train import adaptation_recipes as recipes
from kbert.train.adaptation_comparison import (
    FALLBACK_ADAPTERS,
    comparison_parser,
    starting_points,
    trec_data,
)
from kbert.train.chosen_on_validation import chosen_adapters, chosen_feature_extraction
from kbert.train.own_choice_comparison import (
    compare_each_start,
    each_start,
    own_choices,
    select_each_start,
)

# %% Settings (`--help` lists them), TREC-6 and the starting points.
parser = comparison_parser(__doc__.split("\n\n")[0], run_dir="runs/lab03_adapters")
parser.add_argument("--bottleneck-dim", type=int, default=32, help="the tutorial's 32")
# The Pfeiffer placement with `--methods all` (or by its label).
parser.set_defaults(methods="full,feature_extraction,adapters_tutorial,adapters")
args = parser.parse_args()
if args.bottleneck_dim < 1:
    parser.error(f"--bottleneck-dim must be a positive integer; received {args.bottleneck_dim}")
starts = starting_points(parser, args)
data = trec_data(args)
sst2 = load_classification_task("sst2", "train", data_dir=args.data_dir, max_examples=512)
num_classes = len(data["train"].label_names)


# %% The adapter written out (Houlsby et al. 2019): project down to a bottleneck, a
# nonlinearity, project back up, and add the input (the skip connection). The up-projection
# starts at zero, so a fresh adapter is the identity and inserting it changes nothing.
# Where it goes ("houlsby" placement), twice in every block, before each residual + LayerNorm:
#     h = LayerNorm(x + adapter(attention_output_projection(attention(x))))
#     y = LayerNorm(h + adapter(feed_forward(h)))
# ("pfeiffer" keeps only the second.) kbert's `Adapter` layer is this; `add_adapters` puts
# one in each place. Below, the hand-written one against kbert's with the same weights.
def adapter_by_hand(x, down_kernel, down_bias, up_kernel, up_bias):
    """`x + up(gelu(down(x)))` in NumPy, GELU exact (BERT's): (..., hidden) → (..., hidden)."""
    down = x @ down_kernel + down_bias  # (..., bottleneck_dim)
    gelu = 0.5 * down * (1.0 + np.vectorize(math.erf)(down / math.sqrt(2.0)))
    return x + gelu @ up_kernel + up_bias  # (..., hidden)


def check_adapter_by_hand(hidden_dim, bottleneck_dim, seed=0):
    """Prints and returns max |hand-written − kbert's Adapter| with copied random weights."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(2, 5, hidden_dim)).astype("float32")  # (batch, seq, hidden)
    adapter = Adapter(bottleneck_dim=bottleneck_dim)
    fresh = np.max(np.abs(np.asarray(adapter(x)) - x))
    # A fresh up-projection is zero, so give every weight random values before comparing.
    weights = [rng.normal(scale=0.2, size=w.shape).astype("float32") for w in adapter.weights]
    adapter.set_weights(weights)  # order: down kernel, down bias, up kernel, up bias
    difference = float(np.max(np.abs(adapter_by_hand(x, *weights) - np.asarray(adapter(x)))))
    share = bottleneck_dim * (2 * hidden_dim + 1) + hidden_dim
    print(
        f"Adapter {hidden_dim} → {bottleneck_dim} → {hidden_dim}: {share} weights "
        f"(a {hidden_dim}×{hidden_dim} Dense has {hidden_dim * (hidden_dim + 1)}); fresh, "
        f"max |adapter(x) − x| = {fresh:.1e}; hand-written vs kbert's Adapter with the same "
        f"weights, max |Δ| = {difference:.1e}"
    )
    assert difference < 1e-5, difference
    return difference


check_adapter_by_hand(hidden_dim=4 * args.bottleneck_dim, bottleneck_dim=args.bottleneck_dim)

# %% Adapters by hand, on each starting point: train them, keep them apart, add a second task.
for start in starts:
    # Insert adapters, train only them and the head, score.
    encoder, preprocessor = start.load()
    # A new encoder: the same weights plus an adapter set "trec" in every block (config, so
    # it saves and exports with the encoder).
    encoder = add_adapters(
        encoder, bottleneck_dim=args.bottleneck_dim, placement="houlsby", name="trec"
    )
    classifier = SequenceClassifier(encoder, num_classes, pooling=start.pooling)
    # The LayerNorms stay the base's: the task then lives in its adapter file (and the base
    # can carry other tasks' adapters), so only the adapters and the head train.
    adapter_trainable_setup(classifier, train_layer_norms=False)
    print(f"{start.name}, trainable weights with TREC-6 adapters:")
    print(format_trainable_report(trainable_report(classifier)))
    fine_tune_classifier(
        classifier,
        preprocessor,
        data["train"],
        settings=TrainingSettings(
            epochs=args.epochs,
            batch_size=args.batch_size,
            learning_rate=start.learning_rate("adapters"),
            seed=args.seeds - 1,
            verbose=args.verbose,
        ),
    )
    accuracy = evaluate_classifier(classifier, preprocessor, data["test"])["accuracy"]
    test = classification_dataset(preprocessor, data["test"].texts, batch_size=64)
    logits = classifier.predict(test, verbose=0)

    # The task apart from the base: save the adapters alone, load them into a fresh base.
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "trec_adapters.npz"
        save_adapters(encoder, path, "trec")
        adapter_kb = path.stat().st_size / 1024
        fresh, _ = start.load()
        fresh = load_adapters(fresh, path, "trec")  # adds the set as the file describes it
    reloaded = SequenceClassifier(fresh, num_classes, pooling=start.pooling)
    # The head is the task's too: copy it (it is as small as the adapters).
    for mine, theirs in zip(reloaded.head_layers(), classifier.head_layers(), strict=True):
        mine.set_weights(theirs.get_weights())
    reloaded_diff = np.max(np.abs(reloaded.predict(test, verbose=0) - logits))

    # A second task on the same base: SST-2 adapters beside TREC-6's, switched by name.
    both = add_adapters(fresh, bottleneck_dim=args.bottleneck_dim, name="sst2")
    sentiment = SequenceClassifier(both, 2, pooling=start.pooling)
    adapter_trainable_setup(sentiment, train_layer_norms=False)
    fine_tune_classifier(
        sentiment,
        preprocessor,
        sst2,
        settings=TrainingSettings(epochs=1, learning_rate=1e-3, verbose=0),
    )
    set_active_adapter(both, "trec")  # the SST-2 training touched neither base nor "trec"
    switched = SequenceClassifier(both, num_classes, pooling=start.pooling)
    for mine, theirs in zip(switched.head_layers(), classifier.head_layers(), strict=True):
        mine.set_weights(theirs.get_weights())
    switched_diff = np.max(np.abs(switched.predict(test, verbose=0) - logits))
    base_mb = sum(int(np.prod(v.shape)) * 4 for v in encoder.weights) / 2**20
    print(
        f"{start.name}: TREC-6 adapters test accuracy {accuracy:.4f}; adapters file "
        f"{adapter_kb:.1f} KB vs base {base_mb:.1f} MB; reloaded into a fresh base, max |Δ logit| "
        f"{reloaded_diff:.2e}; after adding and training SST-2 adapters and switching back, "
        f"{switched_diff:.2e}"
    )

# %% The comparison over starting points and seeds: which weights train, at which rate.
# Feature extraction reads each start its best way (`StartingPoint.feature_layers`); the
# tutorial's adapters train at 10× the start's full fine-tuning rate, the chosen ones at the rate
# their grid row trained at.
tutorial = {"bottleneck_dim": args.bottleneck_dim, "trainable": "tutorial", "rate_multiplier": 10}
# Each start runs its own choice (and never the other start's), Pfeiffer's placement at the
# same setting.
choose = functools.partial(chosen_adapters, fallback=FALLBACK_ADAPTERS)
chosen, sources = own_choices("adapters", recipes.adapters, starts, choose)
pfeiffer, _ = own_choices(
    "adapters_pfeiffer", recipes.adapters, starts, choose, {"placement": "pfeiffer"}
)
for name, source in sources.items():
    print(f"adapters chosen on validation for {name}: {source}")
features, feature_sources = own_choices(
    "feature_extraction",
    recipes.feature_extraction,
    starts,
    functools.partial(
        chosen_feature_extraction,
        fallback={"learning_rate": recipes.DEFAULT_LEARNING_RATES["feature_extraction"]},
    ),
)
for name, source in feature_sources.items():
    print(f"feature extraction's rate chosen on validation for {name}: {source}")
tutorial_row = {start.name: [("adapters_tutorial", recipes.adapters, tutorial)] for start in starts}
# Each start's rows in the table's order: full, feature extraction, the tutorial's adapters,
# the chosen adapters, Pfeiffer's placement.
rows = each_start(
    starts, [("full", recipes.full_fine_tuning, {})], features, tutorial_row, chosen, pfeiffer
)
compare_each_start(select_each_start(parser, args, rows), starts, data, args)
