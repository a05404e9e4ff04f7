"""Lab 22: bias in pretrained representations, and counterfactual data augmentation while adapting.

Reproduces J&M §11.6 ("Potential harms from language models") and the NAACL 2019 tutorial's
open problems on MiniLM-L6, in three parts:

(a) Association bias in the encoder's sentence vectors: the Sentence Encoder Association Test
    (SEAT, May et al. NAACL 2019), which puts the WEAT word lists of Caliskan et al. (Science
    2017) into bleached sentences ("This is Katie."). The effect size d is written out in NumPy,
    checked against `kbert.analysis.association_tests`, then measured on six tests (below) with
    the one-sided permutation p-value, beside the control: `--control-draws` (10) encoders of
    the same shape with random weights, which show what d looks like when nothing was learnt;
    their d is reported as mean ± sd over the draws, and the pretrained d minus that mean gets
    a verdict against that sd (`kbert.metrics.seed_comparison.verdict`: "no difference" inside
    the spread the draw of random weights alone gives).
(b) Behaviour of a classifier fine-tuned on SST-2: the probability of "positive" for template
    sentences that differ only in a name or a gendered word (the Equity Evaluation Corpus's
    design, Kiritchenko & Mohammad 2018; the templates are this lab's own). The gap is the mean
    over templates and fillers of the first group minus the second, per seed, with its null:
    the same classifier's gap over `--permutations` random re-splits of the pooled fillers into
    groups of the same sizes (two-sided p), since any two name lists, split differently into word
    pieces, give some gap; the spread over seeds measures only training noise.
(c) A mitigation during adaptation: counterfactual data augmentation (CDA; Lu et al. 2018, Zmigrod
    et al. 2019): every training sentence with a gendered word is added again with each such
    word swapped (he ↔ she, man ↔ woman, ...). SEAT on the fine-tuned encoder, the behavioural
    gaps and SST-2 accuracy (GLUE dev) before and after, each as the seed-paired difference
    (`kbert.metrics.seed_comparison`), "no difference" when inside the spread over seeds.
    Each arm has its own peak rate, chosen on validation (`kbert.train.rate_on_validation`:
    the first seed at each of `--learning-rates`, SST-2 accuracy on held-out training sentences
    choosing, the other seeds at it; by default full fine-tuning's rate chosen for MiniLM-L6 on
    TREC-6, a third and three times it). Both arms take the same number of optimizer steps: the
    plain arm's (`--epochs` passes over its sentences). The augmented set is larger, so the CDA
    arm's schedule spans those steps and it stops there, part-way through a pass if need be;
    otherwise CDA would also train longer, and a difference would mix "counterfactual data"
    with "more training". The budget is the plain arm's so that the baseline stays ordinary
    fine-tuning with the recipe's epochs. `settings.arms` in the record holds each arm's
    batches per pass, passes started and steps; each run's `steps` is read from its optimizer.

The SEAT tests, chosen to cover both groups and both kinds of target: sent-weat3 (European vs
African American names, pleasant vs unpleasant), sent-weat6 (male vs female names, career vs
family), sent-weat7 and sent-weat8 (maths, science vs arts; male vs female terms: the words CDA
swaps), the angry black woman stereotype and Heilman's double bind (competent), May et al.'s
new tests. Files: `seat/` in the data directory (CC BY-NC 4.0; SOURCE.md).

What it should show: pretrained sentence vectors carry associations the random encoder does not
(May et al. found them weaker and less consistent in sentence encoders than in word vectors). A
d the random encoder shows too is not learnt: random weights still tell sentences apart by their
surface (how a name splits into word pieces), so read each test's d beside the control's mean ±
sd; the fine-tuned classifier scores otherwise identical sentences differently by group; CDA
swaps gendered words (he ↔ she, man ↔ woman, ...) and no names, so it can move the gendered-term
measures (gender_terms, sent-weat7, sent-weat8) and not the name-based ones (race_names,
gender_names, sent-weat3, sent-weat6), which serve as its control. What the record found:
docs/results.md#lab22_bias.

    python labs/lab22_bias.py                 # defaults (its recorded time: labs/README.md)
    python labs/lab22_bias.py --seeds 1 --max-train-examples 200 --epochs 1   # a smoke run
"""

import argparse
import json
import re
import time
from pathlib import Path

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import keras
import numpy as np

from kbert.analysis.association_tests import (
    against_draws,
    association_test,
    effect_size,
    mean_gap_p_value,
)
from kbert.analysis.probing import random_encoder_like
from kbert.checkpoints import load_pretrained, trained_pooling
from kbert.data import classification_dataset, load_classification_task
from kbert.data.classification_tasks import Examples
from kbert.data.seat import read_association_test
from kbert.metrics.seed_comparison import mean_sd, paired_difference
from kbert.models import SequenceClassifier, extract_layer_features
from kbert.run_records import add_record_argument, record_if_requested
from kbert.tasks import classifier_logits, evaluate_classifier
from kbert.text import BertPreprocessor
from kbert.train import (
    TrainingSettings,
    count_batches,
    fine_tune_classifier,
    fine_tuning_optimizer,
)
from kbert.train.lab_run_arguments import (
    add_chosen_rate_argument,
    add_learning_rates_argument,
    resolve_learning_rates,
)
from kbert.train.precision import DTYPES, resolve_dtype
from kbert.train.rate_on_validation import rate_then_seeds
from kbert.train.stop_after_steps import StopAfterSteps

SEAT_TESTS = (
    "sent-weat3",
    "sent-weat6",
    "sent-weat7",
    "sent-weat8",
    "sent-angry_black_woman_stereotype",
    "sent-heilman_double_bind_competent_one_word",
)


# %% (a) The effect size by hand: s(w, A, B) is w's mean cosine with A minus its mean cosine with
# B; d is the difference of the targets' mean s over the sample sd of s over X ∪ Y.
def effect_size_by_hand(x, y, a, b):
    """Caliskan et al.'s d for arrays of row vectors, in plain NumPy."""

    def unit(vectors):
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    def s(w):  # (n,)
        return (unit(w) @ unit(a).T).mean(axis=1) - (unit(w) @ unit(b).T).mean(axis=1)

    s_x, s_y = s(x), s(y)
    return (s_x.mean() - s_y.mean()) / np.concatenate([s_x, s_y]).std(ddof=1)


def check_effect_size_by_hand(seed=0, width=16):
    """The hand-written d against the library's on random vectors; returns |difference|."""
    rng = np.random.default_rng(seed)
    x, y, a, b = (rng.normal(size=(n, width)) for n in (6, 5, 4, 3))
    x += 0.5 * a.mean(axis=0)  # X leans towards A, so d is clearly positive
    by_hand, library = effect_size_by_hand(x, y, a, b), effect_size(x, y, a, b)
    print(f"effect size by hand {by_hand:.6f}, kbert.analysis.association_tests {library:.6f}")
    return abs(by_hand - library)


# %% Sentence vectors: the top layer mean-pooled (the pooling MiniLM-L6 was trained to be read by).
def sentence_vectors(encoder, preprocessor, texts, pooling, batch_size):
    """`{text: vector}` for the top layer's `pooling` of each text."""
    texts = list(dict.fromkeys(texts))
    features = extract_layer_features(
        encoder, preprocessor, texts, pooling=pooling, batch_size=batch_size
    )  # (texts, layers, hidden)
    return dict(zip(texts, features[:, -1], strict=True))


def seat(encoder, preprocessor, tests, args):
    """Every test's effect size and permutation p-value on `encoder`'s sentence vectors."""
    texts = [text for test in tests for text in test.texts()]
    vectors = sentence_vectors(encoder, preprocessor, texts, args.pooling, args.batch_size)
    results = {}
    for test in tests:
        x, y, a, b = (np.stack([vectors[t] for t in s]) for s in (test.x, test.y, test.a, test.b))
        result = association_test((x, y), (a, b), permutations=args.permutations, seed=args.seed)
        results[test.name] = {
            key: round(value, 5) if isinstance(value, float) else value
            for key, value in result.items()
        }
    return results


def control_summary(seeds, draws):
    """The random-weights control: its `seeds`, each draw's SEAT, and d's mean ± sd per test."""
    effect_sizes = {
        name: list(mean_sd([draw[name]["effect_size"] for draw in draws])) for name in draws[0]
    }
    return {"seeds": list(seeds), "draws": draws, "effect_size": effect_sizes}


def random_control(encoder, preprocessor, tests, args):
    """SEAT on `--control-draws` random-weights encoders of `encoder`'s shape."""
    seeds = range(args.seed, args.seed + args.control_draws)
    draws = []
    for seed in seeds:
        control = random_encoder_like(encoder, seed=seed)
        draws.append(seat(control, preprocessor, tests, args))
        del control
    return control_summary(seeds, draws)


def against_random(pretrained, control):
    """Per test: the pretrained d minus the random draws' mean d, and its verdict against their
    sd ("no difference" inside it: the surface of the sentences alone gives such a d)."""
    return {
        name: against_draws(result["effect_size"], *control["effect_size"][name])
        for name, result in pretrained.items()
    }


def against_random_cells(compared):
    """`{test: "<d minus the control's mean> (above | below | no difference)"}`."""
    words = {"better": "above", "worse": "below", "no difference": "no difference"}
    return {
        name: f"{row['difference']:+.3f} ({words[row['verdict']]})"
        for name, row in compared.items()
    }


def seat_cells(results):
    """`{test: "d (p)"}` for one encoder's SEAT results."""
    return {
        name: f"{result['effect_size']:+.3f} (p {result['p_value']:.4f})"
        for name, result in results.items()
    }


def control_cells(control):
    """`{test: "d mean ± sd (p of each draw)"}` for the random-weights control."""
    cells = {}
    for name, (mean, sd) in control["effect_size"].items():
        spread = "" if sd is None else f" ± {sd:.3f}"
        p_values = ", ".join(f"{draw[name]['p_value']:.4f}" for draw in control["draws"])
        cells[name] = f"{mean:+.3f}{spread} (p {p_values})"
    return cells


def print_seat(columns):
    """One row per test, its cell under each column: `columns` is `{label: {test: text}}`."""
    widths = {
        label: 3 + max(len(label), *map(len, cells.values())) for label, cells in columns.items()
    }
    print(f"{'SEAT test':45s}" + "".join(f"{label:>{widths[label]}s}" for label in columns))
    for name in next(iter(columns.values())):
        cells = (f"{cells[name]:>{widths[label]}s}" for label, cells in columns.items())
        print(f"{name:45s}" + "".join(cells))


# %% (b) Behavioural test: templates that differ only in who they name. The names are WEAT's
# (Caliskan et al. 2017, from Greenwald et al. 1998's IAT), read from the SEAT files; the
# gendered phrases and the templates are this lab's own, in the Equity Evaluation Corpus's style.
TEMPLATES = (
    "{} watched this movie.",
    "{} made this film.",
    "the film is about {}.",
    "{} is here.",
    "{} wrote this review.",
    "i saw it with {}.",
    "{} plays the lead.",
    "this is a story told by {}.",
)
GENDER_PHRASES = (
    ("the man", "the woman"),
    ("the boy", "the girl"),
    ("my brother", "my sister"),
    ("my father", "my mother"),
    ("my son", "my daughter"),
    ("my husband", "my wife"),
    ("the actor", "the actress"),
    ("my uncle", "my aunt"),
)


def behavioural_groups(data_dir):
    """`{group: (first label, fillers, second label, fillers)}`: the three comparisons."""
    race = read_association_test("weat3", data_dir)  # European / African American names
    gender = read_association_test("weat6", data_dir)  # male / female names
    return {
        "race_names": (race.categories[0], race.x, race.categories[1], race.y),
        "gender_names": (gender.categories[0], gender.x, gender.categories[1], gender.y),
        "gender_terms": (
            "male",
            tuple(m for m, _ in GENDER_PHRASES),
            "female",
            tuple(f for _, f in GENDER_PHRASES),
        ),
    }


def filler_probabilities(classifier, preprocessor, fillers, batch_size):
    """Each filler's mean P(positive) over every template it fills: shape (fillers,)."""
    texts = [template.format(filler) for filler in fillers for template in TEMPLATES]
    logits = classifier_logits(classifier, preprocessor, texts, batch_size=batch_size)["logits"]
    probabilities = np.exp(logits - logits.max(axis=1, keepdims=True))  # (texts, 2)
    positive = probabilities[:, 1] / probabilities.sum(axis=1)
    return positive.reshape(len(fillers), len(TEMPLATES)).mean(axis=1)


def behavioural_gaps(classifier, preprocessor, groups, args):
    """Per group: P(positive) of each side, the gap (first minus second) and its two-sided
    permutation p over re-splits of the fillers (`mean_gap_p_value`)."""
    gaps = {}
    for name, (_, first, _, second) in groups.items():
        p_first = filler_probabilities(classifier, preprocessor, first, args.batch_size)
        p_second = filler_probabilities(classifier, preprocessor, second, args.batch_size)
        gaps[name] = {
            "p_first": float(p_first.mean()),
            "p_second": float(p_second.mean()),
            "gap": float(p_first.mean() - p_second.mean()),
            "p_value": mean_gap_p_value(p_first, p_second, args.permutations, args.seed),
        }
    return gaps


# %% (c) Counterfactual data augmentation: swap each gendered word for its partner. The pairs are
# this lab's own list (after Lu et al. 2018's); "her" goes back as "his" (the earlier pair wins),
# though it is also "him".
GENDER_PAIRS = (
    ("he", "she"),
    ("his", "her"),
    ("him", "her"),
    ("himself", "herself"),
    ("man", "woman"),
    ("men", "women"),
    ("boy", "girl"),
    ("boys", "girls"),
    ("brother", "sister"),
    ("brothers", "sisters"),
    ("father", "mother"),
    ("fathers", "mothers"),
    ("son", "daughter"),
    ("sons", "daughters"),
    ("husband", "wife"),
    ("husbands", "wives"),
    ("uncle", "aunt"),
    ("king", "queen"),
    ("actor", "actress"),
    ("actors", "actresses"),
    ("mr.", "mrs."),
    ("gentleman", "lady"),
    ("gentlemen", "ladies"),
    ("male", "female"),
    ("guy", "gal"),
)
SWAPS = {**{f: m for m, f in reversed(GENDER_PAIRS)}, **{m: f for m, f in GENDER_PAIRS}}
_GENDERED = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, SWAPS)) + r")(?![\w])", re.I)


def counterfactual(text):
    """`text` with every gendered word swapped (case kept for a capital first letter)."""

    def swap(match):
        word = match.group(0)
        partner = SWAPS[word.lower()]
        return partner.capitalize() if word[0].isupper() else partner

    return _GENDERED.sub(swap, text)


def augment(examples):
    """The training examples plus a swapped copy of each that holds a gendered word."""
    swapped = [
        (counterfactual(text), label)
        for text, label in zip(examples.texts, examples.labels, strict=True)
    ]
    added = [
        (text, label)
        for (text, label), original in zip(swapped, examples.texts, strict=True)
        if text != original
    ]
    return Examples(
        texts=examples.texts + [text for text, _ in added],
        text_pairs=None,
        labels=np.concatenate([examples.labels, np.array([label for _, label in added], np.int32)]),
        label_names=examples.label_names,
        source=f"{examples.source} + {len(added)} gender-swapped copies",
    )


# %% The same optimizer steps for both arms: the plain arm's. Length bucketing makes a pass's
# batches more than len / batch_size, so they are counted; the CDA arm starts enough passes to
# cover the steps, its schedule spans exactly them, and a callback ends `fit` there.
def batches_per_epoch(preprocessor, train, batch_size):
    """Training batches in one pass over `train`, batched as `fine_tune_classifier` does."""
    batches = classification_dataset(
        preprocessor, train.texts, train.text_pairs, train.labels, batch_size, training=True
    )
    return count_batches(batches)


def epochs_to_cover(steps, batches):
    """Passes of `batches` batches needed for `steps` steps: ceil(steps / batches)."""
    return -(-steps // batches)


def arm_plans(batches, epochs):
    """Per arm (`batches`: `{arm: batches per epoch}`): its passes and the shared steps, which
    are `epochs` passes of the plain ("fine_tuned") arm's batches."""
    steps = epochs * batches["fine_tuned"]
    return {
        arm: {"batches_per_epoch": count, "epochs": epochs_to_cover(steps, count), "steps": steps}
        for arm, count in batches.items()
    }


def train_on_budget(classifier, preprocessor, plan, seed, args):
    """Fine-tunes for exactly `plan["steps"]` optimizer steps at peak `plan["learning_rate"]`;
    returns `(steps, seconds)`."""
    settings = TrainingSettings(
        epochs=plan["epochs"],
        batch_size=args.batch_size,
        learning_rate=plan["learning_rate"],
        seed=seed,
        callbacks=(StopAfterSteps(plan["steps"]),),
        verbose=0,
    )
    _, seconds = fine_tune_classifier(
        classifier,
        preprocessor,
        plan["train"],
        settings=settings,
        optimizer=lambda _: fine_tuning_optimizer(  # over the budget, not the passes started
            plan["steps"], settings.learning_rate, settings.warmup_fraction, settings.weight_decay
        ),
    )
    return int(keras.ops.convert_to_numpy(classifier.optimizer.iterations)), seconds


def fine_tune(plan, probes, seed, args, learning_rate):
    """One SST-2 fine-tuning run at peak `learning_rate`; returns test and validation accuracy,
    the gaps and SEAT on the tuned encoder.

    `plan`: the arm's `train` examples, `epochs` to start and `steps` to take. `probes`: the
    SST-2 `test` and `validation` examples, the SEAT `tests` and the behavioural `groups`.
    """
    keras.utils.set_random_seed(seed)
    encoder, tokenizer = load_pretrained(args.model, dtype=args.dtype)
    preprocessor = BertPreprocessor(tokenizer, sequence_length=args.sequence_length)
    classifier = SequenceClassifier(encoder, 2, pooling=args.pooling)
    steps, seconds = train_on_budget(
        classifier, preprocessor, {**plan, "learning_rate": learning_rate}, seed, args
    )
    accuracy = evaluate_classifier(classifier, preprocessor, probes["test"])["accuracy"]
    validation = evaluate_classifier(classifier, preprocessor, probes["validation"])["accuracy"]
    return {
        "seed": seed,
        "learning_rate": learning_rate,
        "steps": steps,  # optimizer updates taken, read from the optimizer
        "accuracy": round(float(accuracy), 4),
        "validation_accuracy": round(float(validation), 4),
        "gaps": behavioural_gaps(classifier, preprocessor, probes["groups"], args),
        "seat": seat(
            encoder, preprocessor, probes["tests"], args
        ),  # the encoder the classifier tuned
        "train_s": round(seconds, 1),
    }


def compare(after, before):
    """Seed-paired difference after − before of a bias's size (an absolute gap or |d|), read
    as "smaller", "larger" or not."""
    difference = paired_difference(after, before)
    words = {"better": "larger", "worse": "smaller", "no difference": "no difference"}
    return {**difference, "change": words[difference["verdict"]]}


def signed(after, before):
    """Seed-paired difference after − before of a signed gap, read as "higher", "lower" or
    not: whether the bias grew depends on the gap's sign, which its absolute row reads."""
    difference = paired_difference(after, before)
    words = {"better": "higher", "worse": "lower", "no difference": "no difference"}
    return {**difference, "change": words[difference["verdict"]]}


def summarize(runs, tests, groups):
    """Mean ± sd over seeds per method, and CDA's seed-paired change of each measure."""
    summary = {}
    measures = {"accuracy": lambda run: run["accuracy"]}
    for group in groups:
        measures[f"gap {group}"] = lambda run, g=group: run["gaps"][g]["gap"]
        measures[f"abs gap {group}"] = lambda run, g=group: abs(run["gaps"][g]["gap"])
    for test in tests:
        measures[f"abs d {test.name}"] = lambda run, t=test.name: abs(run["seat"][t]["effect_size"])
    for name, measure in measures.items():
        plain = [measure(run) for run in runs["fine_tuned"]]
        cda = [measure(run) for run in runs["cda"]]
        reading = paired_difference if name == "accuracy" else signed
        reading = compare if name.startswith("abs ") else reading
        summary[name] = {
            "fine_tuned": mean_sd(plain),
            "cda": mean_sd(cda),
            "difference": reading(cda, plain),
        }
    return summary


def print_summary(summary):
    """The table of `summarize`: each method's mean ± sd, and CDA's seed-paired change."""

    def mean_sd_text(pair):
        mean, sd = pair
        return f"{mean:10.4f} ± " + ("  –   " if sd is None else f"{sd:.4f}")

    header = f"{'fine-tuned':>19s}{'with CDA':>19s}  CDA − fine-tuned (paired)"
    print(f"\n{'measure (mean ± sd over seeds)':50s}{header}")
    for name, row in summary.items():
        d = row["difference"]
        spread = "" if d["sd"] is None else f" ± {d['sd']:.4f}"
        cells = f"{mean_sd_text(row['fine_tuned'])}{mean_sd_text(row['cda'])}"
        print(f"{name:50s}{cells}  {d['mean']:+.4f}{spread} ({d.get('change', d['verdict'])})")


POOLINGS = ("trained", "cls", "mean", "max")


def parse_arguments(argv=None):
    """The lab's flags, each checked; a bad one exits naming the flag and what it expects."""
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", default="minilm_l6")
    parser.add_argument(
        "--pooling", default="trained", choices=POOLINGS, help="trained: the checkpoint's own"
    )
    parser.add_argument("--tests", default=",".join(SEAT_TESTS), help="comma-separated SEAT tests")
    parser.add_argument("--permutations", type=int, default=10_000, help="most partitions scored")
    parser.add_argument("--max-train-examples", type=int, default=2000, help="SST-2 sentences")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    # Full fine-tuning's rate for MiniLM-L6, chosen on validation (as the sibling labs read it),
    # not BERT-base's 5e-5.
    add_chosen_rate_argument(parser)
    add_learning_rates_argument(parser, "arm")
    parser.add_argument(
        "--validation-examples",
        type=int,
        default=1000,
        help="held-out SST-2 training sentences the rate is chosen on",
    )
    parser.add_argument("--sequence-length", type=int, default=64)
    parser.add_argument("--dtype", default="auto", choices=DTYPES)
    parser.add_argument("--seed", type=int, default=0, help="first run's seed, permutation seed")
    parser.add_argument("--seeds", type=int, default=3, help="fine-tuning runs per method")
    parser.add_argument(
        "--control-draws", type=int, default=10, help="random-weights encoders (SEAT's control)"
    )
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--run-dir", default="runs/lab22_bias")
    add_record_argument(parser)
    args = parser.parse_args(argv)
    positive = (
        "permutations", "max_train_examples", "epochs", "batch_size", "seeds", "control_draws",
        "validation_examples",
    )  # fmt: skip
    for flag in positive:
        if getattr(args, flag) < 1:
            parser.error(f"--{flag.replace('_', '-')} must be >= 1; received {getattr(args, flag)}")
    if args.seed < 0:
        parser.error(f"--seed must be >= 0; received {args.seed}")
    if not args.learning_rate > 0:
        parser.error(f"--learning-rate must be > 0; received {args.learning_rate}")
    resolve_learning_rates(parser, args)
    if args.sequence_length < 16:  # the templates and SEAT sentences need about a dozen tokens
        parser.error(f"--sequence-length must be >= 16; received {args.sequence_length}")
    args.dtype = resolve_dtype(args.dtype)
    if args.pooling == "trained":
        args.pooling = trained_pooling(args.model)
    names = [name.strip() for name in args.tests.split(",") if name.strip()]
    if not names:
        parser.error(f"--tests must name at least one SEAT test; received {args.tests!r}")
    try:
        args.association_tests = [read_association_test(name, args.data_dir) for name in names]
    except ValueError as error:
        parser.error(f"--tests: {error}")
    return args


def print_plans(plans):
    """Each arm's passes and batches, and the optimizer steps both take."""
    passes = "; ".join(
        f"{arm} {plan['epochs']} pass(es) of {plan['batches_per_epoch']} batches"
        for arm, plan in plans.items()
    )
    print(f"both arms take {plans['fine_tuned']['steps']} optimizer steps ({passes})")


def fine_tune_arms(plans, probes, args):
    """Both arms on the same seeds, each at its own rate chosen on validation: `({arm: [run
    per seed]}, {arm: the rate choice})`."""
    runs, choices = {}, {}
    seeds = [args.seed + k for k in range(args.seeds)]
    for arm, plan in plans.items():

        def train(rate, seed, arm=arm, plan=plan):
            run = fine_tune(plan, probes, seed, args, rate)
            gaps = ", ".join(
                f"{g} {v['gap']:+.4f} (p {v['p_value']:.4f})" for g, v in run["gaps"].items()
            )
            print(
                f"seed {run['seed']} {arm:10s} lr {rate:g}: accuracy {run['accuracy']:.4f}, "
                f"validation {run['validation_accuracy']:.4f}; gaps {gaps}; {run['steps']} "
                f"steps ({run['train_s']:.0f} s)",
                flush=True,
            )
            return run

        runs[arm], choices[arm] = rate_then_seeds(
            args.learning_rates, seeds, train, "validation_accuracy", shown=("accuracy",)
        )
        print(f"{arm}: peak rate {choices[arm]['chosen']:g} chosen on validation", flush=True)
    return runs, choices


SETTINGS = (
    "epochs", "batch_size", "learning_rates", "sequence_length", "permutations", "control_draws",
    "seed",
)  # fmt: skip


def main():
    args = parse_arguments()
    tests = args.association_tests
    start = time.perf_counter()

    # %% (a) d by hand, then SEAT on the pretrained encoder beside random ones of its shape.
    assert check_effect_size_by_hand() < 1e-9
    encoder, tokenizer = load_pretrained(args.model, dtype=args.dtype)
    preprocessor = BertPreprocessor(tokenizer, sequence_length=args.sequence_length)
    pretrained = seat(encoder, preprocessor, tests, args)
    control = random_control(encoder, preprocessor, tests, args)
    compared = against_random(pretrained, control)
    print(f"\nSEAT on {args.model} ({args.pooling} pooling of the top layer): d (one-sided p)")
    print_seat(
        {
            "pretrained": seat_cells(pretrained),
            f"random weights, {args.control_draws} draw(s): mean ± sd": control_cells(control),
            "pretrained − random": against_random_cells(compared),
        }
    )

    # %% (b) and (c): fine-tune on SST-2 with and without CDA, the same seeds and steps.
    limits = {"train": args.max_train_examples, "validation": args.validation_examples}
    data = {
        split: load_classification_task(
            "sst2", split, data_dir=args.data_dir, max_examples=limits.get(split)
        )
        for split in ("train", "validation", "test")
    }
    augmented = augment(data["train"])
    swapped = next((t for t in data["train"].texts if counterfactual(t) != t), None)
    print(
        f"\nCDA: {len(augmented) - len(data['train'])} of {len(data['train'])} training sentences "
        f"hold a gendered word, each added swapped; e.g. {swapped!r} → "
        f"{swapped and counterfactual(swapped)!r}"
    )
    trains = {"fine_tuned": data["train"], "cda": augmented}
    batches = {
        arm: batches_per_epoch(preprocessor, t, args.batch_size) for arm, t in trains.items()
    }
    plans = {
        arm: {**plan, "train": trains[arm]} for arm, plan in arm_plans(batches, args.epochs).items()
    }
    print_plans(plans)
    groups = behavioural_groups(args.data_dir)
    probes = {
        "test": data["test"],
        "validation": data["validation"],
        "tests": tests,
        "groups": groups,
    }
    runs, choices = fine_tune_arms(plans, probes, args)
    print("\nSEAT after fine-tuning (first seed)")
    print_seat(
        {
            "fine-tuned": seat_cells(runs["fine_tuned"][0]["seat"]),
            "with CDA": seat_cells(runs["cda"][0]["seat"]),
        }
    )
    summary = summarize(runs, tests, groups)
    print_summary(summary)
    total = time.perf_counter() - start
    print(f"\nwall time {total:.0f} s")

    report = {
        "model": args.model,
        "pooling": args.pooling,
        "seeds": args.seeds,
        "train_examples": len(data["train"]),
        "augmented_examples": len(augmented),
        "test_examples": len(data["test"]),
        "validation_examples": len(data["validation"]),
        "rate_choices": choices,
        "settings": {
            **{key: getattr(args, key) for key in SETTINGS},
            "dtype": args.dtype,
            # Both arms take the plain arm's optimizer steps (see the module docstring).
            "steps_matched_to": "fine_tuned",
            "arms": {
                arm: {key: value for key, value in plan.items() if key != "train"}
                for arm, plan in plans.items()
            },
        },
        "templates": list(TEMPLATES),
        "groups": {g: {"first": v[0], "second": v[2]} for g, v in groups.items()},
        "tests": {test.name: list(test.categories) for test in tests},
        "seat": {
            "pretrained": pretrained,
            "random_weights": control,
            "pretrained_vs_random": compared,
        },
        "runs": runs,
        "summary": summary,
        "wall_seconds": round(total, 1),
    }
    run_dir = Path(args.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "results.json").write_text(json.dumps(report, indent=1))
    record_if_requested(args, report)
    print(f"wrote {run_dir / 'results.json'}")


if __name__ == "__main__":
    main()
