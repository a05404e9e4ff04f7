"""Lab 2: adapt a pretrained transformer to TREC-6 with a linear head and a classification token.

Reproduces hands-on #2 of the NAACL 2019 tutorial "Transfer Learning in NLP" ("Adapting our
pretrained model") and J&M §11.4.1 (sequence classification with a pretrained encoder), on
TREC-6 question classification (6 classes: ABBR, DESC, ENTY, HUM, LOC, NUM):

(i) lab01's causal transformer, adapted as the tutorial does: a new classification token [CLF]
    is added to the pretrained vocabulary (a new, trainable embedding row) and appended at the
    end of every question; being last, it is the only position a causal model lets see the whole
    question, so a linear layer on its final hidden state classifies.
(ii) MiniLM-L6, a real pretrained BERT: a linear layer on the sentence vector it was trained to
    give (the mean of its tokens, as its `1_Pooling/config.json` says; [CLS] for a BERT with NSP).

Both run first at the hyper-parameters of the tutorial's hands-on on TREC-6 (its slides'
fine-tuning configuration): lr 6.5e-5 after 10 warmup steps, decaying linearly to 0, 3 epochs,
batch 32, dropout 0.1, gradient clipping 1.0, Adam without weight decay, 10% of train held out
for validation (checked after every epoch); test (TREC_10, 500 questions) once at the end. (The
tutorial repository's script, written for IMDb, defaults to batch 16, 500 warmup steps and
clipping 0.25.) Then at the peak rate validation chooses for each part among `--rates`
(half-decade steps up from the tutorial's: a rate tuned for a 50M-parameter model need not suit
lab01's 5M one or MiniLM-L6), everything else unchanged. Each setting is fine-tuned at 3 seeds
(same data split, fresh head and data order per seed): mean ± sd, MiniLM-L6's seed-paired
difference to lab01's model at each part's tutorial and chosen rates, and each part's chosen
rate against the tutorial's (`kbert.metrics.seed_comparison`).

What it should show: the small model lab01 pretrained on a few million words learns the task
but well below the real checkpoint; MiniLM-L6 reaches the mid-to-high 90s (the tutorial reports
~91% with its 50M model pretrained on WikiText-103; ULMFiT 96.4%: cited, not-measured). The
record: docs/results.md#lab02_finetuning. Needs lab01's output first
(`python labs/lab01_pretraining.py` writes saved_models/lab01_causal), or run `--parts ii`.

    python labs/lab02_finetuning.py                  # both parts, the tutorial's rate and two more
    python labs/lab02_finetuning.py --rates 6.5e-5   # the tutorial's settings only
    python labs/lab02_finetuning.py --parts ii --dtype mixed_bfloat16
"""

import argparse
import json
from pathlib import Path

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import keras

from kbert.arguments import comma_separated
from kbert.checkpoints import load_pretrained, trained_pooling
from kbert.data import load_classification_task
from kbert.metrics import (
    confusion_matrix_png,
    format_difference,
    learning_curve_png,
    majority_accuracy,
    mean_sd,
    over_seeds,
    paired_difference,
)
from kbert.models import SequenceClassifier, grow_vocabulary
from kbert.run_records import add_record_argument, record_if_requested
from kbert.tasks import evaluate_classifier
from kbert.text import BertPreprocessor, WordPieceTokenizer
from kbert.train import TrainingSettings, fine_tune_classifier

CLASSIFICATION_TOKEN = "[CLF]"


# %% Data: TREC-6, a seeded 10% of train held out for validation.
def load_data(args):
    return {
        split: load_classification_task(
            "trec",
            split,
            data_dir=args.data_dir,
            seed=args.seed,
            max_examples=args.max_train_examples if split == "train" else None,
        )
        for split in ("train", "validation", "test")
    }


# %% Part (i): the tutorial's adaptation of a causal model — a new token, read at the end.
def causal_model_with_classification_token(path, args):
    encoder, tokenizer = load_pretrained(path, dtype=args.dtype)
    if not encoder.config.causal:
        raise ValueError(
            f"{path} holds a bidirectional encoder; part (i) adapts lab01's causal "
            "model (saved_models/lab01_causal)"
        )
    encoder, tokenizer = grow_vocabulary(encoder, tokenizer, [CLASSIFICATION_TOKEN])
    # The packer closes every input with the tokenizer's `sep_token`: make that [CLF], so each
    # row reads `[CLS] question [CLF]`, and pool the last real position.
    tokenizer = WordPieceTokenizer.from_config(
        {**tokenizer.get_config(), "sep_token": CLASSIFICATION_TOKEN}
    )
    length = min(args.sequence_length, encoder.config.max_sequence_length)
    return encoder, BertPreprocessor(tokenizer, sequence_length=length), "last"


# %% Part (ii): a real pretrained BERT, a linear layer on the sentence vector it was trained to
# give (`trained_pooling`: [CLS] for a BERT pretrained with NSP; the token mean for MiniLM-L6, a
# sentence-transformers checkpoint whose own `1_Pooling/config.json` says so).
def pretrained_bert(name, args):
    encoder, tokenizer = load_pretrained(name, dtype=args.dtype)
    preprocessor = BertPreprocessor(tokenizer, sequence_length=args.sequence_length)
    return encoder, preprocessor, trained_pooling(name)


def run_part(part, args, data, seed, learning_rate):
    keras.utils.set_random_seed(seed)
    if part == "i":
        encoder, preprocessor, pooling = causal_model_with_classification_token(
            args.lab01_model, args
        )
        model_name = f"lab01 causal ({args.lab01_model})"
    else:
        encoder, preprocessor, pooling = pretrained_bert(args.bert_model, args)
        model_name = args.bert_model
    classifier = SequenceClassifier(
        encoder, len(data["train"].label_names), pooling=pooling, dropout=args.dropout
    )
    part_dir = Path(args.run_dir) / f"part_{part}" / f"lr_{learning_rate:g}" / f"seed_{seed}"
    part_dir.mkdir(parents=True, exist_ok=True)
    history, seconds = fine_tune_classifier(
        classifier,
        preprocessor,
        data["train"],
        data["validation"],
        settings=TrainingSettings(
            epochs=args.epochs,
            batch_size=args.batch_size,
            learning_rate=learning_rate,
            warmup_steps=args.warmup_steps,
            weight_decay=args.weight_decay,
            seed=seed,
            verbose=args.verbose,
            callbacks=[keras.callbacks.TensorBoard(str(part_dir / "tensorboard"))],
        ),
    )
    test = evaluate_classifier(classifier, preprocessor, data["test"])
    learning_curve_png(
        history.history,
        part_dir / "learning_curve.png",
        title=f"TREC-6, part ({part}): {model_name}, peak rate {learning_rate:g}",
    )
    confusion_matrix_png(
        test["confusion_matrix"],
        test["label_names"],
        part_dir / "confusion_matrix.png",
        title=f"TREC-6 test, part ({part})",
    )
    return {
        "part": part,
        "seed": seed,
        "learning_rate": learning_rate,
        "model": model_name,
        "pooling": pooling,
        "parameters": classifier.count_params(),
        "val_accuracy_per_epoch": [round(v, 4) for v in history.history["val_accuracy"]],
        "test_accuracy": round(test["accuracy"], 4),
        "test_macro_f1": round(test["macro_f1"], 4),
        "train_s": round(seconds, 1),
        "train_examples_per_s": round(len(data["train"]) * args.epochs / seconds, 1),
    }


# %% Over seeds: each setting's mean ± sd, and the real checkpoint's seed-paired lead.
def seed_row(runs):
    """One setting's runs as one row: mean test accuracy and macro-F1 (and their sd), the mean
    final validation accuracy, summed training seconds, the runs under "runs"."""
    first = runs[0]
    finals = [{"final_val_accuracy": run["val_accuracy_per_epoch"][-1]} for run in runs]
    return {
        **{key: first[key] for key in ("part", "learning_rate", "model", "pooling", "parameters")},
        **over_seeds(runs, ("test_accuracy", "test_macro_f1"), digits=4),
        **over_seeds(finals, ("final_val_accuracy",), digits=4),
        "train_s": round(sum(run["train_s"] for run in runs), 1),
        "train_examples_per_s": round(mean_sd([run["train_examples_per_s"] for run in runs])[0], 1),
        "runs": runs,
    }


# %% Choose on validation: each part's peak rate with the best mean final validation accuracy
# (the first listed on a tie); test is read only for the row chosen.
def chosen_rate(rows):
    """The row of `rows` (one part's settings, each a `seed_row`) with the highest mean final
    validation accuracy; the first of equals."""
    best = rows[0]
    for row in rows[1:]:
        if row["final_val_accuracy"] > best["final_val_accuracy"]:
            best = row
    return best


def paired_test_accuracy(one, other):
    """`one` − `other` in test accuracy, paired by seed (points)."""
    return paired_difference(
        [run["test_accuracy"] for run in one["runs"]],
        [run["test_accuracy"] for run in other["runs"]],
    )


def spread(row, key):
    sd = row[f"{key}_sd"]
    return f"{row[key]:.4f}" + ("" if sd is None else f" ± {sd:.4f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--parts", default="i,ii", help="comma-separated: i (lab01's causal model), ii (MiniLM-L6)"
    )
    parser.add_argument(
        "--lab01-model",
        default="saved_models/lab01_causal",
        help="lab01's causal encoder directory (encoder.keras + vocab.txt)",
    )
    parser.add_argument(
        "--bert-model",
        default="minilm_l6",
        help="part (ii)'s checkpoint: minilm_l6 or a Hugging Face BERT directory",
    )
    parser.add_argument(
        "--learning-rate", type=float, default=6.5e-5, help="the tutorial's peak rate"
    )
    parser.add_argument(
        "--rates",
        type=comma_separated(float, minimum=0, strictly_greater=True),
        default=[6.5e-5, 2e-4, 6.5e-4],
        help="comma-separated peak rates validation chooses among, per part (--learning-rate "
        "joins them when absent; pass it alone for the tutorial's settings only)",
    )
    parser.add_argument("--warmup-steps", type=int, default=10)
    parser.add_argument(
        "--weight-decay",
        type=float,
        default=0.0,
        help="decoupled weight decay (the tutorial's Adam has none)",
    )
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument(
        "--sequence-length",
        type=int,
        default=64,
        help="TREC questions average ~13 tokens; the longest fit in 64",
    )
    parser.add_argument(
        "--dtype", default="float32", help="or mixed_bfloat16 (faster on CPUs with AVX512-BF16)"
    )
    parser.add_argument("--max-train-examples", type=int, default=None, help="(smoke tests)")
    parser.add_argument("--data-dir", default=None, help="default: KBERT_DATA_DIR, ../shared/data")
    parser.add_argument("--run-dir", default="runs/lab02")
    parser.add_argument(
        "--seed", type=int, default=0, help="the data split's seed and the first training seed"
    )
    parser.add_argument(
        "--seeds", type=int, default=3, help="training seeds per part (seed, seed + 1, ...)"
    )
    parser.add_argument("--verbose", type=int, default=2)
    add_record_argument(parser)
    args = parser.parse_args()
    parts = [part.strip() for part in args.parts.split(",") if part.strip()]
    if not parts or set(parts) - {"i", "ii"}:
        parser.error(f"--parts must list i and/or ii; received {args.parts!r}")
    if args.seeds < 1:
        parser.error(f"--seeds must be at least 1; received {args.seeds}")
    if "i" in parts and not (Path(args.lab01_model) / "encoder.keras").is_file():
        parser.error(
            f"part (i) needs lab01's causal model at {args.lab01_model}: run "
            "`python labs/lab01_pretraining.py` first, pass --lab01-model, or run "
            "--parts ii"
        )

    rates = list(dict.fromkeys([args.learning_rate, *args.rates]))

    data = load_data(args)
    run_dir = Path(args.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    seeds = range(args.seed, args.seed + args.seeds)
    by_rate = {
        part: [
            seed_row([run_part(part, args, data, seed, rate) for seed in seeds]) for rate in rates
        ]
        for part in parts
    }
    rows = {part: settings[0] for part, settings in by_rate.items()}  # the tutorial's rate
    chosen = {part: chosen_rate(settings) for part, settings in by_rate.items()}
    majority = round(majority_accuracy(data["test"].labels), 4)

    # %% Results table.
    print(
        f"\nTREC-6: train {len(data['train'])}, validation {len(data['validation'])}, "
        f"test {len(data['test'])} (majority class {majority:.4f}); {args.seeds} seed(s)"
    )
    print(
        "part  model                            peak rate  params  final val acc     test acc"
        "          macro-F1          train s  ex/s"
    )
    for part, settings in by_rate.items():
        for r in settings:
            mark = " *" if r is chosen[part] else "  "
            print(
                f"({r['part']:2s}) {r['model'][:32]:32s} {r['learning_rate']:7.2g}{mark} "
                f"{r['parameters'] / 1e6:5.1f}M  "
                f"{spread(r, 'final_val_accuracy'):16s}  {spread(r, 'test_accuracy'):16s}  "
                f"{spread(r, 'test_macro_f1'):16s}  {r['train_s']:7.0f}  "
                f"{r['train_examples_per_s']:5.1f}"
            )
    print("* chosen on validation (the best mean final validation accuracy)")
    results = {
        **rows,
        "majority_accuracy": majority,
        "seeds": args.seeds,
        "rates": rates,
        "by_rate": by_rate,
        "chosen": {
            part: {
                "learning_rate": row["learning_rate"],
                "at_edge": len(rates) > 1 and row["learning_rate"] in (min(rates), max(rates)),
                # What choosing the rate on validation changes against the tutorial's rate.
                "difference_to_tutorial": paired_test_accuracy(row, rows[part]),
            }
            for part, row in chosen.items()
        },
    }
    for part, row in chosen.items():
        print(
            f"({part}) chosen peak rate {row['learning_rate']:g}"
            + (" (at the edge of --rates)" if results["chosen"][part]["at_edge"] else "")
            + ", test accuracy against the tutorial's rate paired by seed (points): "
            + format_difference(results["chosen"][part]["difference_to_tutorial"])
        )
    if set(parts) == {"i", "ii"}:
        # The lesson: the real checkpoint over lab01's small model, paired seed by seed, at the
        # tutorial's rate and at each part's chosen rate.
        results["difference"] = paired_test_accuracy(rows["ii"], rows["i"])
        results["difference_chosen"] = paired_test_accuracy(chosen["ii"], chosen["i"])
        for key, where in (("difference", "tutorial's"), ("difference_chosen", "chosen")):
            print(
                f"{args.bert_model} − lab01 causal at the {where} rates, test accuracy paired "
                f"by seed (points): {format_difference(results[key])}"
            )
    (run_dir / "results.json").write_text(json.dumps(results, indent=1))
    record_if_requested(args, results)
    print(
        json.dumps(
            {
                part: {
                    **{
                        key: rows[part][key]
                        for key in ("pooling", "test_accuracy", "test_accuracy_sd")
                    },
                    "chosen_rate": chosen[part]["learning_rate"],
                    "chosen_test_accuracy": chosen[part]["test_accuracy"],
                }
                for part in parts
            }
        )
    )


if __name__ == "__main__":
    main()
