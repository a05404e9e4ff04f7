"""Lab 5: discriminative learning rates, slanted triangular schedules, and staying close to home.

Reproduces hands-on #5 of the NAACL 2019 tutorial "Transfer Learning in NLP" (§4.2.B) and the
textbook's layer-wise learning-rate decay: lower layers hold general features and should move
less, so layer group l trains at lr_l = lr_top / 2.6^(L − l) (ULMFiT) — or lr_top · ξ^(L − l)
with a decay ξ per layer (the textbook; ξ = 1/2.6 is the same thing) — each on ULMFiT's slanted
triangular schedule (a short linear rise over 10% of the steps, a long linear fall to 1/32 of
the peak). `kbert.train.DiscriminativeOptimizer` gives every group its own AdamW. The groups
above the last block (final LayerNorm, pooler, head) share the top rate, as ULMFiT's classifier
layer does. ULMFiT's 2.6 was chosen for a 3-layer LSTM; for BERT-style encoders the usual
layer-wise decay is ξ ≈ 0.9 per block (a second row).

Two regularisers pull the weights toward the pretrained point instead: L2-SP (Li et al. 2018),
λ/2 · ||w − w₀||², and EWC (Kirkpatrick et al. 2017), λ/2 · Σ F_i (w_i − w₀,i)², whose diagonal
Fisher F is estimated on the pretraining objective (here lab01's causal LM on the task's text;
MiniLM-L6 ships no pretraining head, so it has no EWC row).

The method needs its own top rate: reused with full fine-tuning's 1e-4 at factor 2.6, the
lowest groups of a 6–8 group encoder train at ~1e-7 and the run is close to training the head
alone (the 31–32% near the majority class of an earlier table). `benchmarks/adaptation_grid.py`
chooses the top rate and the factor together on validation for each start (see
docs/results.md, `adaptation_grid`). The cells build the per-group optimizer by hand on the
first starting point (its rate table, the STLR curve, one fit), then compare the recipes.

How to read the comparison: at equal top rates. Every row of a start trains at one peak rate,
the discriminative top rate the grid chose for that start (`chosen_rates`; 1e-3 where no grid
record exists; `--top-learning-rate` sets one rate for every start instead): full fine-tuning
at it, and each discriminative row's top group at it, so each row's paired difference to full
fine-tuning (Δ, seed by seed over 3 seeds) measures what slowing the lower layers does, not a
change of rate. Discriminative rates run at ULMFiT's factor 2.6 (the source's setting) and at
the factor the grid chose with that top rate for each start (read from the grid's record by
`kbert.train.chosen_on_validation.chosen_factor`; a row named after the start that chose it, run
on that start only), beside the layer-wise decay 0.9, L2-SP and EWC (at `--strength`, λ 0.01,
on every start, and at the λ each start's anchors study chose on validation where that differs:
`kbert.train.chosen_anchors.chosen_strength`, a row named after its start). Where a start's
full fine-tuning rate chosen on validation is not its discriminative top rate, one more row runs
full fine-tuning at that rate (`full_chosen_rate`), so the table also shows each method against the
baseline at its own best rate, not only at the shared one. The grid's rates study shows the same
pairing at every top rate (docs/results.md#adaptation_grid, #adaptation_grid_minilm).

What it should show: the table of per-group rates and the schedule; on TREC-6, whether these
help over plain full fine-tuning with warmup + linear decay at the same top rate. Report what
you see: with a few thousand examples and 3 epochs the differences may be within the seed
spread.

    python labs/lab05_discriminative_lr.py
    python labs/lab05_discriminative_lr.py --starts minilm_l6 --factor 2.6 --seeds 1  # quick
"""

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

from kbert.models import SequenceClassifier
from kbert.tasks import evaluate_classifier
from kbert.train import (
    DiscriminativeOptimizer,
    TrainingSettings,
    fine_tune_classifier,
    layerwise_schedules,
    slanted_triangular,
)
from kbert.train import adaptation_recipes as recipes
from kbert.train.adaptation_comparison import (
    FALLBACK_FACTOR,
    comparison_parser,
    starting_points,
    trec_data,
)
from kbert.train.chosen_anchors import chosen_strength
from kbert.train.chosen_on_validation import chosen_factor
from kbert.train.fine_tuning import decoupled_adamw
from kbert.train.own_choice_comparison import compare_each_start, each_start, select_each_start

# %% Settings (`--help` lists them), TREC-6 and the starting points.
parser = comparison_parser(__doc__.split("\n\n")[0], run_dir="runs/lab05_discriminative_lr")
parser.add_argument(
    "--top-learning-rate",
    type=float,
    default=None,
    help="the top group's peak, and full fine-tuning's (equal top rates), for every start; "
    "default: each start's discriminative top rate chosen on validation by the grid",
)
parser.add_argument("--factor", type=float, default=2.6, help="lr ratio between groups (ULMFiT)")
parser.add_argument("--decay", type=float, default=0.9, help="the textbook's ξ per layer")
parser.add_argument(
    "--strength",
    type=float,
    default=0.01,
    help="L2-SP and EWC λ for every start; each start's own choice runs beside it",
)
args = parser.parse_args()
for name in ("top_learning_rate", "factor", "decay", "strength"):
    if name == "top_learning_rate" and args.top_learning_rate is None:
        continue
    if not getattr(args, name) > 0:
        parser.error(
            f"--{name.replace('_', '-')} must be a number > 0; received {getattr(args, name)}"
        )
starts = starting_points(parser, args)
data = trec_data(args)
# One peak rate per start for every row (equal top rates): the top rate the grid chose for its
# discriminative rows, which `starting_points` read with its other choices.
METHODS = ("full", "discriminative_lr", "l2_sp", "ewc")
own_full_rates = {each.name: each.learning_rate("full") for each in starts}  # before the change
for each in starts:
    top_rate = args.top_learning_rate or each.learning_rate("discriminative_lr")
    each.learning_rates = dict.fromkeys(METHODS, top_rate)
    print(f"{each.name}: every row at top rate {top_rate:g}")

# %% Per-group rates by hand: lr_l = lr_top / factor^(L − l), each on ULMFiT's STLR.
start = starts[0]
encoder, preprocessor = start.load()
classifier = SequenceClassifier(encoder, len(data["train"].label_names), pooling=start.pooling)
depths = recipes.depth_groups(classifier)  # group → depth; the groups above the blocks share one
order = list(dict.fromkeys(depths.values()))  # embeddings, block_0 … block_N, top
steps = recipes.schedule_spacing(preprocessor, data["train"], args.batch_size, args.epochs, 1)[0]
top_rate = start.learning_rate("discriminative_lr")
by_factor = layerwise_schedules(
    order, "slanted_triangular", top_rate, factor=args.factor, total_steps=steps
)
by_decay = layerwise_schedules(
    order, "slanted_triangular", top_rate, decay=args.decay, total_steps=steps
)
print(
    f"{start.name}: peak learning rate per layer group: lr_top {top_rate:g} / "
    f"{args.factor}^(L − l) | lr_top · {args.decay}^(L − l)"
)
for name, depth in depths.items():
    peak_step = max(1, steps // 10)  # STLR peaks after 10% of the steps
    print(
        f"  {name:>12}: {float(by_factor[depth](peak_step)):.3g} | "
        f"{float(by_decay[depth](peak_step)):.3g}"
    )
curve = [float(slanted_triangular(step, 1.0, 100)) for step in (0, 5, 10, 25, 50, 75, 99)]
print(
    "  slanted triangular, share of the peak at 0/5/10/25/50/75/99% of the run: "
    + " ".join(f"{value:.3f}" for value in curve)
)
rates = {group: by_factor[depth] for group, depth in depths.items()}
fine_tune_classifier(
    classifier,
    preprocessor,
    data["train"],
    settings=TrainingSettings(epochs=args.epochs, batch_size=args.batch_size, verbose=args.verbose),
    optimizer=lambda total_steps: DiscriminativeOptimizer(
        classifier, decoupled_adamw, rates, global_clipnorm=1.0
    ),
)
accuracy = evaluate_classifier(classifier, preprocessor, data["test"])["accuracy"]
print(f"  discriminative rates (factor {args.factor:g}): test accuracy {accuracy:.4f}")

# %% The comparison: how fast each layer moves, and how far from the pretrained weights.
# Full fine-tuning at the discriminative rows' top rate (each start's, set above): each Δ is
# then read at equal top rates.
# Each start's own rows, run on it alone: the factor it chose (where not `--factor`), and full
# fine-tuning at its own chosen rate (where that is not the shared top rate).
own = {}
for each in starts:
    rows = own.setdefault(each.name, [])
    chosen = chosen_factor(each.name, FALLBACK_FACTOR)
    print(f"discriminative factor for {each.name}: {chosen.source}")
    if chosen.recorded and chosen.value["factor"] != args.factor:
        factor = chosen.value["factor"]
        rows.append(
            (
                f"discriminative_lr factor={factor:g} (chosen: {each.name})",
                recipes.discriminative_learning_rates,
                {"factor": factor},
            )
        )
    # L2-SP's and EWC's λ as each start's anchors study chose it (at its full fine-tuning
    # rate), where that is not `--strength`.
    for method, recipe in (("l2_sp", recipes.l2_sp), ("ewc", recipes.ewc)):
        strength = chosen_strength(each.name, method, args.strength)
        print(f"{method} λ for {each.name}: {strength.source}")
        if strength.recorded and strength.value["strength"] != args.strength:
            value = strength.value["strength"]
            label = f"{method} λ={value:g} (chosen: {each.name})"
            rows.append((label, recipe, {"strength": value}))
    if own_full_rates[each.name] != each.learning_rate("full"):
        rate = own_full_rates[each.name]
        print(f"{each.name}: full fine-tuning also at its own chosen rate, {rate:g}")
        rows.append(("full_chosen_rate", recipes.full_fine_tuning, {"learning_rate": rate}))
shared = [
    ("full", recipes.full_fine_tuning, {}),
    ("discriminative_lr", recipes.discriminative_learning_rates, {"factor": args.factor}),
    ("layerwise_decay", recipes.discriminative_learning_rates, {"decay": args.decay}),
    ("l2_sp", recipes.l2_sp, {"strength": args.strength}),
    ("ewc", recipes.ewc, {"strength": args.strength}),
]
rows = each_start(starts, shared, own)
compare_each_start(select_each_start(parser, args, rows), starts, data, args)
