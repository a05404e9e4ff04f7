"""What did pretraining put in each layer? Linear probes on TREC-6 for lab01's starts vs random init.

Evidence beside `benchmarks/transfer.py`'s learning curve: when a pretrained start fine-tunes no
better than random init, is its representation poorer, or is it only harder to fine-tune? Each
encoder stays frozen; every layer's mean-pooled vector of a question feeds a softmax-regression
probe (`kbert.analysis.train_linear_probe`) trained on `--train-size` labelled TREC-6 questions
and scored on the 500 test questions. Each start is compared with random weights of its own
architecture (one control per distinct config, seeds 0..`--control-seeds`-1, mean), the
control of Hewitt & Liang (2019): random contextual features plus a trained probe already decode
a lot, so what counts is the distance above that line. Each layer is read the way its encoder
was trained: a causal one (and its control) at the last real token, the one position that sees
the whole question; a bidirectional one by the mean over its real tokens. The layer a start is
summed up by is chosen on `--validation-size` held-out training questions (never the test
set); its test accuracy, and its control's at the same layer, are reported.

    python -m benchmarks.transfer_probes \\
        --start causal=saved_models/lab01_causal --start masked=saved_models/lab01_masked \\
        [--train-size 1000] [--record docs/results/transfer_probes.json]

Writes a PNG of accuracy per layer (`--figure`). The last line is JSON: `probe_accuracy`
(start → per-layer accuracies, embeddings first), `control_of` (start → its control's name),
`validation_accuracy` (the same per layer on the held-out questions), `best_layer_gain` (start →
the layer validation chose, its test accuracy minus its control's at that layer),
`majority_class_acc` and the settings.
"""

import argparse
import json
import time
from pathlib import Path

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import keras
import numpy as np

from kbert.analysis.figures import layer_curves_png
from kbert.analysis.probing import layerwise_probe_accuracy, majority_accuracy
from kbert.data import read_trec
from kbert.data.trec import COARSE_LABELS
from kbert.models import Encoder, extract_layer_features
from kbert.run_records import add_record_argument, write_run_record
from kbert.text import BertPreprocessor, WordPieceTokenizer


def pooling_of(encoder):
    """How a layer of `encoder` is read: a causal encoder at its last real token, the only one
    that sees the whole text; a bidirectional one by the mean over real tokens."""
    return "last" if encoder.config.causal else "mean"


def parse_start(text):
    name, separator, directory = text.partition("=")
    path = Path(directory)
    if not separator or not name or not (path / "encoder.keras").is_file():
        raise argparse.ArgumentTypeError(
            f"--start must be NAME=DIR with DIR/encoder.keras (a lab01 save); received {text!r}"
        )
    return name, path


def load_starts(starts):
    """(name → encoder, name → its control's name, [(control name, config)], vocab.txt path).

    One control per architecture: starts that differ only in their weights share it.
    """
    encoders, control_of, controls, vocabularies = {}, {}, {}, set()
    for name, path in starts:
        encoders[name] = keras.models.load_model(path / "encoder.keras")
        vocabularies.add((path / "vocab.txt").read_text(encoding="utf-8"))
        config = encoders[name].get_config()
        architecture = {k: v for k, v in config.items() if k not in ("name", "trainable")}
        key = json.dumps(architecture, sort_keys=True, default=str)
        if key not in controls:
            shape = "causal" if config["causal"] else "bidirectional"
            norm = "pre" if config["norm_first"] else "post"
            controls[key] = (f"random_{shape}_{norm}_ln", config)
        control_of[name] = controls[key][0]
    if len(vocabularies) != 1:
        raise ValueError("the starts must share one vocabulary (pretrain them in one lab01 run)")
    return encoders, control_of, list(controls.values()), Path(starts[0][1]) / "vocab.txt"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--start", action="append", type=parse_start, required=True)
    parser.add_argument("--train-size", type=int, default=1000)
    parser.add_argument(
        "--validation-size",
        type=int,
        default=500,
        help="held-out training questions (not among the probes' own) the reported layer is "
        "chosen on",
    )
    parser.add_argument("--control-seeds", type=int, default=3)
    parser.add_argument(
        "--sequence-length", type=int, default=40, help="at most the starts' position table"
    )
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--figure", default="docs/results/transfer_probes.png")
    add_record_argument(parser)  # also pins the files the run reads
    args = parser.parse_args()
    if args.train_size < 10 or args.control_seeds < 1 or args.validation_size < 10:
        parser.error(
            "--train-size and --validation-size must be >= 10 and --control-seeds >= 1; "
            f"received {args.train_size}, {args.validation_size}, {args.control_seeds}"
        )
    started = time.perf_counter()

    encoders, control_of, controls, vocabulary = load_starts(args.start)
    # Questions are cut to the shortest position table among the starts (lab01's block length).
    length = min([args.sequence_length] + [e.config.max_sequence_length for e in encoders.values()])
    preprocessor = BertPreprocessor(WordPieceTokenizer(str(vocabulary)), sequence_length=length)
    index = {name: i for i, name in enumerate(COARSE_LABELS)}
    all_texts, all_names = read_trec("train", data_dir=args.data_dir)
    if args.train_size + args.validation_size > len(all_texts):
        parser.error(
            f"--train-size plus --validation-size must fit in TREC-6's {len(all_texts)} training "
            f"questions (the held-out ones are never trained on); received {args.train_size} + "
            f"{args.validation_size}"
        )
    order = np.random.default_rng(12345).permutation(len(all_texts))
    rows, held_out = order[: args.train_size], order[-args.validation_size :]
    train_texts = [all_texts[i] for i in rows]
    train_labels = np.array([index[all_names[i]] for i in rows])
    validation_texts = [all_texts[i] for i in held_out]
    validation_labels = np.array([index[all_names[i]] for i in held_out])
    test_texts, test_names = read_trec("test", data_dir=args.data_dir)
    test_labels = np.array([index[name] for name in test_names])

    def probe(encoder):
        """Per layer: (validation accuracy, test accuracy) of one probe trained on the
        training questions, the layer read at `pooling_of(encoder)`."""
        pooling = pooling_of(encoder)
        features = {
            split: extract_layer_features(encoder, preprocessor, texts, pooling=pooling)
            for split, texts in (
                ("train", train_texts),
                ("validation", validation_texts),
                ("test", test_texts),
            )
        }
        return [
            layerwise_probe_accuracy(
                features["train"], train_labels, features[split], labels, len(COARSE_LABELS)
            )
            for split, labels in (("validation", validation_labels), ("test", test_labels))
        ]

    accuracy, validation = {}, {}
    for name, encoder in encoders.items():
        on_validation, on_test = probe(encoder)
        accuracy[name] = [round(a, 4) for a in on_test]
        validation[name] = [round(a, 4) for a in on_validation]
        print(f"{name:28s} " + " ".join(f"{a:.3f}" for a in accuracy[name]), flush=True)
    for control, config in controls:
        runs = []
        for seed in range(args.control_seeds):
            keras.utils.set_random_seed(1000 + seed)
            runs.append(probe(Encoder.from_config(config)))
        validation[control] = [round(float(a), 4) for a in np.mean([r[0] for r in runs], axis=0)]
        accuracy[control] = [round(float(a), 4) for a in np.mean([r[1] for r in runs], axis=0)]
        print(f"{control:28s} " + " ".join(f"{a:.3f}" for a in accuracy[control]), flush=True)

    gains = {}
    for name, control in control_of.items():
        best = int(np.argmax(validation[name]))  # chosen on held-out questions, not on test
        gains[name] = {
            "layer": best,
            "chosen_on": "validation",
            "accuracy": accuracy[name][best],
            "control": accuracy[control][best],
            "gain_points": round(100 * (accuracy[name][best] - accuracy[control][best]), 1),
        }
    styles = {control: {"linestyle": "--"} for control, _ in controls}
    layer_curves_png(
        accuracy,
        args.figure,
        title=f"TREC-6 linear probes ({args.train_size} questions), frozen encoders",
        ylabel="test accuracy",
        styles=styles,
    )
    summary = {
        "probe_accuracy": accuracy,
        "validation_accuracy": validation,
        "control_of": control_of,
        "best_layer_gain": gains,
        "majority_class_acc": round(majority_accuracy(train_labels, test_labels), 4),
        "train_size": len(train_labels),
        "test_size": len(test_labels),
        "control_seeds": args.control_seeds,
        "pooling": {name: pooling_of(encoder) for name, encoder in encoders.items()},
        "validation_size": len(validation_labels),
        "figure": args.figure,
    }
    if args.record:
        write_run_record(args.record, summary, time.perf_counter() - started)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
