"""Lab 12: sentence-pair classification: entailment (RTE) and paraphrase (MRPC) from MiniLM-L6.

Reproduces J&M §11.4.2: the two sentences are packed into one input, `[CLS] a [SEP] b [SEP]`,
with segment ids 0 and 1 telling them apart, so self-attention compares every word of one with
every word of the other; a linear layer on [CLS] classifies the pair.

- RTE (textual entailment, 2 classes): GLUE metric accuracy; 2,490 training pairs.
- MRPC (paraphrase, 2 classes): GLUE metrics F1 of the paraphrase class and accuracy.

GLUE's test labels are private, so the GLUE dev set is the test set here; a seeded 10% of the
training file is held out for choosing the epoch. Published anchors: BERT-base 66.4 (RTE acc),
88.9 (MRPC F1); MiniLM-L6 H384 (the distilled original) about 63 and 87.

What it should show: a small pretrained encoder learns both tasks well above the majority
baseline (RTE 52.7%, MRPC F1 81.2 for always "paraphrase"), with RTE, the smallest and hardest,
the furthest from the published BERT-base numbers.

    python labs/lab12_pairs.py
    python labs/lab12_pairs.py --tasks rte --epochs 5 --dtype float32
"""

import argparse
import json
from pathlib import Path

from kbert.startup import quiet_tensorflow  # noqa: E402

quiet_tensorflow()

import keras  # noqa: E402

from kbert.checkpoints import load_pretrained  # noqa: E402
from kbert.data import CLASSIFICATION_TASKS, load_classification_task  # noqa: E402
from kbert.metrics import evaluate_classifier  # noqa: E402
from kbert.models import SequenceClassifier  # noqa: E402
from kbert.run_records import add_record_argument, record_if_requested  # noqa: E402
from kbert.text import BertPreprocessor  # noqa: E402
from kbert.train import fine_tune_classifier  # noqa: E402


def run_task(name, args):
    task = CLASSIFICATION_TASKS[name]
    data = {
        split: load_classification_task(
            name,
            split,
            data_dir=args.data_dir,
            seed=args.seed,
            max_examples=args.max_train_examples if split == "train" else None,
        )
        for split in ("train", "validation", "test")
    }
    keras.utils.set_random_seed(args.seed)
    encoder, tokenizer = load_pretrained(args.model, dtype=args.dtype)
    # %% One packed input per pair: the preprocessor gets (texts_a, texts_b).
    preprocessor = BertPreprocessor(tokenizer, sequence_length=args.sequence_length)
    classifier = SequenceClassifier(encoder, len(task.label_names), pooling=args.pooling)
    # Keep the weights of the epoch with the best held-out accuracy.
    best = keras.callbacks.EarlyStopping(
        monitor="val_accuracy", mode="max", patience=args.epochs, restore_best_weights=True
    )
    history, seconds = fine_tune_classifier(
        classifier,
        preprocessor,
        data["train"],
        data["validation"],
        epochs=args.epochs,
        batch_size=args.batch_size,
        learning_rate=args.learning_rate,
        seed=args.seed,
        callbacks=[best],
        verbose=args.verbose,
    )
    positive = task.positive_label if task.metric == "f1" else None
    test = evaluate_classifier(classifier, preprocessor, data["test"], positive_label=positive)
    majority = max(int((data["test"].labels == c).sum()) for c in range(len(task.label_names)))
    return {
        "task": name,
        "metric": task.metric,
        "train": len(data["train"]),
        "test": len(data["test"]),
        "val_accuracy_per_epoch": [round(v, 4) for v in history.history["val_accuracy"]],
        "test_accuracy": round(test["accuracy"], 4),
        "test_f1": round(test["f1"], 4) if "f1" in test else None,
        "majority_accuracy": round(majority / len(data["test"]), 4),
        "train_s": round(seconds, 1),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", default="rte,mrpc", help="comma-separated: rte, mrpc")
    parser.add_argument("--model", default="minilm_l6")
    parser.add_argument("--pooling", default="cls")
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--learning-rate", type=float, default=5e-5)
    parser.add_argument("--sequence-length", type=int, default=128)
    parser.add_argument("--dtype", default="mixed_bfloat16", help="or float32")
    parser.add_argument("--max-train-examples", type=int, default=None, help="(smoke tests)")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--run-dir", default="runs/lab12_pairs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--verbose", type=int, default=2)
    add_record_argument(parser)
    args = parser.parse_args()
    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()]
    if not tasks or set(tasks) - {"rte", "mrpc"}:
        parser.error(f"--tasks must list rte and/or mrpc; received {args.tasks!r}")
    results = [run_task(name, args) for name in tasks]

    # %% Results table (test = GLUE dev).
    print(
        f"\n{args.model}, {args.epochs} epochs, lr {args.learning_rate}, batch "
        f"{args.batch_size}, {args.sequence_length} tokens"
    )
    print("task  train  test  val acc by epoch           test acc  test F1  majority acc  train s")
    for r in results:
        epochs = " ".join(f"{v:.3f}" for v in r["val_accuracy_per_epoch"])
        f1 = f"{r['test_f1']:.4f}" if r["test_f1"] is not None else "   -  "
        print(
            f"{r['task']:4s} {r['train']:6d} {r['test']:5d}  {epochs:25s}  "
            f"{r['test_accuracy']:8.4f}  {f1:7s}  {r['majority_accuracy']:12.4f}  "
            f"{r['train_s']:7.0f}"
        )
    run_dir = Path(args.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "results.json").write_text(json.dumps(results, indent=1))
    record_if_requested(args, {r["task"]: r for r in results})
    print(json.dumps({r["task"]: r for r in results}))


if __name__ == "__main__":
    main()
