"""What each adaptation lab's source claims, and what its record shows against it.

A lab's table gives every row's seed-paired difference to its baseline (`difference`, with the
row it is paired with in `baseline`). This module names, per lab, the claim its source makes
(`../shared/SOURCE_SETTINGS.md`), the rows of the table that test it, and what the claim
expects of their difference; `claim_paragraph` turns a record into the sentence a reader needs:
the claim, then each testing row's difference and whether the claim shows. Nothing here is a
measured number: every figure comes from the record.

What a claim expects of a row's difference to its baseline (its `verdict`: "better" or "worse"
when the mean is larger than the seeds' spread, else "no difference"):

- `"match"`: at least as good ("similar to full fine-tuning", "at least matches"): it shows
  unless the row is worse beyond the spread; the reader also sees whether the mean is within
  `WITHIN` of the baseline (the 1 point issue #36 asks of adapters on MiniLM-L6).
- `"help"`: better: it shows only when the row is better beyond the spread.
- `"lag"`: the source itself expects the row to fall behind at this model size. A row within
  `NEAR_MAJORITY` (1 point) of the test set's majority class is not read as that lag: it sits at
  the majority class (a run that did not adapt), which says nothing of the claim.
- `None`: the source claims nothing; the rows' verdicts are listed as found.
"""

import dataclasses
import re

from benchmarks.reports._common import paired_by_seed
from kbert.metrics.majority_class import NEAR_MAJORITY
from kbert.metrics.seed_comparison import format_difference

# "Within a point": the margin the adapters claim is read at (issue #36's done-when).
WITHIN = 0.01


@dataclasses.dataclass(frozen=True)
class Claim:
    """A source's claim and the rows of a lab's table that test it.

    Attributes:
        source: str. Who claims what, in words a student can look up.
        rows: dict. A label prefix → what the claim expects of the rows it starts
            ("match", "help", "lag" or None).
    """

    source: str
    rows: dict
    # (row, baseline) pairs the source itself compared beside the table's own pairing, read
    # from the rows' per-seed runs where the record keeps them.
    also: tuple = ()


CLAIMS = {
    "lab03_adapters": Claim(
        "the tutorial's hands-on #3: adapters of size 32 at ten times the fine-tuning rate give "
        "“results similar to full fine-tuning”; Houlsby et al. (2019): within 0.4 points of "
        "full fine-tuning on GLUE",
        {"adapters": "match"},
    ),
    "lab04_gradual_unfreezing": Claim(
        "the tutorial advocates nothing for transformers (“not investigated in detail”); "
        "ULMFiT's gains from gradual unfreezing were measured with LSTMs",
        {"top_2": None, "gradual_unfreezing": None, "chain_thaw": None},
    ),
    "lab05_discriminative_lr": Claim(
        "ULMFiT: discriminative rates (÷2.6 per layer group) help fine-tuning (with LSTMs); "
        "the textbook's layer-wise decay is the same idea per block",
        {"discriminative_lr": "help", "layerwise_decay": "help", "l2_sp": None, "ewc": None},
    ),
    "lab06_multitask": Claim(
        "the tutorial's hands-on #6: classification + 0.5 × the LM loss for 6 epochs “helped us "
        "improve over single-task full-model fine-tuning” (against 3-epoch single-task runs)",
        {"multitask": "help", "full_longer": None},
        also=(("multitask_tutorial", "full"),),
    ),
    "lab16_peft": Claim(
        "LoRA (Hu et al. 2021): on par with full fine-tuning; prefix tuning (Li & Liang 2021): "
        "comparable with full data; prompt tuning (Lester et al. 2021): matches full "
        "fine-tuning only at billions of parameters and falls behind on small models",
        {"lora": "match", "prefix_tuning": "match", "prompt_tuning": "lag"},
    ),
    "lab17_distillation": Claim(
        "Hinton et al. (2015), DistilBERT (Sanh et al. 2019): a student trained on the "
        "teacher's soft targets at least matches one trained on the labels alone",
        {"distillation": "match"},
    ),
}

_CHOSEN_BY = re.compile(r" \(((?:chosen|fallback): .*)\)$")


def _for_start(label, start):
    """Whether row `label` speaks for `start`: a row chosen by (or falling back for) other
    starts runs on every start but is only that start's own setting."""
    match = _CHOSEN_BY.search(label)
    if match is None:
        return True
    names = {name for part in match.group(1).split("; ") for name in part.split(": ")[1].split("+")}
    return start in names


def _expectation(claim, label):
    """What `claim` expects of row `label` (the longest prefix that names it), and whether
    any prefix names it."""
    prefixes = [prefix for prefix in claim.rows if label.startswith(prefix)]
    if not prefixes:
        return None, False
    return claim.rows[max(prefixes, key=len)], True


def _reading(expects, difference):
    """What a row's difference says of the claim."""
    verdict = difference["verdict"]
    if expects == "match":
        if verdict == "worse":
            return "below it beyond the seeds' spread: the claim does not show"
        if verdict == "better" or difference["mean"] >= -WITHIN:
            return "the claim shows"
        return (
            f"no difference beyond the seeds' spread, but more than {100 * WITHIN:g} point "
            "below on average: not shown at this spread"
        )
    if expects == "help":
        return {
            "better": "the claim shows",
            "no difference": "no gain beyond the seeds' spread",
            "worse": "worse: the opposite of the claim",
        }[verdict]
    if expects == "lag":
        return "behind, as the source expects" if verdict == "worse" else "not behind"
    return verdict


def _at_majority(row, majority):
    """Whether `row`'s test mean is within `NEAR_MAJORITY` of (or below) `majority`, the test
    set's majority class; False where either is unknown."""
    if majority is None or row.get("acc_mean") is None:
        return False
    return row["acc_mean"] <= majority + NEAR_MAJORITY + 1e-9


# Discriminative rates at factor 1: every layer group at the top rate, no decay between them.
_NO_DECAY = re.compile(r"\bfactor=1(?![\d.])")


def _row_reading(expects, row, majority):
    """What `row`'s paired difference says of the claim; a row the claim expects to lag that
    sits at the majority class says that instead (a run that did not adapt is not the lag),
    and discriminative rates at factor 1 (no decay, what validation may choose) test nothing
    of ULMFiT's claim."""
    if expects == "help" and _NO_DECAY.search(row["label"]):
        return (
            f"{row['difference']['verdict']}; at factor 1 every group trains at the top rate, "
            "so this row does not test the claim"
        )
    if expects == "lag" and _at_majority(row, majority):
        return (
            f"at the majority class (test {row['acc_mean']:.3f} against {majority:.3f}, within "
            f"{100 * NEAR_MAJORITY:g} point), not read as the lag the source expects"
        )
    return _reading(expects, row["difference"])


def claim_paragraph(name, results, majority=None):
    """The sentence under lab `name`'s table: its source's claim, then each testing row's
    paired difference and what it says; [] for a lab without a claim here or a record made
    before rows carried their paired differences. `majority` (float or None) is the test set's
    majority-class accuracy, where known: a row the claim expects to lag that sits within
    `NEAR_MAJORITY` of it is read as at the majority class, not as the lag."""
    claim = CLAIMS.get(name)
    rows = results.get("rows") or []
    if claim is None or not any("difference" in row for row in rows):
        return []
    findings = []
    for row in rows:
        expects, named = _expectation(claim, row["label"])
        if not named or not _for_start(row["label"], row["start"]):
            continue
        difference = row.get("difference")
        if difference is None:
            findings.append(f"{row['start']} {row['label']}: no paired difference")
            continue
        against = f" vs {row['baseline']}" if row.get("baseline") else ""
        findings.append(
            f"{row['start']} {row['label']}{against}: {format_difference(difference)}, "
            f"{_row_reading(expects, row, majority)}"
        )
    findings += _source_pairs(claim, rows)
    if not findings:
        return []
    return [
        f"What the source claims: {claim.source}. What this record shows (test accuracy, "
        f"seed-paired, in points): {'; '.join(findings)}."
    ]


def _source_pairs(claim, rows):
    """The comparisons the source made itself (`Claim.also`), each row paired seed by seed with
    its baseline from their `runs`, per start; none where the record keeps no runs."""
    by_label = {(row["start"], row["label"]): row for row in rows}
    findings = []
    for label, baseline in claim.also:
        for (start, name), row in by_label.items():
            base = by_label.get((start, baseline))
            if name != label or base is None or "runs" not in row or "runs" not in base:
                continue
            difference, _ = paired_by_seed(_accuracy_by_seed(row), _accuracy_by_seed(base))
            if difference is None:
                continue
            expects, _ = _expectation(claim, label)
            findings.append(
                f"{start} {label} vs {baseline} (the source's own comparison): "
                f"{format_difference(difference)}, {_reading(expects, difference)}"
            )
    return findings


def _accuracy_by_seed(row):
    return {run["seed"]: run["accuracy"] for run in row["runs"]}
