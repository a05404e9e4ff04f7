"""Lab 6: more signal — multitask fine-tuning with an auxiliary LM loss.

Reproduces hands-on #6 of the NAACL 2019 tutorial "Transfer Learning in NLP" (§4.3): the
classifier and the language model share one encoder, and fine-tuning minimises
1.0 · classification loss + 0.5 · language-modelling loss on the same inputs, so the model keeps
modelling the language while it learns the task. The tutorial trained it for 6 epochs instead
of 3 ("the validation loss was still decreasing") and reports that it "helped us improve over
single-task full-model fine-tuning", compared with 3-epoch single-task runs. So the comparison
below runs the tutorial's setting (LM weight 0.5 for twice the lab's epochs) beside single-task
full fine-tuning at the lab's epochs (the tutorial's comparison) and at twice as many (the same
budget), and, at the lab's epochs, the LM weight and annealing that the multitask study
chose on validation for each start (read from its record, and run on that start only) where it
studied the lab's number of labelled questions; where it did not, that row runs the tutorial's
weight at the lab's epochs and is labelled a fallback (a weight chosen at another size, for
that study's epochs and rate, is not a choice for this one). For lab01's causal model the LM
loss scores the same forward pass the classifier reads (the tutorial's setting). MiniLM-L6 is bidirectional: its auxiliary loss is
masked LM on a second, masked pass (15%, 80/10/10), so the classifier never sees [MASK]; it
ships no MLM head, so that head starts from scratch here. Sequential adaptation (an
intermediate task before the target, Phang et al. 2018's STILTs) is lab21's, with its control.

`kbert.models.MultitaskModel` holds the heads and weights. The cells below build the
tutorial's model by hand on the causal start (classification head + the causal LM head tied to
the embeddings, the two losses weighted 1.0 and 0.5), then two supervised tasks on one encoder
with one task sampled per step (`kbert.data.multitask_dataset`, TREC-6 + SST-2), then compare
the recipes over starting points and seeds.

What it should show: whether the auxiliary LM loss helps on TREC-6 over single-task
fine-tuning, and how much of the tutorial's gain a single-task run given the
same epochs also gets. Each row's paired difference is to full fine-tuning at its own epochs
(the longer single-task run's, to the shorter one's).
Report what you see, including no gain; the recorded runs are in
docs/results.md#lab06_multitask, and the LM weight and annealing chosen on validation at a few
labelled sizes in docs/results.md#adaptation_grid_multitask.

    python labs/lab06_multitask.py
    python labs/lab06_multitask.py --starts lab01 --seeds 1 --language-model-weight 0.5  # quick
"""

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import numpy as np
import tensorflow as tf

from kbert.data import load_classification_task, multitask_dataset
from kbert.data.classification_dataset import classification_dataset
from kbert.data.multitask_batches import joint_batches
from kbert.layers import ClassificationHead
from kbert.models import CausalLanguageModel, MultitaskModel
from kbert.train import adaptation_recipes as recipes
from kbert.train import count_batches, fine_tuning_optimizer
from kbert.train.adaptation_comparison import (
    comparison_parser,
    starting_points,
    trec_data,
)
from kbert.train.chosen_on_validation import (
    MULTITASK_RECORD,
    Chosen,
    chosen_multitask,
    read_record,
)
from kbert.train.own_choice_comparison import (
    compare_each_start,
    each_start,
    own_choices,
    select_each_start,
)

# The LM weight and annealing that `benchmarks/adaptation_grid.py --studies multitask` chose on
# validation for each start, read from its record (docs/results.md#adaptation_grid_multitask)
# by `kbert.train.chosen_on_validation.chosen_multitask`; where it holds no choice for a start,
# the tutorial's weight 0.5 without annealing.
MULTITASK_FALLBACK = {"language_model_weight": 0.5}


def chosen_at_size(start, size):
    """The grid's choice for `start` where it studied `size` labelled questions; else the
    fallback, saying why. A weight chosen at another size (100 or 300 questions, trained for
    more epochs and at that study's rate) is not a choice for this one."""
    record = read_record(MULTITASK_RECORD) or {}
    studied = (((record.get("results") or {}).get("studies") or {}).get("multitask") or {}).get(
        start
    ) or {}
    if str(size) not in studied:
        sizes = ", ".join(sorted(studied, key=int)) or "none"
        return Chosen(
            dict(MULTITASK_FALLBACK),
            f"no choice for {start!r} at {size} questions in {MULTITASK_RECORD}.json (its sizes: "
            f"{sizes}); the tutorial's weight",
            False,
        )
    return chosen_multitask(start, size, MULTITASK_FALLBACK)


# %% Settings (`--help` lists them), TREC-6 and the starting points.
parser = comparison_parser(__doc__.split("\n\n")[0], run_dir="runs/lab06_multitask")
parser.add_argument(
    "--language-model-weight",
    type=float,
    default=0.5,
    help="the tutorial's LM-loss weight, for the cell by hand and the tutorial's row",
)
args = parser.parse_args()
if not args.language_model_weight >= 0:
    parser.error(f"--language-model-weight must be >= 0; received {args.language_model_weight}")
starts = starting_points(parser, args)
data = trec_data(args)
num_classes = len(data["train"].label_names)
train, test = data["train"], data["test"]


def trec_batches(preprocessor, examples, training):
    return classification_dataset(
        preprocessor,
        examples.texts,
        examples.text_pairs,
        examples.labels if training else None,
        args.batch_size if training else 64,
        training=training,
    )


# %% The tutorial's hands-on #6 by hand: classification 1.0 + causal LM 0.5 on one forward pass.
causal = [start for start in starts if start.objective == "causal"]
if not causal:
    print("(the auxiliary causal-LM loss by hand needs a causal start: add lab01 to --starts)")
else:
    start = causal[0]
    encoder, preprocessor = start.load()
    model = MultitaskModel(
        encoder,
        {"trec": ClassificationHead(num_classes, pooling=start.pooling)},
        loss_weights={"trec": 1.0},
        language_model=CausalLanguageModel(encoder),  # its decoder is the tied embeddings
        language_model_weight=args.language_model_weight,
    )
    batches = joint_batches(trec_batches(preprocessor, train, training=True), "trec")
    steps = count_batches(batches) * args.epochs
    model.compile(optimizer=fine_tuning_optimizer(steps, start.learning_rate("multitask")))
    history = model.fit(batches, epochs=args.epochs, verbose=args.verbose).history
    logits = model.predict(trec_batches(preprocessor, test, training=False), verbose=0)["trec"]
    accuracy = float(np.mean(np.argmax(logits, -1) == np.asarray(test.labels)))
    losses = {name: round(values[-1], 4) for name, values in history.items() if "loss" in name}
    print(f"{start.name}, classifier + LM loss by hand: last-epoch losses {losses}")
    print(f"  test accuracy {accuracy:.4f}")

# %% Two supervised tasks on one encoder, one task sampled per step (temperature 2).
start = starts[-1]
encoder, preprocessor = start.load()
tasks = {
    "trec": train,
    "sst2": load_classification_task(
        "sst2", "train", data_dir=args.data_dir, max_examples=len(train)
    ),
}
model = MultitaskModel(
    encoder,
    {
        name: ClassificationHead(len(examples.label_names), pooling=start.pooling)
        for name, examples in tasks.items()
    },
)
batches = {
    name: trec_batches(preprocessor, examples, training=True) for name, examples in tasks.items()
}
# Length-bucketed batches have unknown cardinality: count them for proportional sampling.
sizes = {name: count_batches(dataset) for name, dataset in batches.items()}
known = {
    name: dataset.apply(tf.data.experimental.assert_cardinality(sizes[name]))
    for name, dataset in batches.items()
}
steps = sum(sizes.values())
mixed = multitask_dataset(known, sampling="temperature", temperature=2.0, num_steps=steps)
model.compile(optimizer=fine_tuning_optimizer(steps, 1e-4))
history = model.fit(mixed, epochs=1, verbose=0).history
logits = model.predict(trec_batches(preprocessor, test, training=False), verbose=0)["trec"]
two_tasks = {
    name: round(float(values[-1]), 4)
    for name, values in history.items()
    if name.endswith("accuracy")
} | {
    "trec_test_accuracy": round(float(np.mean(np.argmax(logits, -1) == np.asarray(test.labels))), 4)
}
print(
    f"{start.name}, TREC-6 + SST-2 heads on one encoder, tasks sampled per step "
    f"(temperature 2), one pass over both: {two_tasks}"
)

# %% The comparison: the tutorial's setting, single task at its epochs and at the lab's, and the
# LM weight chosen on validation.
longer = 2 * args.epochs  # the tutorial: 6 epochs instead of 3
multitask_chosen, sources = own_choices(
    "multitask_chosen",
    recipes.multitask,
    starts,
    lambda name: chosen_at_size(name, len(data["train"])),
)
for name, source in sources.items():
    print(f"multitask setting chosen on validation for {name}: {source}")
shared = [
    ("full", recipes.full_fine_tuning, {}),
    ("full_longer", recipes.full_fine_tuning, {"epochs": longer}),
    (
        "multitask_tutorial",
        recipes.multitask,
        {"language_model_weight": args.language_model_weight, "epochs": longer},
    ),
]
baselines = {
    "full_longer": "full",
    "multitask_tutorial": "full_longer",
    **{label: "full" for rows in multitask_chosen.values() for label, _, _ in rows},
}
rows = each_start(starts, shared, multitask_chosen)
compare_each_start(select_each_start(parser, args, rows), starts, data, args, baselines)
