"""Lab 14: extractive question answering on SQuAD v1.1 (NAACL tutorial §5.B, J&M §11.4.4).

The question is segment A, the paragraph segment B: `[CLS] question [SEP] context [SEP]`. Two
vectors learned during fine-tuning score every context token as the answer's start and as its
end; the answer is the best-scoring span with end >= start and at most 30 tokens, mapped back to
the characters of the original paragraph. Paragraphs longer than the 384-token input are cut
into windows that overlap by 128 tokens, and each window's candidates compete on score.

Data: only SQuAD's dev file ships in the data directory here, so by default the lab trains on
its first 40 articles (8,981 questions, the last 4 articles of them held out to choose the
rate) and evaluates on the other 8 (1,589) — a "dev-split",
not the official dev score. With `train-v1.1.json` present (or downloadable) it uses the standard
train/dev split. Scores use the official v1.1 normalisation, max over the gold answers.

The peak rate is chosen on validation: the last `--validation-articles` (4) training articles
are held out, and the first seed fine-tunes at each of `--learning-rates` — BERT's SQuAD rate
5e-5 (Devlin et al. 2019, the source's setting), the lab's earlier 2e-4, and 5e-4 above it, for a
model a fifth of BERT-base's size — on the rest. The rate with the best validation F1 is chosen
(every rate's test scores are printed beside, never used to choose); that run is the first seed
at the chosen rate, and the other seeds train at it (`kbert.train.rate_on_validation`). Each of `--seeds` runs (three by default;
seeds `--seed`, `--seed` + 1, ...) fine-tunes a fresh copy of the pretrained encoder with a new
head on the same questions; the seed draws the head's weights and the order of the training
windows. The lab reports EM and F1 as mean ± sd over the runs (`kbert.metrics.seed_comparison`),
each run beside them, and writes the first seed's predictions.

What it should show: a small pretrained encoder learns to point at answer spans from a few
thousand questions (the record: docs/results.md#lab14_qa). Published anchors on the official
split, cited (not-measured): BERT-base 80.8 EM / 88.5 F1 and MiniLM-L6-H384 (distilled
original, cased) about 73 EM / 82 F1 with 88k training questions (not-measured).

    python labs/lab14_qa.py
    python labs/lab14_qa.py --seeds 1 --epochs 1 --max-train-examples 500 --max-eval-examples 200
"""

import argparse
import json
import statistics
from pathlib import Path

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import keras

from kbert.arguments import comma_separated
from kbert.checkpoints import load_pretrained
from kbert.data.squad import load_squad
from kbert.metrics.seed_comparison import over_seeds
from kbert.models import QuestionAnswerer
from kbert.run_records import add_record_argument, record_if_requested
from kbert.tasks import evaluate_question_answerer
from kbert.train import TrainingSettings
from kbert.train.rate_on_validation import rate_then_seeds
from kbert.train.token_task_fine_tuning import fine_tune_question_answerer


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--model",
        default="minilm_l6",
        help="a checkpoint name or directory (see kbert.checkpoints)",
    )
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument(
        "--learning-rates",
        type=comma_separated(float, minimum=0, strictly_greater=True),
        default=[5e-5, 2e-4, 5e-4],
        help="peak rates; the first seed trains at each and validation F1 chooses one",
    )
    parser.add_argument(
        "--validation-articles",
        type=int,
        default=4,
        help="training articles held out (the last ones) to choose the rate on",
    )
    parser.add_argument("--sequence-length", type=int, default=384)
    parser.add_argument("--stride", type=int, default=128, help="overlap of context windows")
    parser.add_argument("--max-answer-length", type=int, default=30)
    parser.add_argument(
        "--train-articles", type=int, default=40, help="dev-split only: articles for training"
    )
    parser.add_argument("--dtype", default="float32", help="or mixed_bfloat16")
    parser.add_argument("--max-train-examples", type=int, default=None, help="(smoke tests)")
    parser.add_argument("--max-eval-examples", type=int, default=None, help="(smoke tests)")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--run-dir", default="runs/lab14_qa")
    parser.add_argument("--seed", type=int, default=0, help="the first run's seed")
    parser.add_argument(
        "--seeds", type=int, default=3, help="fine-tuning runs (fresh encoder and head each)"
    )
    parser.add_argument("--verbose", type=int, default=2)
    add_record_argument(parser)
    args = parser.parse_args()
    if args.seeds < 1:
        parser.error(f"--seeds must be >= 1 (fine-tuning runs); received {args.seeds}")
    if args.validation_articles < 1:
        parser.error(
            "--validation-articles must be >= 1 (the rate is chosen on them); received "
            f"{args.validation_articles}"
        )
    if len(set(args.learning_rates)) != len(args.learning_rates):
        parser.error(f"--learning-rates must not repeat a rate; received {args.learning_rates}")
    return args


def hold_out_articles(examples, count):
    """`(train, validation)`: the questions of the last `count` articles of `examples` (in file
    order) held out, so no article is in both.

    Raises:
        ValueError: `examples` spans `count` articles or fewer (nothing would be left to train).
    """
    titles = list(dict.fromkeys(example.title for example in examples))
    if len(titles) <= count:
        raise ValueError(
            f"--validation-articles {count} leaves no training article: the training split "
            f"has {len(titles)}"
        )
    held = set(titles[-count:])
    return (
        [example for example in examples if example.title not in held],
        [example for example in examples if example.title in held],
    )


# %% One run: start/end pointers on a fresh copy of the pretrained encoder, fine-tuned, then
# evaluated (windows merged back, best span per question, official EM/F1).
def run_seed(seed, learning_rate, train, evaluations, args):
    """One seed's fine-tuning at `learning_rate`, scored on each of `evaluations` (name →
    questions): "test" gives the run's EM and F1, "validation" (when given) its
    `validation_exact_match` and `validation_f1`. Returns `(run, training windows, the test
    answers by question id)`."""
    keras.backend.clear_session()  # each run builds a new model: free the last run's graphs
    keras.utils.set_random_seed(seed)
    encoder, tokenizer = load_pretrained(args.model, dtype=args.dtype)
    model = QuestionAnswerer(encoder)
    history, seconds, windows = fine_tune_question_answerer(
        model,
        tokenizer,
        train,
        settings=TrainingSettings(
            epochs=args.epochs,
            batch_size=args.batch_size,
            learning_rate=learning_rate,
            seed=seed,
            verbose=args.verbose,
        ),
        sequence_length=args.sequence_length,
        stride=args.stride,
    )
    scores = {
        name: evaluate_question_answerer(
            model,
            tokenizer,
            questions,
            args.sequence_length,
            args.stride,
            max_answer_length=args.max_answer_length,
        )
        for name, questions in evaluations.items()
    }
    test = scores["test"]
    run = {
        "seed": seed,
        "learning_rate": learning_rate,
        "exact_match": round(test["exact_match"], 2),
        "f1": round(test["f1"], 2),
        "final_loss": float(history.history["loss"][-1]),
        "train_seconds": round(seconds, 1),
        "train_windows_per_s": round(windows * args.epochs / seconds, 1),
        "eval_seconds": round(test["seconds"], 1),
    }
    checked = ""
    if "validation" in scores:
        run["validation_exact_match"] = round(scores["validation"]["exact_match"], 2)
        run["validation_f1"] = round(scores["validation"]["f1"], 2)
        checked = (
            f"  validation EM {run['validation_exact_match']:.2f} F1 {run['validation_f1']:.2f}"
        )
    print(
        f"seed {seed}, lr {learning_rate:g}: test EM {run['exact_match']:.2f}  F1 "
        f"{run['f1']:.2f}{checked}  final loss {run['final_loss']:.3f}  (training "
        f"{run['train_seconds']:.0f} s)",
        flush=True,
    )
    return run, windows, test["answers"]


def rate_rows(choice):
    """The rates tried at the first seed as the record keeps them: validation EM / F1 (the
    choice is on F1) and test EM / F1 beside."""
    return [
        {
            "learning_rate": row["learning_rate"],
            "validation_exact_match": row["validation_exact_match"],
            "validation_f1": row["validation_f1"],
            "test_exact_match": row["exact_match"],
            "test_f1": row["f1"],
        }
        for row in choice["tried"]
    ]


def summarize(runs):
    """EM and F1 mean ± sd over the runs (sd None at one seed); the timings' means and totals,
    the mean final loss (NaN if a run diverged, rather than no summary), and the runs."""
    row = over_seeds(runs, ("exact_match", "f1"), digits=2)
    row |= over_seeds(
        runs, ("train_seconds", "train_windows_per_s", "eval_seconds"), spread=(), digits=1
    )
    return row | {
        "train_seconds_total": round(sum(run["train_seconds"] for run in runs), 1),
        "eval_seconds_total": round(sum(run["eval_seconds"] for run in runs), 1),
        "final_loss": statistics.fmean(run["final_loss"] for run in runs),
        "runs": runs,
    }


def spread(result, metric):
    sd = result[f"{metric}_sd"]
    return f"{result[metric]:.2f}" + ("" if sd is None else f" ± {sd:.2f}")


def show_answers(evaluation, answers, seed):
    print(f"\nThe first questions, as seed {seed}'s model answers them:")
    for example in evaluation[:3]:
        answer = answers[example.id]
        print(
            f"Q: {example.question}\n   -> {answer['text']!r} [{answer['start']}:"
            f"{answer['end']}] p={answer['probability']:.2f}   gold: "
            f"{[text for text, _ in example.answers][:2]}"
        )


def main():
    args = parse_arguments()

    # %% Data: the official split when available, else SQuAD dev split by article.
    # The validation questions: the last training articles, held out before any cut.
    train, source = load_squad("train", args.data_dir, args.train_articles)
    evaluation, _ = load_squad("validation", args.data_dir, args.train_articles)
    try:
        train, validation = hold_out_articles(train, args.validation_articles)
    except ValueError as error:
        raise SystemExit(f"lab14_qa: {error}") from None
    train = train[: args.max_train_examples]
    validation = validation[: args.max_eval_examples]
    evaluation = evaluation[: args.max_eval_examples]
    print(
        f"SQuAD v1.1 {source}: {len(train)} training, {len(validation)} validation (the last "
        f"{args.validation_articles} training articles), {len(evaluation)} evaluation questions"
    )

    # %% The peak rate, chosen on validation at the first seed; then every other seed at it,
    # from fresh weights on the same data. The first seed's answers are kept.
    seeds = [args.seed + offset for offset in range(args.seeds)]
    kept = {}  # (rate, seed) → the run's training windows and test answers

    def train_at(rate, seed):
        # Validation only where a choice is made: every rate's first-seed run.
        evaluations = {"test": evaluation}
        if seed == seeds[0] and len(args.learning_rates) > 1:
            evaluations["validation"] = validation
        run, windows, answers = run_seed(seed, rate, train, evaluations, args)
        kept[rate, seed] = windows, answers
        return run

    runs, choice = rate_then_seeds(
        args.learning_rates,
        seeds,
        train_at,
        "validation_f1",
        shown=("validation_exact_match", "exact_match", "f1"),
    )
    chosen, rates = choice["chosen"], rate_rows(choice)
    windows, answers = kept[chosen, seeds[0]]
    if rates:
        print(f"\nPeak rate chosen on validation F1 (seed {seeds[0]}): {chosen:g}")
        print(f"{'rate':>8} {'val EM':>8} {'val F1':>8} {'test EM':>8} {'test F1':>8}")
        for row in rates:
            print(
                f"{row['learning_rate']:>8g} {row['validation_exact_match']:>8.2f} "
                f"{row['validation_f1']:>8.2f} {row['test_exact_match']:>8.2f} "
                f"{row['test_f1']:>8.2f}"
            )
    show_answers(evaluation, answers, seeds[0])

    # %% One table: EM and F1, mean ± sd over the seeds.
    result = {
        "source": source,
        "train_questions": len(train),
        "train_windows": windows,
        "validation_articles": args.validation_articles,
        "validation_questions": len(validation),
        "eval_questions": len(evaluation),
        "epochs": args.epochs,
        "learning_rate": chosen,
        "learning_rates": rates,
        "seeds": len(seeds),
        "first_seed": seeds[0],
        **summarize(runs),
    }
    print(f"\nSQuAD v1.1, EM and F1 mean ± sd over {len(seeds)} seed(s)")
    print(f"{'split':<44} {'EM':>14} {'F1':>14} {'train s (all)':>14}")
    print(
        f"{source:<44} {spread(result, 'exact_match'):>14} {spread(result, 'f1'):>14} "
        f"{result['train_seconds_total']:>14.0f}"
    )
    run_dir = Path(args.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "results.json").write_text(json.dumps(result, indent=2) + "\n")
    (run_dir / "predictions.json").write_text(
        json.dumps({key: value["text"] for key, value in answers.items()}, indent=1) + "\n"
    )
    print(f"wrote {run_dir / 'predictions.json'}: the first seed's ({seeds[0]}) answers only")
    record_if_requested(args, result)
    print(json.dumps({"exact_match": result["exact_match"], "f1": result["f1"]}))


if __name__ == "__main__":
    main()
