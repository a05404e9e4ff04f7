"""The records of `labs/lab14_qa.py` (extractive QA on SQuAD v1.1): their section of
docs/results.md and README headline."""

from benchmarks.reports._common import markdown_table

STEMS = ("lab14_qa",)

# What the lab's source claims: stated under the record's title, above what it found.
CLAIM = "J&M §11.4.4 and the tutorial §5.B: a pretrained encoder fine-tuned with start and end pointers answers SQuAD questions by pointing at a span; BERT-base reaches 80.8 EM / 88.5 F1 on the official split (Devlin et al. 2019)"


def render(results):
    """The run's split, sizes, training cost and official-normalisation EM/F1."""
    extra = results["train_windows"] - results["train_questions"]
    table = markdown_table(
        ["split", "train questions (windows)", "eval questions", "epochs", "EM", "F1", "train s"],
        [
            [
                results["source"],
                f"{results['train_questions']:,} ({results['train_windows']:,})",
                f"{results['eval_questions']:,}",
                results["epochs"],
                f"{results['exact_match']:.2f}",
                f"{results['f1']:.2f}",
                f"{results['train_seconds']:,.0f}",
            ]
        ],
    )
    return (
        f"{table}\n\nEM and F1 use SQuAD v1.1's official normalisation, the best over the gold "
        f"answers. The {results['train_questions']:,} training questions make {extra:,} more "
        f"windows than questions (paragraphs longer than the input, cut with overlap); training ran at {results['train_windows_per_s']:.1f} windows/s and "
        f"ended at loss {results['final_loss']:.3f}. A `dev-split` source trains on the first "
        "articles of the dev file and scores the rest: not the official dev score."
    )


def headline(results):
    return (
        f"SQuAD v1.1 ({results['source']}): EM {results['exact_match']:.2f}, "
        f"F1 {results['f1']:.2f} on {results['eval_questions']:,} questions"
    )
