"""Does pretraining transfer? A learning curve on TREC-6 from lab01's starts and random init.

The NAACL 2019 tutorial's central lesson (hands-on #1 → #2): an encoder pretrained on unlabelled
text needs far fewer labelled examples than the same architecture trained from scratch. Here
each start fine-tunes on TREC-6 (question type, 6 classes) with {100, 300, 1,000, all}
labelled questions × 3 seeds, with one recipe for every start:

- starts: lab01's causal LM, masked LM and ELECTRA discriminator (pretrained at the same CPU
  budget by `labs/lab01_pretraining.py --part all --budget-minutes M`), and random
  initialisations of both architectures (bidirectional post-norm; causal pre-norm), so each
  pretrained start has its own control;
- head: the top layer read the way each start was trained → dropout 0.1 → Dense(6): a causal
  start (and its random control) at its last real token, the one position that sees the whole
  question; a bidirectional one by the mean over its real tokens (no pretrained start trained
  the pooler or a [CLS] summary);
- AdamW (weight decay 0.01), batch 32, 10% warmup then linear decay, at least 2 epochs and at
  least `--min-steps` steps (120: 100 questions get ~38 epochs, enough to fit them);
- the peak rate is chosen per start and size from `--learning-rates` on 500 held-out training
  questions (never the test set), by seed 0's run (its test score is that seed's point), and
  used for the other seeds at that size: 100 questions at ~38 epochs may want another rate
  than the whole pool at 2;
- subsets: seed s draws the same s-th random subset for every start (a paired comparison).

ULMFiT (Howard & Ruder 2018, fig. 3) shows the same shape on TREC-6: from scratch needs ~10×
more labels to match the pretrained start at 100-1,000 examples.

Reading the result (docs/results.md: `transfer`, `lab01_pretraining*`, `pretraining_recipe`,
`transfer_probes`): each pretrained start is read against the random init of its own
architecture at the same size, with the paired seeds; the headline is declared before the run
(`--headline-size`), not picked by test accuracy. The starts come from lab01's CPU-hour recipe
(`kbert.models.pretraining_models.RECIPE`); `benchmarks.pretraining_recipe` shows what each of
its choices adds, and `benchmarks.transfer_probes` what the frozen layers hold.

    python -m benchmarks.transfer [--pretrained-dir saved_models] [--seeds 3] \\
        [--record docs/results/transfer.json]

Writes the curve to `--figure` (PNG). The last line is JSON with `gaps` (each pretrained start
against its own control at `--headline-size` labels, 300 by default, the size issue #37 names:
means, the gap in points and its seed-paired difference), `seeds`, the learning rates chosen
on validation per size and `curve` (start → size → mean, sd, runs).
"""

import argparse
import json
import time
from pathlib import Path

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import keras
import numpy as np
import tensorflow as tf

from kbert.data import read_trec
from kbert.data.trec import COARSE_LABELS
from kbert.layers import SequencePooling
from kbert.metrics import data_size_curve_png, paired_difference
from kbert.models import Encoder
from kbert.run_records import add_record_argument, write_run_record
from kbert.text import BertPreprocessor, WordPieceTokenizer
from kbert.train import BuildBeforeTracing, LearningRateSchedule
from kbert.train.fused_adamw import FusedAdamW

OBJECTIVES = ("causal", "masked", "electra")
VALIDATION_SIZE = 500  # held out of TREC-6 train for choosing the learning rate


# %% The task head: the top layer read the way the start was trained → Dense(6).
def classifier(encoder, num_classes, dropout=0.1):
    """A causal encoder (and its random control) is read at its last real token, the only
    position that sees the whole question, as a causal LM is trained to use; a bidirectional
    one by the mean of its real tokens (neither MLM nor ELECTRA trains a [CLS] summary)."""
    pooling = "last" if encoder.config.causal else "mean"
    pooled = SequencePooling(pooling)(
        encoder.output["sequence_output"], padding_mask=encoder.input["padding_mask"]
    )  # (batch, hidden)
    logits = keras.layers.Dense(num_classes)(keras.layers.Dropout(dropout)(pooled))
    return keras.Model(encoder.input, logits)


# %% Data: TREC-6 train split into a labelled pool and 500 validation questions; the test set.
def trec_arrays(preprocessor, data_dir):
    labels = {name: index for index, name in enumerate(COARSE_LABELS)}
    arrays = {}
    for split in ("train", "test"):
        texts, names = read_trec(split, data_dir=data_dir)
        x = {k: np.asarray(v) for k, v in preprocessor(tf.constant(texts)).items()}
        arrays[split] = (x, np.array([labels[n] for n in names], "int32"))
    x, y = arrays["train"]
    order = np.random.default_rng(12345).permutation(len(y))
    pick = lambda rows: ({k: v[rows] for k, v in x.items()}, y[rows])  # noqa: E731
    return {
        "pool": pick(order[VALIDATION_SIZE:]),
        "validation": pick(order[:VALIDATION_SIZE]),
        "test": arrays["test"],
    }


def subset(pool, size, seed):
    """The seed-th random subset of `size` labelled questions (all of them when size is 0)."""
    x, y = pool
    if not size or size >= len(y):
        return pool
    rows = np.random.default_rng(seed).permutation(len(y))[:size]
    return {k: v[rows] for k, v in x.items()}, y[rows]


# %% One fine-tuning run: the same recipe for every start.
def fine_tune(encoder, train, evaluation, learning_rate, seed, args):
    keras.utils.set_random_seed(seed)
    model = classifier(encoder, len(COARSE_LABELS))
    x, y = train
    steps_per_epoch = -(-len(y) // args.batch_size)
    epochs = max(args.min_epochs, -(-args.min_steps // steps_per_epoch))
    total = epochs * steps_per_epoch
    schedule = LearningRateSchedule(
        "warmup_linear_decay",
        peak_learning_rate=learning_rate,
        total_steps=total,
        warmup_steps=max(1, total // 10),
    )
    model.compile(
        optimizer=FusedAdamW(schedule, weight_decay=0.01),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    dataset = (
        tf.data.Dataset.from_tensor_slices((x, y))
        .shuffle(len(y), seed=seed, reshuffle_each_iteration=True)
        .batch(args.batch_size)
        .map(trim_padding)
    )
    model.fit(dataset, epochs=epochs, verbose=0, callbacks=[BuildBeforeTracing(dataset)])
    scores = {}
    for name, (ex, ey) in evaluation.items():
        scores[name] = float(
            model.evaluate(ex, ey, batch_size=128, verbose=0, return_dict=True)["accuracy"]
        )
    return scores


def trim_padding(x, y):
    """Cuts a batch to its longest question: TREC-6 averages ~12 tokens, the window is 40."""
    length = tf.reduce_max(tf.reduce_sum(tf.cast(x["padding_mask"], tf.int32), axis=1))
    return {k: v[:, :length] for k, v in x.items()}, y


def load_starts(args):
    """name → (builder(seed) → fresh Encoder, control name). Random starts copy a config."""
    starts, configs = {}, {}
    for objective in args.objectives:
        path = Path(args.pretrained_dir) / f"lab01_{objective}" / "encoder.keras"
        if not path.is_file():
            raise ValueError(
                f"{path} not found: run labs/lab01_pretraining.py --part all "
                "--budget-minutes M first (or pass --objectives / "
                "--pretrained-dir)"
            )
        encoder = keras.models.load_model(path)
        control = "random_causal" if encoder.config.causal else "random_bidirectional"
        configs.setdefault(control, encoder.get_config())
        starts[objective] = (lambda seed, p=path: keras.models.load_model(p), control)
    for control, config in configs.items():

        def random_init(seed, config=config):
            keras.utils.set_random_seed(1000 + seed)
            return Encoder.from_config(config)

        starts[control] = (random_init, control)
    return starts


def vocabulary_path(args):
    paths = [Path(args.pretrained_dir) / f"lab01_{o}" / "vocab.txt" for o in args.objectives]
    texts = {p.read_text(encoding="utf-8") for p in paths}
    if len(texts) != 1:
        raise ValueError(
            f"the starts must share one vocabulary; {', '.join(map(str, paths))} "
            "differ (pretrain them in one lab01 run)"
        )
    return paths[0]


def runs_at_size(name, build, size, data, args):
    """`(test accuracies over seeds, the chosen rate, {rate: validation accuracy})` of one
    start at one size: seed 0 runs at every rate, scored on validation and test; the rate with
    the best validation accuracy is chosen, its seed-0 test score kept, and seeds 1, 2, ... run
    at it."""
    first = {}
    for rate in args.learning_rates:
        first[rate] = fine_tune(
            build(0),
            subset(data["pool"], size, 0),
            {"validation": data["validation"], "test": data["test"]},
            rate,
            0,
            args,
        )
        print(
            f"{name:22s} {size or 'all':>5} labelled, lr {rate:.0e}: validation accuracy "
            f"{first[rate]['validation']:.4f}",
            flush=True,
        )
    rate = max(first, key=lambda r: first[r]["validation"])
    runs = [first[rate]["test"]] + [
        fine_tune(
            build(seed), subset(data["pool"], size, seed), {"test": data["test"]}, rate, seed, args
        )["test"]
        for seed in range(1, args.seeds)
    ]
    scores = {f"{r:.0e}": round(accuracy["validation"], 4) for r, accuracy in first.items()}
    return runs, rate, scores


def summarize(runs):
    return {
        "mean": round(float(np.mean(runs)), 4),
        "sd": round(float(np.std(runs, ddof=1)), 4) if len(runs) > 1 else 0.0,
        "runs": [round(r, 4) for r in runs],
    }


def gaps_at(curve, starts, size):
    """Each pretrained start against its own control at `size` labels (declared in advance:
    no start or size is picked by its test score), with the seed-paired difference (seed s
    draws the same subset for both)."""
    gaps = {}
    for name, (_, control) in starts.items():
        if name == control or str(size) not in curve[name]:
            continue
        pretrained, random = curve[name][str(size)]["mean"], curve[control][str(size)]["mean"]
        gaps[name] = {
            "control": control,
            "pretrained_acc": pretrained,
            "random_acc": random,
            "gap_points": round(100 * (pretrained - random), 1),
            "difference": paired_difference(
                curve[name][str(size)]["runs"], curve[control][str(size)]["runs"]
            ),
        }
    return gaps


def check_arguments(parser, args):
    """Exits with a usage error for seeds < 1, negative sizes or a headline size not run."""
    if args.seeds < 1:
        parser.error(f"--seeds must be >= 1; received {args.seeds}")
    if args.headline_size not in args.sizes:
        parser.error(f"--headline-size {args.headline_size} must be one of --sizes {args.sizes}")
    if any(size < 0 for size in args.sizes):
        parser.error(f"--sizes must be >= 0; received {args.sizes}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--pretrained-dir",
        default="saved_models",
        help="folder with lab01_<objective>/ (encoder.keras, vocab.txt)",
    )
    parser.add_argument("--objectives", nargs="+", default=list(OBJECTIVES), choices=OBJECTIVES)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=[100, 300, 1000, 0],
        help="labelled questions per run (0 = the whole pool, 4,952)",
    )
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument(
        "--headline-size",
        type=int,
        default=300,
        help="labelled questions at which each start's gap to its control is the headline "
        "(declared before the run, never chosen by test accuracy)",
    )
    parser.add_argument("--learning-rates", type=float, nargs="+", default=[3e-4, 1e-3])
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--min-steps", type=int, default=120)
    parser.add_argument("--min-epochs", type=int, default=2)
    parser.add_argument("--sequence-length", type=int, default=40)
    parser.add_argument("--figure", default="docs/results/transfer_curve.png")
    add_record_argument(parser)  # also pins the files the run reads
    args = parser.parse_args()
    check_arguments(parser, args)
    started = time.perf_counter()

    starts = load_starts(args)
    tokenizer = WordPieceTokenizer(str(vocabulary_path(args)))
    preprocessor = BertPreprocessor(tokenizer, sequence_length=args.sequence_length)
    data = trec_arrays(preprocessor, args.data_dir)
    lengths = np.sum(data["pool"][0]["padding_mask"], axis=1)
    print(
        f"TREC-6: {len(data['pool'][1])} pool, {VALIDATION_SIZE} validation, "
        f"{len(data['test'][1])} test questions; {np.mean(lengths == args.sequence_length):.1%}"
        f" of pool questions fill the {args.sequence_length}-token window",
        flush=True,
    )

    # %% The curve: every start × size × seed, test accuracy; the rate per start and size
    # chosen on validation by seed 0's runs.
    curve, chosen, selection = {}, {}, {}
    for name, (build, _) in starts.items():
        curve[name], chosen[name], selection[name] = {}, {}, {}
        for size in args.sizes:
            size_name = str(size or len(data["pool"][1]))
            runs, rate, scores = runs_at_size(name, build, size, data, args)
            curve[name][size_name] = summarize(runs)
            chosen[name][size_name] = f"{rate:.0e}"
            selection[name][size_name] = scores
            print(
                f"{name:22s} {size_name:>5s} labelled (lr {rate:.0e}): test accuracy "
                f"{curve[name][size_name]['mean']:.4f} ± {curve[name][size_name]['sd']:.4f}",
                flush=True,
            )

    sizes = [size or len(data["pool"][1]) for size in args.sizes]
    majority = float(np.mean(data["test"][1] == np.bincount(data["pool"][1]).argmax()))
    data_size_curve_png(
        {name: {s: c["runs"] for s, c in by_size.items()} for name, by_size in curve.items()},
        args.figure,
        title="TREC-6: lab01 starts vs random init (mean ± sd over seeds)",
        baseline=("majority class", majority),
    )
    print(f"\n{'start':22s}" + "".join(f"{s:>22d}" for s in sizes))
    for name in curve:
        print(
            f"{name:22s}"
            + "".join(
                f"{curve[name][str(s)]['mean']:9.4f}±{curve[name][str(s)]['sd']:.3f} "
                f"({chosen[name][str(s)]})"
                for s in sizes
            )
        )
    gaps = gaps_at(curve, starts, args.headline_size)
    summary = {
        "headline_size": args.headline_size,
        "gaps": gaps,
        "seeds": args.seeds,
        "majority_class_acc": round(majority, 4),
        "learning_rates": selection,
        "chosen_learning_rate": chosen,
        "curve": curve,
    }
    for name, gap in gaps.items():
        print(
            f"{name} at {args.headline_size} labels: {gap['pretrained_acc']:.4f} vs "
            f"{gap['control']} {gap['random_acc']:.4f} ({gap['gap_points']:+.1f} points, "
            f"{args.seeds} seeds)"
        )
    if args.record:
        write_run_record(
            args.record, {**summary, "figure": args.figure}, time.perf_counter() - started
        )
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
