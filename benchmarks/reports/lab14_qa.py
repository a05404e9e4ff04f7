"""The records of `labs/lab14_qa.py` (extractive QA on SQuAD v1.1): their section of
docs/results.md and README headline.

A record holds EM and F1 as the mean over seeds with their sd and each seed's run (`runs`), or,
made before the lab ran several seeds, one run's scores; both render."""

from benchmarks.reports._common import markdown_table

STEMS = ("lab14_qa",)

# What the lab's source claims: stated under the record's title, above what it found.
CLAIM = "J&M §11.4.4 and the tutorial §5.B: a pretrained encoder fine-tuned with start and end pointers answers SQuAD questions by pointing at a span; BERT-base reaches 80.8 EM / 88.5 F1 on the official split (Devlin et al. 2019)"


def _spread(results, metric):
    """`mean ± sd` over the record's seeds (the mean alone at one seed, or in a one-run record)."""
    sd = results.get(f"{metric}_sd")
    return f"{results[metric]:.2f}" + ("" if sd is None else f" ± {sd:.2f}")


def _cell(results, metric):
    runs = results.get("runs")
    return _spread(results, metric) + (f" (n={len(runs)})" if runs else "")


def render(results):
    """The split, sizes, training cost and official-normalisation EM/F1: mean ± sd over seeds
    with each seed's scores, or (records before seeds) the one run's."""
    seeds = "runs" in results
    table = markdown_table(
        [
            "split",
            "train questions (windows)",
            "eval questions",
            "epochs",
            "EM",
            "F1",
            "train s per seed" if seeds else "train s",
        ],
        [
            [
                results["source"],
                f"{results['train_questions']:,} ({results['train_windows']:,})",
                f"{results['eval_questions']:,}",
                results["epochs"],
                _cell(results, "exact_match"),
                _cell(results, "f1"),
                f"{results['train_seconds']:,.0f}",
            ]
        ],
    )
    return f"{table}\n\n{_training_note(results)}{_seeds_note(results)}{_rates_part(results)}"


def _rates_part(results):
    """The peak rate chosen on validation: each rate's first-seed scores on the held-out
    training articles and on test, the chosen one in bold ("" for a record without the choice)."""
    rates = results.get("learning_rates")
    if not rates:
        return ""
    chosen = results["learning_rate"]
    rows = []
    for row in rates:
        mark = "**" if row["learning_rate"] == chosen else ""
        rows.append(
            [f"{mark}{row['learning_rate']:g}{mark}"]
            + [
                f"{row[key]:.2f}"
                for key in (
                    "validation_exact_match",
                    "validation_f1",
                    "test_exact_match",
                    "test_f1",
                )
            ]
        )
    table = markdown_table(["peak rate", "val EM", "val F1", "test EM", "test F1"], rows)
    first = results["runs"][0]["seed"]
    return (
        f"\n\nThe peak rate, chosen on validation F1 (seed {first}; validation = the last "
        f"{results['validation_articles']} training articles, {results['validation_questions']:,} "
        "questions, held out from training; test shown beside, not used to choose). The table "
        f"above is the chosen rate, {chosen:g}:\n\n{table}"
    )


def _training_note(results):
    extra = results["train_windows"] - results["train_questions"]
    means = " (means over the seeds)" if "runs" in results else ""
    return (
        "EM and F1 use SQuAD v1.1's official normalisation, the best over the gold "
        f"answers. The {results['train_questions']:,} training questions make {extra:,} more "
        "windows than questions (paragraphs longer than the input, cut with overlap); training "
        f"ran at {results['train_windows_per_s']:.1f} windows/s and ended at loss "
        f"{results['final_loss']:.3f}{means}. A `dev-split` source trains on the first "
        "articles of the dev file and scores the rest: not the official dev score."
    )


def _seeds_note(results):
    """Each seed's EM / F1 and the training time in all ("" for a one-run record)."""
    runs = results.get("runs")
    if not runs:
        return ""
    each = "; ".join(
        f"seed {run['seed']} {run['exact_match']:.2f} / {run['f1']:.2f}" for run in runs
    )
    return (
        f"\n\n{len(runs)} seed(s), each fine-tuning a fresh copy of the pretrained encoder with a "
        f"new head on the same questions; EM and F1 are mean ± sd over them. Per seed, EM / F1: "
        f"{each}. Training took {results['train_seconds_total']:,.0f} s in all."
    )


def headline(results):
    runs = results.get("runs")
    seeds = "" if not runs else f" ({len(runs)} seed{'s' if len(runs) > 1 else ''})"
    return (
        f"SQuAD v1.1 ({results['source']}): EM {_spread(results, 'exact_match')}, "
        f"F1 {_spread(results, 'f1')} on {results['eval_questions']:,} questions{seeds}"
    )
