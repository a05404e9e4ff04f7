"""The records of `labs/lab19_text_to_text.py`: their section of docs/results.md and README
headline."""

from benchmarks.reports._common import markdown_table
from kbert.metrics.seed_comparison import format_difference, paired_difference

STEMS = ("lab19_text_to_text",)


def curve_cell(entry):
    """One TREC-6 cell: mean ± sd, then in brackets the share of outputs that are no label word
    (where any) and "k of n at majority" (where the record counts its runs at the majority
    class; records made before it render as they did)."""
    notes = []
    if entry["invalid"]:
        notes.append(f"{entry['invalid']:.1%} no label word")
    if "runs_at_majority" in entry:
        notes.append(f"{entry['runs_at_majority']} of {len(entry['at_majority'])} at majority")
    noted = f" ({'; '.join(notes)})" if notes else ""
    return f"{entry['mean']:.3f} ± {entry['sd']:.3f}{noted}"


def majority_caption(results):
    """The caption's clause on the majority class, "" for a record without its accuracy."""
    if "majority_accuracy" not in results:
        return ""
    return (
        f"; always answering the majority class scores {results['majority_accuracy']:.3f} on "
        "test, and each cell counts its runs that landed there (all one class, or accuracy "
        "within a point of it)"
    )


def render(results):
    """Tables of `labs/lab19_text_to_text.py`: TREC-6 per family and start, other tasks, export."""
    sizes = sorted({size for row in results["curve"].values() for size in row}, key=int)
    parameters = results["parameters"]
    pretraining = results["pretraining"]
    rows = [
        [name, f"{results['learning_rates'][name]:g}", *[curve_cell(row[size]) for size in sizes]]
        for name, row in results["curve"].items()
    ]
    held_out = {
        family: ", ".join(f"{key} {value:g}" for key, value in sorted(p["held_out"].items()))
        for family, p in pretraining.items()
    }
    parts = [
        f"Both families pretrained on the Gutenberg books for {results['budget_minutes']:g} "
        "minutes each (steps timed on this machine): the T5-style encoder-decoder with span "
        f"corruption ({parameters['encoder_decoder']:,} parameters, feed-forward "
        f"{parameters['encoder_decoder_intermediate_dim']}), the BERT-style encoder with MLM "
        f"({parameters['encoder']:,} parameters). Steps and held-out scores: "
        + "; ".join(
            f"{family} {p['steps']} steps in {p['seconds']:,.0f} s ({held_out[family]})"
            for family, p in pretraining.items()
        )
        + ".",
        "",
        f"TREC-6 test accuracy, mean ± sd of {results['seeds']} seeds (the encoder-decoder "
        "writes a label word; the encoder has a mean-pooled linear head); peak rate chosen per "
        f"start on validation{majority_caption(results)}:",
        "",
        markdown_table(["start", "rate", *[f"{int(size):,} labels" for size in sizes]], rows),
    ]
    if results.get("other_tasks"):
        parts += ["", *other_tasks_part(results["other_tasks"], results["seeds"])]
    export = results.get("export")
    if export:
        parts += [
            "",
            f"Export: `generate` signature (beam search, {export['num_beams']} beams, in the "
            f"graph); reloaded answers equal the Keras model's: {export['served_equals_keras']}.",
        ]
    for line in (family_line(results), pretraining_lines(results), below_random_line(results)):
        if line:
            parts += ["", line]
    for sample in results.get("span_samples", [])[:2]:
        parts += [
            "",
            f"- span corruption, truth “{sample['truth']}” → written “{sample['writes']}”",
        ]
    return "\n".join(parts)


def _scores_cell(scores):
    """ "accuracy 0.812 ± 0.010, invalid 0.002 ± 0.001" from a row with per-seed `runs` (its
    metrics are the runs' keys); "f1 4.0, exact_match 1.5" from a one-seed record made before."""
    if "runs" not in scores:
        return ", ".join(f"{k} {v}" for k, v in scores.items() if isinstance(v, (int, float)))
    cells = []
    for metric in scores["runs"]:
        sd = scores.get(f"{metric}_sd")
        cells.append(f"{metric} {scores[metric]:g}" + ("" if sd is None else f" ± {sd:g}"))
    return ", ".join(cells)


# Each task's metric the pretrained start is paired on: its headline metric.
PAIRED_METRIC = {"sst2": "accuracy", "squad": "f1"}


def other_tasks_part(other_tasks, seeds):
    """SST-2 and SQuAD as text to text: the table, and per task the pretrained start minus the
    random one seed by seed (where the record kept per-seed runs)."""
    with_runs = all("runs" in scores for scores in other_tasks.values())
    caption = f"mean ± sd of {seeds} seeds" if with_runs else "one seed"
    rows = [[name, _scores_cell(scores)] for name, scores in other_tasks.items()]
    parts = [
        f"Other tasks as text to text ({caption}):",
        "",
        markdown_table(["task / start", "scores"], rows),
    ]
    pairs = []
    for task, metric in PAIRED_METRIC.items():
        pretrained, random = (
            other_tasks.get(f"{task}_pretrained"),
            other_tasks.get(f"{task}_random"),
        )
        if not (pretrained and random and "runs" in pretrained and "runs" in random):
            continue
        difference = paired_difference(pretrained["runs"][metric], random["runs"][metric])
        scale = 100.0 if metric == "accuracy" else 1.0  # SQuAD's scores are in % already
        pairs.append(f"{task} {metric} {format_difference(difference, scale=scale)}")
    if pairs:
        parts += [
            "",
            "Pretrained minus random init, seed by seed (in points): " + "; ".join(pairs) + ".",
        ]
    return parts


def paired_by_size(curve, name, baseline):
    """`{size: paired_difference(name − baseline)}` over the labelled sizes both rows of `curve`
    hold, seed by seed (seed i of every row trains on the same labelled questions,
    `labelled(size, seed)` in the lab); None where a cell lacks its per-seed runs (records made
    before the runs were kept)."""
    rows, base = curve.get(name, {}), curve.get(baseline, {})
    pairs = {}
    for size in sorted(set(rows) & set(base), key=int):
        if "runs" not in rows[size] or "runs" not in base[size]:
            return None
        pairs[size] = paired_difference(rows[size]["runs"], base[size]["runs"])
    return pairs


def _by_size(pairs, digits=2):
    return [
        f"{int(size):,} labels {format_difference(difference, digits=digits)}"
        for size, difference in pairs.items()
    ]


def family_line(results):
    """Text-to-text against the encoder, both pretrained, by labelled size, seed by seed; ""
    for a record without per-seed runs."""
    pairs = paired_by_size(results["curve"], "encoder_decoder_pretrained", "encoder_pretrained")
    if not pairs:
        return ""
    return (
        "Text-to-text minus the encoder, both pretrained (the same parameters and pretraining "
        "minutes), in TREC-6 test points, seed by seed (seed i of both trains on the same "
        f"labelled questions): {'; '.join(_by_size(pairs))}."
    )


def below_random_line(results):
    """The pointer to `benchmarks/text_to_text_start`, only where the record shows what it
    explains: the pretrained encoder-decoder below its random init ("worse", seed by seed) at
    some labelled size; "" otherwise. (Runs at the majority class are counted in the table's
    cells, where the record holds them, not here.)"""
    pairs = paired_by_size(results["curve"], "encoder_decoder_pretrained", "encoder_decoder_random")
    worse = [size for size, difference in (pairs or {}).items() if difference["verdict"] == "worse"]
    if not worse:
        return ""
    return (
        "The pretrained encoder-decoder fine-tunes below its random init (seed by seed, above) "
        f"at {', '.join(f'{int(size):,}' for size in worse)} labels: "
        "`benchmarks/text_to_text_start` measures its span-corruption checkpoints (what the "
        "decoder learnt, whether it reads its source, fine-tuning per rate); see its section "
        "below."
    )


def pretraining_lines(results):
    """The claim read from the record: each family's pretrained start against its random init,
    seed by seed (seed i of both trains on the same labelled questions), by labelled size; ""
    for a record without per-seed runs."""
    findings = []
    for family, label in (("encoder_decoder", "text-to-text"), ("encoder", "encoder")):
        pairs = paired_by_size(results["curve"], f"{family}_pretrained", f"{family}_random")
        if pairs is None:
            return ""
        findings += [f"{label} at {size}" for size in _by_size(pairs)]
    if not findings:
        return ""
    return (
        "What T5 (Raffel et al. 2020) and BERT claim: pretraining beats the same model from "
        "random weights downstream. What this record shows, pretrained minus random init in "
        f"TREC-6 test points, seed by seed: {'; '.join(findings)}."
    )


def headline(results):
    """The largest size's means, then text-to-text minus the encoder per size, seed by seed
    (where the record holds the runs)."""
    pairs = paired_by_size(results["curve"], "encoder_decoder_pretrained", "encoder_pretrained")
    paired = (
        f"; text-to-text − encoder, seed by seed: {', '.join(_by_size(pairs, 1))}" if pairs else ""
    )
    return (
        f"TREC-6 with {results['labelled']:,} labels, same parameters and pretraining minutes: "
        f"text-to-text {results['text_to_text_trec_acc']:.3f} vs encoder "
        f"{results['encoder_trec_acc']:.3f} (random init {results['random_text_to_text_trec_acc']:.3f}"
        f" / {results['random_encoder_trec_acc']:.3f}){paired}"
    )
