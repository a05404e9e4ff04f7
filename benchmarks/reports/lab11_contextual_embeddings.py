"""The records of `labs/lab11_contextual_embeddings.py`: their section of docs/results.md and README
headline."""

from benchmarks.reports._common import markdown_table
from kbert.metrics.seed_comparison import format_difference

STEMS = ("lab11_contextual_embeddings",)

# What the lab's source claims: stated under the record's title, above what it found.
CLAIM = "contextual vectors are anisotropic, a few rogue dimensions carrying most of the cosine of random words, and z-scoring removes it (Ethayarajh 2019; Timkey & van Schijndel 2021); they separate word senses, WSD above WordNet's first sense (J&M §11.3); POS and NER are linearly decodable from hidden layers far above a random-weight control"


SET_NAMES = {
    "senseval2": "Senseval-2",
    "senseval3": "Senseval-3",
    "semeval2007": "SemEval-2007",
    "semeval2013": "SemEval-2013",
    "semeval2015": "SemEval-2015",
    "ALL_minus_semeval2007": "ALL minus SemEval-2007",
    "ALL": "ALL",
}


def render(results):
    """Tables of `labs/lab11_contextual_embeddings.py`: WSD per variant and set, anisotropy, probes."""
    wsd = results["wsd"]
    sets = list(wsd["sets"])
    variants = [
        key
        for key in wsd["sets"]["ALL"]
        if key not in ("instances", "mfs_f1", "corpus_nearest_pct")
    ]
    rows = [["instances"] + [f"{wsd['sets'][name]['instances']:,}" for name in sets]]
    for variant in variants:
        mark = "**" if variant == wsd["variant"] else ""
        rows.append(
            [f"{mark}{variant}{mark}"]
            + [f"{mark}{wsd['sets'][name][variant]:.2f}{mark}" for name in sets]
        )
    rows.append(
        ["MFS (WordNet's first sense)"] + [f"{wsd['sets'][name]['mfs_f1']:.2f}" for name in sets]
    )
    rows.append(
        ["instances with a SemCor-seen sense (%)"]
        + [f"{wsd['sets'][name]['corpus_nearest_pct']:.1f}" for name in sets]
    )
    coverage = ", ".join(f"{count:,} {source}" for source, count in wsd["coverage"].items())
    parts = _reported_wsd(wsd) + [
        f"**Word sense disambiguation** (F1, the framework's scorer). Sense embeddings from "
        f"{wsd['train_corpus']} ({wsd['train_sentences']:,} sentences, "
        f"{wsd['train_instances']:,} instances, {wsd['sense_embeddings']:,} senses; embedding "
        f"pass {wsd['train_seconds']:,.0f} s); the {wsd['test_lemma_senses']:,} WordNet senses of "
        f"the test lemmas covered as {coverage}; glosses embedded in "
        f"{wsd['gloss_seconds']:,.0f} s. In bold, the variant chosen on {wsd['development_set']} "
        f"(the development set); xW is the weight of the gloss part.",
        "",
        markdown_table(["variant"] + [SET_NAMES.get(name, name) for name in sets], rows),
        "",
        "**Anisotropy per layer** (expected cosine of random words from different sentences, "
        "the share of it carried by the top 3 dimensions, and the word-in-context AUC; raw and "
        "z-scored):",
        "",
        markdown_table(
            ["layer", "E[cos]", "z-scored", "top-3 share", "WiC AUC", "WiC AUC z-scored"],
            [
                [
                    layer,
                    f"{results['expected_cosine'][layer]:.3f}",
                    f"{results['expected_cosine_z'][layer]:.3f}",
                    f"{results['rogue_share'][layer]:.3f}",
                    f"{results['wic_auc'][layer]:.3f}",
                    f"{results['wic_auc_z'][layer]:.3f}",
                ]
                for layer in range(len(results["expected_cosine"]))
            ],
        ),
        "",
        "**Linear probes** (test accuracy %, per layer, against the random-weight control):",
        "",
    ]
    probes = results["probes"]
    layers = len(probes["pos_pretrained"])
    probe_rows = []
    for task in ("pos", "ner"):
        for kind in ("pretrained", "random"):
            sds = probes.get(f"{task}_{kind}_sd") or [None] * layers
            probe_rows.append(
                [f"{task.upper()} {kind}"]
                + [
                    _spread(value, sd)
                    for value, sd in zip(probes[f"{task}_{kind}"], sds, strict=True)
                ]
                + [f"{probes[f'{task}_majority']:.2f}"]
            )
        if f"{task}_difference" in probes:
            probe_rows.append(
                [f"{task.upper()} pretrained − random, paired by seed"]
                + [format_difference(d, scale=1.0) for d in probes[f"{task}_difference"]]
                + [""]
            )
    parts.append(
        markdown_table(["probe"] + [f"L{i}" for i in range(layers)] + ["majority"], probe_rows)
    )
    if "seeds" in probes:
        parts += [
            "",
            f"Probes: mean ± sd over {probes['seeds']} seeds, a fresh random control each.",
        ]
    return "\n".join(parts)


def _held_out(wsd):
    """`(name, row)` of ALL without the development set, the sets the variant's choice never
    saw; row is None in records made before the lab scored it."""
    name = f"ALL_minus_{wsd['development_set']}"
    return name, wsd["sets"].get(name)


def _reported_wsd(wsd):
    """The paragraph leading the WSD part: the reported variant on the sets not used to choose
    it, then on ALL as the field reports it; nothing for a record without the held-out sets."""
    name, held_out = _held_out(wsd)
    if held_out is None:
        return []
    variant, all_set = wsd["variant"], wsd["sets"]["ALL"]
    development = SET_NAMES.get(wsd["development_set"], wsd["development_set"])
    return [
        f"**Reported WSD variant** ({variant}, chosen on {development}): F1 "
        f"{held_out[variant]:.2f} on {SET_NAMES.get(name, name)}, the sets not used for the "
        f"choice (WordNet's first sense {held_out['mfs_f1']:.2f}); on ALL, the field's "
        f"convention, which includes {development}: {all_set[variant]:.2f} (first sense "
        f"{all_set['mfs_f1']:.2f}).",
        "",
    ]


def _spread(value, sd):
    return f"{value:.2f}" + ("" if sd is None else f" ± {sd:.2f}")


def headline(results):
    """The reported WSD variant against WordNet's first sense: on ALL without the development set
    (not used to choose it) with ALL beside it, or on ALL alone in records without the former."""
    wsd = results["wsd"]
    all_set = wsd["sets"]["ALL"]
    name, held_out = _held_out(wsd)
    if held_out is None:
        return (
            f"WSD on the Raganato ALL set: F1 {all_set[wsd['variant']]:.2f} ({wsd['variant']}, "
            f"trained on {wsd['train_corpus']}) vs {all_set['mfs_f1']:.2f} for WordNet's first "
            "sense"
        )
    return (
        f"WSD on Raganato's {SET_NAMES.get(name, name)} (not used to choose the variant): F1 "
        f"{held_out[wsd['variant']]:.2f} ({wsd['variant']}, trained on {wsd['train_corpus']}) vs "
        f"{held_out['mfs_f1']:.2f} for WordNet's first sense; on ALL, the field's convention: "
        f"{all_set[wsd['variant']]:.2f} vs {all_set['mfs_f1']:.2f}"
    )
