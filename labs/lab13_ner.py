"""Lab 13: named-entity recognition on CoNLL-2003 three ways: BIO softmax, BIO + CRF, span-based.

Reproduces J&M §11.4.3 (sequence labelling with a fine-tuned encoder: a softmax over BIO tags
at the first subword of each word) and §11.5.2 (span-based NER: every span of up to 8 words is
classified as an entity type or NULL from `[s_i; e_j; g_ij]`), plus the classic CRF on top of
the emissions (Lample et al. 2016). All three start from the same pretrained MiniLM-L6 (uncased,
6 layers, hidden 384) and are scored the CoNLL way: an entity counts only when its span and its
type are both exact. Each method runs at three seeds (`--seeds`); the table gives the mean ± sd
and each method's seed-paired difference to the BIO softmax tagger (`kbert.metrics.seed_comparison`:
"no difference" inside the spread).

What it should show: the two BIO taggers land close together (a fine-tuned transformer already
captures most of what a CRF adds), the CRF never produces invalid BIO, and the uncased small
encoder sits a few points under BERT-base's published 92.4 (not-measured) because
capitalisation, the strongest single cue for names, is gone. Span-based NER learns more slowly
at this budget: nearly all of its candidate spans are NULL, so it is recall-bound (the record
prints precision and recall). Its classifier's last layer starts at a NULL prior: the default
`null_probability` of `SpanClassifier` (kbert/models/span_classifier.py), a fixed value set to
the share of NULL candidates among CoNLL-2003's short spans, not measured by this lab. Without
that prior it predicted no entity at all on 3,000 sentences. The `lab13_ner_3000_*` records in
`docs/results.md` measure this on 3,000 sentences: both BIO and span at 3e-4 and 1e-3, the
prior, and twice the epochs.

    python labs/lab13_ner.py
    python labs/lab13_ner.py --methods softmax --epochs 1 --max-train-sentences 2000
    python labs/lab13_ner.py --methods softmax,crf --label-all-subwords --combine mean
"""

import argparse
import json
from pathlib import Path

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import keras
import numpy as np

from kbert.checkpoints import load_pretrained
from kbert.data.conll2003 import CONLL2003_TAGS, read_conll2003
from kbert.data.token_classification_features import (
    IGNORE_INDEX,
    token_classification_features,
)
from kbert.layers import CRF
from kbert.metrics.entity_metrics import entity_report
from kbert.metrics.seed_comparison import format_difference, over_seeds, paired_difference
from kbert.run_records import add_record_argument, record_if_requested
from kbert.tasks import evaluate_ner
from kbert.train import TrainingSettings
from kbert.train.token_task_fine_tuning import NER_METHODS, build_ner_model, fine_tune_ner

TYPES = ("PER", "LOC", "ORG", "MISC")


# %% First-subword alignment (J&M §11.4.3), written out: the encoder sees WordPiece pieces, the
# tags belong to words, so each word's tag goes on its first piece and every other piece
# ([CLS], [SEP], continuations) gets IGNORE_INDEX (-100), which the loss skips.
def align_first_subwords(tokenizer, words, tag_ids):
    """Pieces of `[CLS] words [SEP]`, their ids, and one label per piece."""
    ids, labels = [tokenizer.cls_token_id], [IGNORE_INDEX]
    for word, tag in zip(words, tag_ids, strict=True):
        pieces = tokenizer.tokenize(word).numpy().tolist() or [tokenizer.unknown_token_id]
        ids += pieces
        labels += [tag] + [IGNORE_INDEX] * (len(pieces) - 1)
    ids.append(tokenizer.sep_token_id)
    labels.append(IGNORE_INDEX)
    return [tokenizer.id_to_token(i) for i in ids], ids, labels


def show_first_subword_alignment(tokenizer, sentences, tag_names=CONLL2003_TAGS):
    """Prints the alignment of the first short sentence with a word cut into `##` pieces,
    checked equal to `token_classification_features` (the lab's training rows)."""
    for sentence in sentences:
        tag_ids = [tag_names.index(tag) for tag in sentence.tags]
        tokens, ids, labels = align_first_subwords(tokenizer, sentence.words, tag_ids)
        if any(token.startswith("##") for token in tokens) and len(tokens) <= 24:
            break
    rows = token_classification_features(
        [list(sentence.words)],
        tokenizer,
        tags=[list(sentence.tags)],
        tag_names=tag_names,
        sequence_length=max(len(tokens), 3),
    )
    assert rows["token_ids"][0].tolist() == ids and rows["labels"][0].tolist() == labels
    print(f"First-subword labels for {' '.join(sentence.words)!r} (as kbert aligns them):")
    for token, label in zip(tokens, labels, strict=True):
        print(f"  {token:<14} {label:>5}  {tag_names[label] if label != IGNORE_INDEX else '-'}")
    return tokens, labels


# %% The CRF's Viterbi decode, written out: the best tag path under emission scores plus
# tag-to-tag transition scores (and start/end scores), one dynamic-programming sweep forward
# keeping the best score of every tag and a backpointer, then a walk back.
def viterbi_by_hand(emissions, transitions, start, end):
    """Best path and its score; emissions `(seq, num_tags)`, transitions `(from, to)`."""
    score = start + emissions[0]  # (num_tags,)
    pointers = []
    for emission in emissions[1:]:
        candidates = score[:, None] + transitions  # (from_tag, to_tag)
        pointers.append(candidates.argmax(axis=0))
        score = candidates.max(axis=0) + emission
    score = score + end
    path = [int(score.argmax())]
    for pointer in reversed(pointers):
        path.append(int(pointer[path[-1]]))
    return path[::-1], float(score.max())


def check_viterbi_by_hand(num_tags=5, length=6, seed=0):
    """Prints the hand-written decode of random scores, checked equal to `CRF.decode`."""
    rng = np.random.default_rng(seed)
    emissions = rng.normal(size=(length, num_tags)).astype("float32")
    transitions, start, end = (
        rng.normal(size=shape).astype("float32")
        for shape in [(num_tags, num_tags), num_tags, num_tags]
    )
    path, score = viterbi_by_hand(emissions, transitions, start, end)
    crf = CRF(num_tags)
    crf.build()
    crf.transitions.assign(transitions)
    crf.start_transitions.assign(start)
    crf.end_transitions.assign(end)
    tags, scores = crf.decode(emissions[None], np.ones((1, length), "int32"))
    library_path = keras.ops.convert_to_numpy(tags)[0].tolist()
    difference = abs(float(keras.ops.convert_to_numpy(scores)[0]) - score)
    print(
        f"Viterbi by hand on {length} positions × {num_tags} tags: path {path}, score "
        f"{score:.4f}; kbert's CRF.decode: path {library_path}, |Δ score| {difference:.1e}"
    )
    assert path == library_path and difference < 1e-4, (path, library_path, difference)
    return path


def run_method(method, data, args, seed):
    # %% A fresh copy of the pretrained encoder for every method and seed, so they start equal;
    # the seed draws the new head's weights and the order of the training sentences.
    keras.utils.set_random_seed(seed)
    encoder, tokenizer = load_pretrained(args.model, dtype=args.dtype)
    model = build_ner_model(method, encoder, CONLL2003_TAGS)
    train = data["train"]
    history, seconds = fine_tune_ner(
        model,
        tokenizer,
        [s.words for s in train],
        [s.tags for s in train],
        CONLL2003_TAGS,
        settings=TrainingSettings(
            epochs=args.epochs,
            batch_size=args.batch_size,
            learning_rate=args.learning_rate,
            seed=seed,
            verbose=args.verbose,
        ),
        max_span_length=args.max_span_length,
        label_all_subwords=args.label_all_subwords,
    )
    # %% Score on the held-out sets, word by word from each word's first subword.
    scores = {}
    for split in ("validation", "test"):
        sentences = data[split]
        scores[split] = evaluate_ner(
            model,
            tokenizer,
            [s.words for s in sentences],
            [s.tags for s in sentences],
            CONLL2003_TAGS,
            max_span_length=args.max_span_length,
            combine=args.combine,
        )
    test = scores["test"]
    print(f"\n{method}, seed {seed}: test entities\n{entity_report(test['entity'])}")
    return {
        "method": method,
        "seed": seed,
        "train_sentences": len(train),
        "train_seconds": round(seconds, 1),
        "train_sentences_per_s": round(len(train) * args.epochs / seconds, 1),
        "final_loss": float(history.history["loss"][-1]),
        "validation_f1": round(100 * scores["validation"]["entity"]["f1"], 2),
        "test_f1": round(100 * test["entity"]["f1"], 2),
        "test_precision": round(100 * test["entity"]["precision"], 2),
        "test_recall": round(100 * test["entity"]["recall"], 2),
        "test_token_accuracy": round(100 * test.get("token_accuracy", float("nan")), 2),
        "repaired_tags": test.get("repaired_tags"),
        "per_type_f1": {
            kind: round(100 * test["entity"]["per_type"].get(kind, {"f1": 0.0})["f1"], 2)
            for kind in TYPES
        },
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--methods", default=",".join(NER_METHODS), help="comma-separated: softmax, crf, span"
    )
    parser.add_argument("--model", default="minilm_l6")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=3e-4)
    parser.add_argument("--max-span-length", type=int, default=8)
    parser.add_argument(
        "--label-all-subwords",
        action="store_true",
        help="label every subword (continuations of B-X get I-X), not only the first",
    )
    parser.add_argument(
        "--combine",
        default="first",
        choices=("first", "mean"),
        help="read a word's tag from its first subword (J&M) or from the mean "
        "of its subwords' distributions",
    )
    parser.add_argument("--dtype", default="float32", help="or mixed_bfloat16")
    parser.add_argument("--max-train-sentences", type=int, default=None, help="(smoke tests)")
    parser.add_argument("--max-eval-sentences", type=int, default=None, help="(smoke tests)")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--run-dir", default="runs/lab13_ner")
    parser.add_argument("--seed", type=int, default=0, help="the first run's seed")
    parser.add_argument("--seeds", type=int, default=3, help="fine-tuning runs per method")
    parser.add_argument("--verbose", type=int, default=2)
    add_record_argument(parser)
    args = parser.parse_args()
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = [m for m in methods if m not in NER_METHODS]
    if unknown or not methods:
        parser.error(f"--methods must name some of {NER_METHODS}; received {args.methods!r}")
    if args.seeds < 1 or args.epochs < 1:
        parser.error(
            f"--seeds and --epochs must be positive integers; received {args.seeds}, {args.epochs}"
        )

    # %% CoNLL-2003: 14,041 training sentences, 3,250 validation, 3,453 test.
    data = {
        "train": read_conll2003("train", args.data_dir, args.max_train_sentences),
        "validation": read_conll2003("validation", args.data_dir, args.max_eval_sentences),
        "test": read_conll2003("test", args.data_dir, args.max_eval_sentences),
    }
    # %% The two techniques the taggers rest on, by hand and against kbert's (seconds).
    show_first_subword_alignment(load_pretrained(args.model)[1], data["train"])
    check_viterbi_by_hand()
    seeds = [args.seed + offset for offset in range(args.seeds)]
    rows = [
        summarize([run_method(method, data, args, seed) for seed in seeds]) for method in methods
    ]

    # %% One table: test F1 per entity type and overall, mean over seeds (± sd), and each
    # method's seed-paired difference to the BIO softmax tagger (J&M's), in F1 points.
    header = f"{'method':<8} {'train s':>8} {'dev F1':>7} {'test F1':>14} " + " ".join(
        f"{kind:>6}" for kind in TYPES
    )
    print(f"\nCoNLL-2003 test, entity F1 (%), exact span and type; {len(seeds)} seed(s)")
    print(header)
    for row in rows:
        spread = "" if row["test_f1_sd"] is None else f" ± {row['test_f1_sd']:.2f}"
        print(
            f"{row['method']:<8} {row['train_seconds']:>8.0f} {row['validation_f1']:>7.2f} "
            f"{row['test_f1']:>6.2f}{spread:>8} "
            + " ".join(f"{row['per_type_f1'][k]:>6.2f}" for k in TYPES)
        )
    differences = differences_to_softmax(rows)
    for method, difference in differences.items():
        print(f"{method} − softmax, test F1: {format_difference(difference, scale=1.0)}")
    run_dir = Path(args.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "results.json").write_text(json.dumps(rows, indent=2) + "\n")
    record_if_requested(
        args,
        {
            "methods": {row["method"]: row for row in rows},
            "differences": differences,
            "settings": {"seeds": len(seeds), "seed": args.seed, "epochs": args.epochs},
        },
    )
    print(json.dumps({row["method"]: row["test_f1"] for row in rows}))


def summarize(runs):
    """One method's runs as one row: each score's mean over seeds (`<score>_sd` beside the F1s),
    the runs themselves under "runs"."""
    row = {"method": runs[0]["method"], "train_sentences": runs[0]["train_sentences"]}
    scores = (
        "train_seconds",
        "train_sentences_per_s",
        "validation_f1",
        "test_f1",
        "test_precision",
        "test_recall",
        "test_token_accuracy",
    )
    finite = [
        key for key in (*scores, "final_loss") if all(np.isfinite([run[key] for run in runs]))
    ]
    measured = [key for key in scores if key in finite]
    row |= over_seeds(runs, measured, spread=("validation_f1", "test_f1"), digits=2)
    row |= over_seeds(runs, ["final_loss"], spread=()) if "final_loss" in finite else {}
    # Token accuracy is not measured for span-based NER; a diverged run's loss is reported as
    # NaN rather than lost with the rest of the row.
    row |= {key: float("nan") for key in (*scores, "final_loss") if key not in finite}
    repaired = [run["repaired_tags"] for run in runs if run["repaired_tags"] is not None]
    row["repaired_tags"] = sum(repaired) if repaired else None
    row["per_type_f1"] = {
        kind: round(float(np.mean([run["per_type_f1"][kind] for run in runs])), 2) for kind in TYPES
    }
    row["runs"] = runs
    return row


def differences_to_softmax(rows):
    """Each method's seed-paired test-F1 difference to the BIO softmax tagger (F1 points)."""
    by_method = {row["method"]: row for row in rows}
    if "softmax" not in by_method:
        return {}
    baseline = [run["test_f1"] for run in by_method["softmax"]["runs"]]
    return {
        method: paired_difference([run["test_f1"] for run in row["runs"]], baseline)
        for method, row in by_method.items()
        if method != "softmax"
    }


if __name__ == "__main__":
    main()
