"""Lab 16: parameter-efficient fine-tuning: LoRA, prefix tuning and prompt tuning on TREC-6.

Reproduces the textbook's §20.14 comparison of ways to adapt a frozen pretrained encoder by
training a few new weights beside it — each a wrapper around a block's sublayer, not a flag
inside the block:

- LoRA (Hu et al. 2021): the query and value projections W get a trainable low-rank update
  (α/r)·A·B (rank 8, α 16); B starts at zero, so training starts from the pretrained model,
  and after training the update merges into W for export at no inference cost;
- prefix tuning (Li & Liang 2021): 10 trainable key/value vectors prepended in every layer's
  attention;
- prompt tuning (Lester et al. 2021): 20 trainable input embeddings in front of the text.

Compared with full fine-tuning (the head trains in every row), each method at the peak rate
`benchmarks/adaptation_grid.py --studies peft` chose for it on validation for that start (read
from its record, `adaptation_grid_peft`, which the course makes before this lab; the library's
`DEFAULT_LEARNING_RATES` where it holds no choice, printed beside the table): a method that
trains new weights from zero or random values is sensitive to its rate, and one too low for
3 epochs would read as the method falling behind. The cells first apply LoRA by
hand on each starting point (what trains, one fit, then the update merged into W and the merged
model's logits checked against the unmerged ones), then compare the recipes over seeds.

What it should show: LoRA near full fine-tuning on MiniLM-L6 with well under 1% of the weights
training; prefix and prompt tuning lower at this size and budget (Lester et al. found prompt
tuning matches fine-tuning only for models of billions of parameters).

On lab01's causal start the classifier reads a classification token added to the vocabulary
(the tutorial's hands-on #2), whose embedding row starts as the mean of the others. Full
fine-tuning trains it; these three methods train no embedding (as their papers do, on models
without new tokens), so it stays there, and the head reads that fixed token's final state,
which only the trained weights (LoRA's updates, the prefixes, the prompts) can adapt. The
tutorial trains the embeddings beside its adapters for this reason (hands-on #3); lab03's
tutorial set does, these rows do not.

    python labs/lab16_peft.py
    python labs/lab16_peft.py --starts minilm_l6 --seeds 1   # one seed: a quick look
"""

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import numpy as np

from kbert.data.classification_dataset import classification_dataset
from kbert.models import SequenceClassifier, add_lora, merge_lora
from kbert.train import (
    TrainingSettings,
    fine_tune_classifier,
    format_trainable_report,
    trainable_report,
)
from kbert.train import adaptation_recipes as recipes
from kbert.train.adaptation_comparison import (
    compare_and_print,
    comparison_parser,
    selected_variants,
    starting_points,
    trec_data,
)
from kbert.train.chosen_on_validation import read_record

PEFT_RECORD = "adaptation_grid_peft"
METHODS = ("lora", "prefix_tuning", "prompt_tuning")


def chosen_peft_rates(start_name):
    """The peak rate the PEFT grid chose on validation per method for `start_name`, and where
    it came from: `({method: rate}, source)`, ({}, why) when its record holds no choice."""
    record = read_record(PEFT_RECORD) or {}
    outcome = ((record.get("results") or {}).get("studies") or {}).get("peft", {}).get(start_name)
    if not outcome:
        return {}, f"no choice for {start_name!r} in {PEFT_RECORD}.json: the library's rates"
    rows = {row["label"]: row for row in outcome["rows"]}
    chosen = {m: label for m, label in outcome["chosen"].items() if m in METHODS}
    rates = {method: rows[label]["learning_rate"] for method, label in chosen.items()}
    made_at = f"{PEFT_RECORD}.json ({(record.get('commit') or 'commit unknown')[:10]})"
    return rates, f"{made_at}: " + ", ".join(f"'{label}'" for label in chosen.values())


# %% Settings (`--help` lists them), TREC-6 and the starting points.
parser = comparison_parser(__doc__.split("\n\n")[0], run_dir="runs/lab16_peft")
parser.add_argument("--rank", type=int, default=8, help="LoRA's r")
parser.add_argument("--alpha", type=float, default=16, help="LoRA's α (the update is α/r·AB)")
parser.add_argument("--prefix-length", type=int, default=10)
parser.add_argument("--prompt-tokens", type=int, default=20)
args = parser.parse_args()
starts = starting_points(parser, args)
data = trec_data(args)
for start in starts:  # each method at the rate validation chose for this start
    rates, source = chosen_peft_rates(start.name)
    start.learning_rates = {**(start.learning_rates or {}), **rates}
    print(f"PEFT rates for {start.name}: {source}")

# %% LoRA by hand on each starting point: train the low-rank updates, then merge them into W.
for start in starts:
    encoder, preprocessor = start.load()
    # A new encoder: the same weights, the query and value projections wrapped in LoRA, and
    # only the low-rank updates trainable.
    encoder = add_lora(encoder, rank=args.rank, alpha=args.alpha)
    num_classes = len(data["train"].label_names)
    classifier = SequenceClassifier(encoder, num_classes, pooling=start.pooling)
    print(f"{start.name}, trainable weights with LoRA rank {args.rank}:")
    print(format_trainable_report(trainable_report(classifier)))
    fine_tune_classifier(
        classifier,
        preprocessor,
        data["train"],
        settings=TrainingSettings(
            epochs=args.epochs,
            batch_size=args.batch_size,
            learning_rate=start.learning_rate("lora"),
            verbose=args.verbose,
        ),
    )
    test = classification_dataset(preprocessor, data["test"].texts, batch_size=64)
    before = classifier.predict(test, verbose=0)
    with_lora = classifier.count_params()
    merged = merge_lora(encoder)  # W ← W + (α/r)·A·B: no extra weights or steps to serve
    served = SequenceClassifier(merged, num_classes, pooling=start.pooling)
    for mine, theirs in zip(served.head_layers(), classifier.head_layers(), strict=True):
        mine.set_weights(theirs.get_weights())  # the task's head, trained beside the updates
    after = served.predict(test, verbose=0)
    accuracy = np.mean(before.argmax(-1) == np.asarray(data["test"].labels))
    print(
        f"{start.name}: LoRA test accuracy {accuracy:.4f}; merged into W: {with_lora:,} → "
        f"{served.count_params():,} parameters, max |Δ logit| "
        f"{np.max(np.abs(after - before)):.2e}, same prediction on "
        f"{100 * np.mean(after.argmax(-1) == before.argmax(-1)):.1f}% of the test set"
    )

# %% The comparison over starting points and seeds: which few weights train.
variants = [
    ("full", recipes.full_fine_tuning, {}),
    ("lora", recipes.lora, {"rank": args.rank, "alpha": args.alpha}),
    ("prefix_tuning", recipes.prefix_tuning, {"prefix_length": args.prefix_length}),
    ("prompt_tuning", recipes.prompt_tuning, {"prompt_tokens": args.prompt_tokens}),
]
compare_and_print(selected_variants(parser, args, variants), starts, data, args)
