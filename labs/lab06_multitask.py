"""Lab 6: more signal — multitask fine-tuning with an auxiliary LM loss, and sequential adaptation.

Reproduces hands-on #6 of the NAACL 2019 tutorial "Transfer Learning in NLP" (§4.3): the
classifier and the language model share one encoder, and fine-tuning minimises
1.0 · classification loss + 0.5 · language-modelling loss on the same inputs, so the model keeps
modelling the language while it learns the task (the tutorial: "improving over single-task").
For lab01's causal model the LM loss scores the same forward pass the classifier reads (the
tutorial's setting). MiniLM-L6 is bidirectional: its auxiliary loss is masked LM on a second,
masked pass (15%, 80/10/10), so the classifier never sees [MASK]; it ships no MLM head, so that
head starts from scratch here. A third row anneals the LM weight linearly from 0.5 to 0 over
the run (`kbert.train.LossWeightAnnealing`), and a fourth adapts sequentially: one epoch on an
intermediate task (SST-2 sentiment) before the target (Phang et al. 2018's STILTs).

`kbert.models.MultitaskModel` holds the heads and weights; for several supervised tasks with
per-step task sampling see `kbert.data.multitask_dataset` (shown at the end on TREC-6 + SST-2).

What it should show: whether the auxiliary LM loss and the intermediate task help on TREC-6
over single-task fine-tuning. Report what you see, including no gain.

    python labs/lab06_multitask.py
    python labs/lab06_multitask.py --starts lab01 --seeds 3 --language-model-weight 0.5
"""

from kbert.startup import quiet_tensorflow  # noqa: E402

quiet_tensorflow()

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from kbert.cli.adaptation_lab import comparison_main  # noqa: E402
from kbert.data import load_classification_task, multitask_dataset  # noqa: E402
from kbert.data.classification_dataset import classification_dataset  # noqa: E402
from kbert.layers import ClassificationHead  # noqa: E402
from kbert.models import MultitaskModel  # noqa: E402
from kbert.train import count_batches, fine_tuning_optimizer  # noqa: E402


# %% The comparison: single task, + LM loss, + annealed LM loss, intermediate task first.
def variants(args):
    weight = args.language_model_weight
    return [
        ("full", "full", {}),
        ("multitask", "multitask", {"language_model_weight": weight}),
        (
            "multitask_annealed",
            "multitask",
            {"language_model_weight": weight, "language_model_final_weight": 0.0},
        ),
        ("sequential", "sequential", {"intermediate_task": "sst2", "data_dir": args.data_dir}),
    ]


# %% Two supervised tasks on one encoder, one task sampled per step.
def two_tasks_sampled_per_step(start, data, args):
    encoder, preprocessor = start.load()
    sst2 = load_classification_task(
        "sst2", "train", data_dir=args.data_dir, max_examples=len(data["train"])
    )
    tasks = {"trec": data["train"], "sst2": sst2}
    model = MultitaskModel(
        encoder,
        {
            name: ClassificationHead(len(examples.label_names), pooling=start.pooling)
            for name, examples in tasks.items()
        },
    )
    batches = {
        name: classification_dataset(
            preprocessor,
            examples.texts,
            examples.text_pairs,
            examples.labels,
            args.batch_size,
            training=True,
        )
        for name, examples in tasks.items()
    }
    # Length-bucketed batches have unknown cardinality: count them for proportional sampling.
    sizes = {name: count_batches(dataset) for name, dataset in batches.items()}
    steps = sum(sizes.values())
    known = {
        name: dataset.apply(tf.data.experimental.assert_cardinality(sizes[name]))
        for name, dataset in batches.items()
    }
    mixed = multitask_dataset(known, sampling="temperature", temperature=2.0, num_steps=steps)
    model.compile(optimizer=fine_tuning_optimizer(steps, 1e-4))
    history = model.fit(mixed, epochs=1, verbose=0)
    test = data["test"]
    logits = model.predict(
        classification_dataset(preprocessor, test.texts, batch_size=64), verbose=0
    )["trec"]
    accuracy = float(np.mean(np.argmax(logits, -1) == np.asarray(test.labels)))
    return {
        name: round(float(values[-1]), 4)
        for name, values in history.history.items()
        if name.endswith("accuracy")
    } | {"trec_test_accuracy": round(accuracy, 4)}


def print_two_tasks(starts, data, args):
    start = starts[-1]
    print(
        f"{start.name}, TREC-6 + SST-2 heads on one encoder, tasks sampled per step "
        f"(temperature 2), one pass over both: {two_tasks_sampled_per_step(start, data, args)}"
    )


def main():
    comparison_main(
        __doc__,
        variants,
        "runs/lab06_multitask",
        after=print_two_tasks,
        add_arguments=lambda parser: parser.add_argument(
            "--language-model-weight", type=float, default=0.5
        ),
    )


if __name__ == "__main__":
    main()
