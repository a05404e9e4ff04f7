"""Long documents: IMDb accuracy per long-input strategy (head, head + tail, sliding windows).

MiniLM-L6 is fine-tuned on IMDb reviews once per way of reading them at training time (head;
head + tail; with `--training ... windows`, every window an example with its review's label,
about 4x the training time) and scored on test reviews longer than the window, read every way
(a head-trained model scored with windows, say), so the table separates what training and
what reading contribute (the record, with its wall time: docs/results.md#long_inputs). Sun et
al. (2019, table 3) found head + tail best on IMDb at 512 tokens (5.42% vs 5.63% error, cited,
not-measured); here the window is shorter (`--sequence-length`, default 128) so more of each
review is cut and the differences are larger.

    python -m benchmarks.long_inputs [--train-examples 1000] [--test-examples 1000] \\
        [--record docs/results/long_inputs.json]

Throughput is test reviews per second of prediction (tokenizing, every window, aggregation),
timed after an untimed pass over 200 reviews has traced the model for that reader.
The last line is JSON with `accuracy` (training strategy → reading strategy → accuracy),
`reviews_per_s`, `windows_per_review` and the settings.
"""

import argparse
import json
import time

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import keras
import numpy as np

from kbert.checkpoints import load_pretrained
from kbert.data import load_classification_task
from kbert.models import SequenceClassifier
from kbert.run_records import add_record_argument, write_run_record
from kbert.tasks import classifier_logits
from kbert.text import BertPreprocessor, LongTextPreprocessor
from kbert.train import TrainingSettings, fine_tune_classifier

TRAINING = {"head": "head", "head_tail": "head_tail", "windows": "window_mean"}
READING = ("head", "head_tail", "window_mean", "window_max")


def reader(tokenizer, strategy, sequence_length):
    if strategy == "head":
        return BertPreprocessor(tokenizer, sequence_length=sequence_length)
    return LongTextPreprocessor(tokenizer, sequence_length=sequence_length, strategy=strategy)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="minilm_l6")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--sequence-length", type=int, default=128)
    parser.add_argument("--train-examples", type=int, default=1000)
    parser.add_argument(
        "--test-examples",
        type=int,
        default=1000,
        help="test reviews longer than the window (the first N of them)",
    )
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=5e-5)
    parser.add_argument(
        "--training", nargs="+", default=["head", "head_tail"], choices=list(TRAINING)
    )
    add_record_argument(parser)  # also pins the files the run reads
    args = parser.parse_args()
    started = time.perf_counter()

    _, tokenizer = load_pretrained(args.model)
    train = load_classification_task(
        "imdb", "train", data_dir=args.data_dir, validation_fraction=0.0
    )
    train = train.subset(range(min(args.train_examples, len(train))))
    test = load_classification_task("imdb", "test", data_dir=args.data_dir)
    lengths = tokenizer(test.texts).row_lengths().numpy() + 2  # with [CLS] and [SEP]
    long_rows = np.flatnonzero(lengths > args.sequence_length)[: args.test_examples]
    test = test.subset(long_rows)
    print(
        f"IMDb: {len(train)} training reviews; {len(test)} test reviews longer than "
        f"{args.sequence_length} tokens (median {int(np.median(lengths[long_rows]))} tokens; "
        f"{np.mean(lengths > args.sequence_length):.1%} of the test set is that long)",
        flush=True,
    )

    accuracy, speed, windows, train_seconds = {}, {}, {}, {}
    for name in args.training:
        keras.utils.set_random_seed(0)
        encoder, _ = load_pretrained(args.model)
        classifier = SequenceClassifier(encoder, 2)
        _, seconds = fine_tune_classifier(
            classifier,
            reader(tokenizer, TRAINING[name], args.sequence_length),
            train,
            settings=TrainingSettings(
                epochs=args.epochs,
                batch_size=args.batch_size,
                learning_rate=args.learning_rate,
                verbose=0,
            ),
        )
        train_seconds[name] = round(seconds, 1)
        accuracy[name] = {}
        for strategy in READING:
            preprocessor = reader(tokenizer, strategy, args.sequence_length)
            classifier_logits(classifier, preprocessor, test.texts[:200])  # traces, untimed
            start = time.perf_counter()
            scored = classifier_logits(classifier, preprocessor, test.texts)
            elapsed = time.perf_counter() - start
            predictions = np.argmax(scored["logits"], axis=-1)
            accuracy[name][strategy] = round(float(np.mean(predictions == test.labels)), 4)
            speed.setdefault(strategy, []).append(len(test) / elapsed)
            windows[strategy] = round(float(np.mean(scored["rows"])), 2)
            print(
                f"trained on {name:9s} read as {strategy:11s}: accuracy "
                f"{accuracy[name][strategy]:.4f} ({len(test) / elapsed:.1f} reviews/s)",
                flush=True,
            )

    summary = {
        "accuracy": accuracy,
        "reviews_per_s": {k: round(float(np.mean(v)), 1) for k, v in speed.items()},
        "windows_per_review": windows,
        "train_seconds": train_seconds,
        "test_reviews": len(test),
        "train_reviews": len(train),
        "sequence_length": args.sequence_length,
        "epochs": args.epochs,
        "model": args.model,
        "head_fraction": 0.25,
        "window_stride": "half a window",
    }
    print(f"\n{'trained on':12s}" + "".join(f"{s:>13s}" for s in READING))
    for name, row in accuracy.items():
        print(f"{name:12s}" + "".join(f"{row[s]:13.4f}" for s in READING))
    if args.record:
        write_run_record(args.record, summary, time.perf_counter() - started)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
