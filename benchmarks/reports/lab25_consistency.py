"""The records of `labs/lab25_consistency.py`: their section and README headline."""

from benchmarks.reports._common import chosen_rate, markdown_table
from kbert.metrics.seed_comparison import format_difference, mean_sd

STEMS = ("lab25_consistency",)

# What the lab's source claims: stated under the record's title, above what it found.
CLAIM = "UDA (Xie et al. 2019), the tutorial §4.3.B: a consistency loss on unlabelled inputs and their perturbations helps, most where labels are fewest"


def _arm(arm):
    return "supervised only" if arm == "supervised" else f"+ consistency ({arm})"


def _accuracy(row):
    spread = "" if row["sd"] is None else f" ± {row['sd']:.3f}"
    return f"{row['mean']:.3f}{spread} (n={len(row['runs'])})"


def render(results):
    """Test accuracy per label count and arm, with the seed-paired difference to supervised;
    where the record holds its runs, the confident share each consistency arm kept and the
    epoch each seed kept, and the perturbed copies of one unlabelled question."""
    runs = _runs_by_arm(results)
    trained = any("confident_share" in run for group in runs.values() for run in group)
    choices = results.get("rate_choices")
    rows = [
        [size, _arm(arm)]
        + ([f"{choices[size][arm]['chosen']:g}"] if choices else [])
        + [_accuracy(row), format_difference(row.get("vs_supervised"))]
        + (_training(arm, runs.get((size, arm), [])) if trained else [])
        for size, arms in results["sizes"].items()
        for arm, row in arms.items()
    ]
    settings = results.get("settings", {})
    described = ", ".join(f"{key} {value}" for key, value in settings.items())
    unlabelled = ", ".join(
        f"{count:,} beside {size} labels" for size, count in results["unlabelled_examples"].items()
    )
    header = ["labels", "arm"] + (["peak rate"] if choices else [])
    header += ["test accuracy", "vs supervised only"]
    return "\n".join(
        [
            f"{results['model']} on TREC-6 ({described}). Unlabelled questions (the rest of the "
            f"training file, labels dropped): {unlabelled}; the epoch kept on "
            f"{results['validation_examples']:,} held-out questions; "
            f"{results['test_examples']:,} test questions, majority class "
            f"{results['majority_accuracy']:.3f}. Test accuracy, mean ± sd over seeds; "
            "differences in points, paired by seed ('no difference' when the mean is inside "
            "the sd)" + (TRAINING_COLUMNS if trained else ":"),
            "",
            markdown_table(header + (["confident share", "epoch kept"] if trained else []), rows),
        ]
        + _rates_lines(choices)
        + _perturbed_example(results.get("perturbed_example"))
    )


def _rates_lines(choices):
    """Each arm's peak rates tried at the first seed, with the kept epoch's validation accuracy
    (the choice) and test accuracy (shown, not used); [] for records without the choice."""
    if not choices:
        return []
    lines = [
        "",
        "Each arm's peak rate, chosen on validation at the first seed at each label count "
        "(`kbert.train.rate_on_validation`; the rate chosen, then validation / test accuracy "
        "per rate tried; test is shown, never used to choose):",
        "",
    ]
    for size, arms in choices.items():
        for arm, choice in arms.items():
            cell = chosen_rate(
                f"- {size} labels, {_arm(arm)}:",
                choice,
                lambda row: f"{row['val_accuracy']:.3f} / {row['test_accuracy']:.3f}",
            )
            lines.append(cell)
    return lines


# What the two columns drawn from the runs mean (UDA set β for two classes; TREC-6 has six).
TRAINING_COLUMNS = (
    ". Confident share: of the unlabelled questions in the kept epoch's steps, the share whose "
    "top probability exceeded the confidence threshold β (`confidence_threshold`), so counted "
    "by the consistency loss, mean ± sd over seeds (supervised only reads no unlabelled "
    "question); epoch kept: each seed's, of the epochs run:"
)


def _runs_by_arm(results):
    """The record's runs by `(label count as in "sizes", arm)`; none in a record without runs."""
    grouped = {}
    for run in results.get("runs") or []:
        grouped.setdefault((str(run["labels"]), run["arm"]), []).append(run)
    return grouped


def _training(arm, runs):
    """The confident-share and epoch-kept cells of one label count and arm."""
    shares = [run["confident_share"] for run in runs if "confident_share" in run]
    if arm == "supervised" or not shares:
        share = "–"
    else:
        mean, sd = mean_sd(shares)
        share = f"{mean:.2f}" + ("" if sd is None else f" ± {sd:.2f}")
    kept = [run for run in runs if "best_epoch" in run]
    # Every seed and arm of one label count runs the same number of epochs (the lab's flags).
    epochs = (
        ", ".join(str(run["best_epoch"]) for run in kept) + f" of {kept[0]['epochs']}"
        if kept
        else "–"
    )
    return [share, epochs]


def _perturbed_example(example):
    """The lines that show one unlabelled question and its perturbed copy under each arm."""
    if not example:
        return []
    escaped = {name: _plain(text) for name, text in example.items()}
    return [
        "",
        "One unlabelled question and its perturbed copy under each arm (wordpieces joined):",
        "",
        *(f"- {name}: {text}" for name, text in escaped.items()),
    ]


def _plain(text):
    """`text` with the characters Markdown would read as markup escaped ([MASK] stays text)."""
    for character in "\\`*_[]<>|":
        text = text.replace(character, "\\" + character)
    return text


def headline(results):
    parts = []
    for size, arms in results["sizes"].items():
        for arm, row in arms.items():
            if arm != "supervised":
                parts.append(
                    f"TREC-6 at {size} labels: consistency ({arm}) "
                    f"{format_difference(row['vs_supervised'], digits=1)} points"
                )
    return "; ".join(parts)
