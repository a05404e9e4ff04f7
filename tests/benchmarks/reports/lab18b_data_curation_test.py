import copy
import json
from pathlib import Path

from benchmarks.reports import lab18b_data_curation
from kbert.metrics.seed_comparison import paired_difference, summarize_arms

RECORD = Path(__file__).resolve().parents[3] / "docs/results/lab18b_data_curation.json"

# The shape of records made before `--pretraining-seeds` and the paired differences (as the
# committed record): one pretraining per corpus, no `vs_planted`, no perplexity sd.
CURATION = {
    "documents": {"originals": 100, "copies": 12, "noise": 15},
    "filters": {
        "exact_duplicates": {
            "removed": 9,
            "by_reason": {"exact_duplicate": 9},
            "planted_removed": {"exact_copy": 6, "repeated_boilerplate": 3},
            "originals_removed": 0,
        },
        "perplexity": {
            "removed": 5,
            "by_reason": {"perplexity_high": 4, "perplexity_low": 1},
            "planted_removed": {"word_salad": 3},
            "originals_removed": 2,
        },
    },
    "recall": {"exact_copy": 1.0, "word_salad": 0.75},
    "median_perplexity": {"None": 120.5, "word_salad": 980.0},
    "pretraining": {
        "planted": {"documents": 127, "held_out_perplexity": 300.25},
        "curated": {"documents": 110, "held_out_perplexity": 280.5},
    },
    "held_out_perplexity": {"planted": 300.25, "curated": 280.5},
    "trec": {"planted": {"mean": 0.6, "sd": 0.01}, "curated": {"mean": 0.62, "sd": 0.02}},
    "trec_acc": {"planted": 0.6, "curated": 0.62},
    "steps": 300,
    "tokens_per_corpus": 1228800,
    "labelled": 1000,
    "seeds": 3,
}
UNMEASURED = (
    "Each corpus was pretrained once: the perplexity gap is one pretraining per corpus, and its "
    "spread over pretraining seeds is unmeasured."
)


def with_pretrainings(planted, curated, trec_runs, seeds):
    """CURATION as the lab writes it now: one perplexity per pretraining seed and corpus, the
    TREC-6 runs (paired across corpora, in the same order) summarized with `vs_planted`."""
    results = copy.deepcopy(CURATION)
    for name, perplexities in (("planted", planted), ("curated", curated)):
        runs = [
            {"seed": seed, "held_out_perplexity": value} for seed, value in enumerate(perplexities)
        ]
        summary = summarize_arms({name: perplexities}, name, digits=2)[name]
        results["pretraining"][name].update(
            held_out_perplexity=summary["mean"], held_out_perplexity_sd=summary["sd"], runs=runs
        )
        results["held_out_perplexity"][name] = summary["mean"]
    results["perplexity_reduction"] = paired_difference(planted, curated)
    results["trec"] = summarize_arms(trec_runs, "planted")
    results["trec_acc"] = {name: row["mean"] for name, row in results["trec"].items()}
    results["pretraining_seeds"] = len(planted)
    results["seeds"] = seeds
    return results


def test_the_curation_lab_renders_its_tables_and_headline():
    page = lab18b_data_curation.render(CURATION)
    assert (
        "| exact_duplicates | 9 | exact_duplicate 9 | exact_copy 6, repeated_boilerplate 3 | 0 |"
        in page
    )
    assert "| word_salad | 75.0% | 980.0 |" in page
    assert "| curated | 110 | 280.5 | 0.620 ± 0.020 |" in page
    assert "(mean ± sd of 3 seeds):" in page
    # A record made before the paired differences is rendered as it always was.
    assert page.endswith("| curated | 110 | 280.5 | 0.620 ± 0.020 |")
    assert "paired" not in page and UNMEASURED not in page
    assert lab18b_data_curation.headline(CURATION) == (
        "planted copies and noise found: recall 75%–100% per kind; equal tokens: held-out "
        "perplexity 280.5 curated vs 300.2 planted, TREC-6 0.620 vs 0.600"
    )


def test_the_committed_record_still_renders():
    results = json.loads(RECORD.read_text())["results"]
    page = lab18b_data_curation.render(results)
    curated, trec = results["pretraining"]["curated"], results["trec"]["curated"]
    assert f"| curated | {curated['documents']:,} | {curated['held_out_perplexity']:.1f}" in page
    assert f"{trec['mean']:.3f}" in page
    assert (UNMEASURED in page) == (results.get("pretraining_seeds") == 1)
    assert ("curated minus planted" in page) == ("vs_planted" in trec)
    assert lab18b_data_curation.headline(results).startswith("planted copies and noise found")


def test_one_pretraining_per_corpus_says_its_spread_is_unmeasured():
    results = with_pretrainings(
        [300.0],
        [280.0],
        {"planted": [0.60, 0.61, 0.60], "curated": [0.62, 0.60, 0.61]},
        seeds=3,
    )
    page = lab18b_data_curation.render(results)
    assert "| curated | 110 | 280.0 | 0.610 ± 0.010 |" in page  # no perplexity sd from one run
    assert "(mean ± sd of 3 seeds):" in page
    assert UNMEASURED in page
    # The TREC-6 runs are paired by seed; a mean inside the spread is "no difference".
    assert (
        "TREC-6 test accuracy, curated minus planted in points, paired by seed over 3 pairs of "
        "runs: +0.67 ± 1.53 (no difference)" in page
    )
    assert lab18b_data_curation.headline(results) == (
        "planted copies and noise found: recall 75%–100% per kind; equal tokens: held-out "
        "perplexity 280.0 curated vs 300.0 planted, TREC-6 0.610 vs 0.603 (curated − planted, "
        "points: +0.7 ± 1.5 (no difference))"
    )


def test_several_pretrainings_pair_perplexity_and_accuracy_by_their_seeds():
    results = with_pretrainings(
        [300.0, 305.0, 298.0],
        [280.0, 290.0, 282.0],
        {
            "planted": [0.60, 0.59, 0.61, 0.60, 0.59, 0.61],
            "curated": [0.63, 0.60, 0.63, 0.63, 0.60, 0.63],
        },
        seeds=2,
    )
    page = lab18b_data_curation.render(results)
    assert (
        "(perplexity over 3 pretraining seeds per corpus, TREC-6 over 3 × 2 (pretraining seed, "
        "fine-tuning seed) runs; mean ± sd):" in page
    )
    assert "| curated | 110 | 284.0 ± 5.3 | 0.620 ± 0.015 |" in page
    assert UNMEASURED not in page
    assert (
        "Held-out perplexity, planted minus curated (positive: curating lowered it), paired by "
        "pretraining seed over 3 seeds: +17.0 ± 2.6 (better)" in page
    )
    assert (
        "paired by (pretraining seed, fine-tuning seed) over 6 pairs of runs: +2.00 ± 0.89 "
        "(better)" in page
    )
    assert lab18b_data_curation.headline(results).endswith(
        "perplexity 284.0 curated vs 301.0 planted (planted − curated, paired by pretraining "
        "seed: +17.0 ± 2.6 (better)), TREC-6 0.620 vs 0.600 (curated − planted, points: "
        "+2.0 ± 0.9 (better))"
    )
