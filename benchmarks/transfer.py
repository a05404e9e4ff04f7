"""Does pretraining transfer? lab01's masked encoder vs the same architecture from scratch.

Fine-tunes on TREC-6 (question type, 6 classes) with identical settings: (i) the encoder lab01
pretrained with the MLM objective, (ii) the same architecture randomly initialised; 3 seeds each,
test accuracy as mean ± sd. Then one seed from each pretraining snapshot lab01 kept (after 1, 2,
4, 8 checkpoint intervals), to show how the effect grows with pretraining steps.

The head: mean of the top layer over real tokens → dropout → Dense(6) (the pooler is not trained
by MLM, so [CLS] pooling would start from noise). AdamW with 10% warmup and linear decay.
ULMFiT (Howard & Ruder 2018) saw TREC-6 error fall from 10.67% to 5.69% with pretraining.

    python -m benchmarks.transfer [--pretrained saved_models/lab01_masked] [--seeds 3]

The last line is JSON with `pretrained_acc`, `random_acc`, `seeds` (and sd, per-step results).
"""

import argparse
import json
import os
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from kbert.data import read_trec  # noqa: E402
from kbert.data.trec import COARSE_LABELS  # noqa: E402
from kbert.models import Encoder  # noqa: E402
from kbert.text import BertPreprocessor, WordPieceTokenizer  # noqa: E402
from kbert.train import LearningRateSchedule  # noqa: E402


def classifier(encoder, num_classes, dropout=0.1):
    sequence = encoder.output["sequence_output"]
    mask = keras.ops.cast(encoder.input["padding_mask"], sequence.dtype)[:, :, None]
    pooled = keras.ops.sum(sequence * mask, axis=1) / keras.ops.maximum(
        keras.ops.sum(mask, axis=1), 1.0)
    logits = keras.layers.Dense(num_classes)(keras.layers.Dropout(dropout)(pooled))
    return keras.Model(encoder.input, logits)


def datasets(preprocessor, data_dir, batch_size, train_examples=0):
    labels = {name: index for index, name in enumerate(COARSE_LABELS)}
    out = []
    for split in ("train", "test"):
        texts, names = read_trec(split, data_dir=data_dir)
        if split == "train" and train_examples:
            texts, names = texts[:train_examples], names[:train_examples]
        y = np.array([labels[n] for n in names], "int32")
        x = {k: np.asarray(v) for k, v in preprocessor(tf.constant(texts)).items()}
        dataset = tf.data.Dataset.from_tensor_slices((x, y))
        if split == "train":
            dataset = dataset.shuffle(len(texts), seed=0, reshuffle_each_iteration=True)
        out.append(dataset.batch(batch_size).prefetch(tf.data.AUTOTUNE))
    return out[0], out[1]


def fine_tune(encoder, train, test, steps_per_epoch, args, seed):
    keras.utils.set_random_seed(seed)
    model = classifier(encoder, len(COARSE_LABELS))
    total = args.epochs * steps_per_epoch
    schedule = LearningRateSchedule("warmup_linear_decay", peak_learning_rate=args.learning_rate,
                                    total_steps=total, warmup_steps=total // 10)
    model.compile(optimizer=keras.optimizers.AdamW(schedule, weight_decay=0.01),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    start = time.perf_counter()
    model.fit(train, epochs=args.epochs, verbose=0)
    seconds = time.perf_counter() - start
    accuracy = model.evaluate(test, verbose=0, return_dict=True)["accuracy"]
    return float(accuracy), seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pretrained", default="saved_models/lab01_masked",
                        help="lab01's output folder (encoder.keras, vocab.txt)")
    parser.add_argument("--snapshots", default="runs/lab01/masked/snapshots",
                        help="lab01's encoder snapshots ('' to skip the per-step runs)")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--sequence-length", type=int, default=64)
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument("--train-examples", type=int, default=0,
                        help="use only the first N training questions (0 = all; smoke tests)")
    args = parser.parse_args()

    folder = Path(args.pretrained)
    if not (folder / "encoder.keras").is_file() or not (folder / "vocab.txt").is_file():
        raise ValueError(f"{folder} must hold encoder.keras and vocab.txt: run "
                         "labs/lab01_pretraining.py --part masked first")
    config = keras.models.load_model(folder / "encoder.keras").config
    if args.sequence_length > config.max_sequence_length:
        raise ValueError(f"--sequence-length {args.sequence_length} is above the encoder's "
                         f"max_sequence_length={config.max_sequence_length}")
    tokenizer = WordPieceTokenizer(str(folder / "vocab.txt"))
    preprocessor = BertPreprocessor(tokenizer, sequence_length=args.sequence_length)
    train, test = datasets(preprocessor, args.data_dir, args.batch_size, args.train_examples)
    steps_per_epoch = int(train.cardinality())

    def pretrained(path=folder / "encoder.keras"):
        return keras.models.load_model(path)

    def random_init(seed):
        keras.utils.set_random_seed(1000 + seed)
        return Encoder.from_config(pretrained().get_config())

    rows = {"pretrained": [], "random": []}
    for seed in range(args.seeds):
        for kind, build in (("pretrained", pretrained), ("random", lambda s=seed: random_init(s))):
            accuracy, seconds = fine_tune(build(), train, test, steps_per_epoch, args, seed)
            rows[kind].append(accuracy)
            print(f"seed {seed} {kind:10s} TREC-6 test accuracy {accuracy:.4f} "
                  f"({seconds:.0f} s)", flush=True)

    by_steps = {}
    snapshots = Path(args.snapshots) if args.snapshots else None
    if snapshots and snapshots.is_dir():
        for path in sorted(snapshots.glob("step_*.keras"),
                           key=lambda p: int(p.stem.split("_")[1])):
            steps = int(path.stem.split("_")[1])
            accuracy, _ = fine_tune(pretrained(path), train, test, steps_per_epoch, args, 0)
            by_steps[steps] = accuracy
            print(f"pretrained for {steps:5d} steps: TREC-6 test accuracy {accuracy:.4f}",
                  flush=True)

    summary = {kind: (float(np.mean(v)), float(np.std(v, ddof=1)) if len(v) > 1 else 0.0)
               for kind, v in rows.items()}
    print(f"\nTREC-6 test accuracy over {args.seeds} seeds: pretrained "
          f"{summary['pretrained'][0]:.4f} ± {summary['pretrained'][1]:.4f}, from scratch "
          f"{summary['random'][0]:.4f} ± {summary['random'][1]:.4f}")
    print(json.dumps({"pretrained_acc": round(summary["pretrained"][0], 4),
                      "random_acc": round(summary["random"][0], 4),
                      "seeds": args.seeds,
                      "pretrained_sd": round(summary["pretrained"][1], 4),
                      "random_sd": round(summary["random"][1], 4),
                      "pretrained_runs": rows["pretrained"], "random_runs": rows["random"],
                      "by_pretraining_steps": by_steps}))


if __name__ == "__main__":
    main()
