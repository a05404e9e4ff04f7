"""Regenerates `docs/results.md` from the recorded runs in `docs/results/*.json`.

Each record (written by `kbert.run_records.write_run_record`, e.g. a lab run with `--record`)
holds its numbers, command, commit, date, wall time and machine; this page is made from those
files only, so no published number is copied by hand. A record without its own table renderer
below is listed with its command and its top-level numbers.

    python -m benchmarks.report            # writes docs/results.md
    python -m benchmarks.report --check    # exit 1 when docs/results.md is out of date
"""

import argparse
import json
import re
import sys
from pathlib import Path

from benchmarks.reports._common import NEAR_MAJORITY, UNEXPLAINED, markdown_table, provenance

ROOT = Path(__file__).resolve().parents[1]
SET_NAMES = {
    "senseval2": "Senseval-2",
    "senseval3": "Senseval-3",
    "semeval2007": "SemEval-2007",
    "semeval2013": "SemEval-2013",
    "semeval2015": "SemEval-2015",
    "ALL": "ALL",
}


def contextual_embeddings_section(results):
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
    parts = [
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
    probe_rows = [
        [f"{task.upper()} {kind}"]
        + [f"{value:.2f}" for value in probes[f"{task}_{kind}"]]
        + [f"{probes[f'{task}_majority']:.2f}"]
        for task in ("pos", "ner")
        for kind in ("pretrained", "random")
    ]
    parts.append(
        markdown_table(["probe"] + [f"L{i}" for i in range(layers)] + ["majority"], probe_rows)
    )
    return "\n".join(parts)


def pretraining_section(results):
    """Table of `labs/lab01_pretraining.py`: one row per objective."""
    prefixes = {"causal": "clm", "masked": "mlm", "electra": "rtd"}
    measure = {
        "causal": "next-token accuracy",
        "masked": "masked-token accuracy",
        "electra": "replaced/original accuracy",
    }
    rows = []
    for part, r in results.items():
        prefix = prefixes[part]
        perplexity = r.get(f"{prefix}_perplexity")
        # Records before the --layer-norm flag: causal pre-LN, the others post-LN (BERT).
        layer_norm = r.get("layer_norm") or ("pre" if part == "causal" else "post")
        rows.append(
            [
                f"{part} ({layer_norm}-LN)",
                f"{r['parameters'] / 1e6:.1f}M",
                f"{r['steps']:,}",
                r.get("budget_minutes") or "-",
                f"{r['train_s']:,.0f}",
                f"{r['train_examples_per_s']:.1f}",
                f"{r[f'{prefix}_loss']:.3f}",
                "-" if perplexity is None else f"{perplexity:.1f}",
                f"{r['word_perplexity']:.1f}" if "word_perplexity" in r else "-",
                f"{r[f'{prefix}_accuracy']:.3f} ({measure[part]})",
            ]
        )
    parts = [
        markdown_table(
            [
                "objective",
                "encoder params",
                "steps",
                "budget (min)",
                "train s",
                "train sequences/s",
                "held-out loss",
                "sub-word ppl",
                "word ppl",
                "held-out accuracy",
            ],
            rows,
        )
    ]
    samples = [
        (prompt, text)
        for r in results.values()
        for prompt, strategy, text in r.get("samples", [])
        if strategy == "top_p"
    ]
    if samples:
        parts += [
            "",
            "Nucleus-sampled continuations (p = 0.9, temperature 0.8) of the causal model:",
            "",
        ]
        parts += [f"- *{prompt}* … {text}" for prompt, text in samples]
    return "\n".join(parts)


def transfer_section(results):
    """Tables of `benchmarks/transfer.py`: the learning curve and the chosen learning rates."""
    curve = results["curve"]
    sizes = sorted({size for by_size in curve.values() for size in by_size}, key=int)
    rows = [
        [name, results["chosen_learning_rate"][name]]
        + [f"{by_size[size]['mean']:.3f} ± {by_size[size]['sd']:.3f}" for size in sizes]
        for name, by_size in curve.items()
    ]
    parts = []
    if results.get("objective"):
        parts += [
            f"**Best gap at ≤ 1,000 labels:** {results['objective']} "
            f"{results['pretrained_acc']:.3f} vs {results['control']} "
            f"{results['random_acc']:.3f} with {results['labelled']:,} labelled questions "
            f"({results['gap_points']:+.1f} points, mean of {results['seeds']} seeds).",
            "",
        ]
    parts += [
        f"TREC-6 test accuracy (mean ± sd over {results['seeds']} seeds; majority class "
        f"{results['majority_class_acc']:.3f}) by labelled training questions:",
        "",
        markdown_table(["start", "lr"] + [f"{int(size):,}" for size in sizes], rows),
        "",
        "Learning rate per start, chosen on 500 held-out training questions at 1,000 "
        "labels (validation accuracy):",
        "",
        markdown_table(
            ["start"] + list(next(iter(results["learning_rates"].values()))),
            [
                [name] + [f"{value:.3f}" for value in rates.values()]
                for name, rates in results["learning_rates"].items()
            ],
        ),
    ]
    controls = {
        name: ("random_causal" if name == "causal" else "random_bidirectional")
        for name in curve
        if not name.startswith("random_")
    }
    gaps = [
        f"{name} vs {control}: "
        + ", ".join(
            f"{int(size):,}: {100 * (curve[name][size]['mean'] - curve[control][size]['mean']):+.1f}"
            for size in sizes
        )
        for name, control in controls.items()
        if control in curve
    ]
    if gaps:
        parts += [
            "",
            "Gap to the random control in points, by labelled questions: " + "; ".join(gaps) + ".",
        ]
    if results.get("figure"):
        parts += ["", f"![learning curve]({Path(results['figure']).relative_to('docs')})"]
    return "\n".join(parts)


def long_inputs_section(results):
    """Table of `benchmarks/long_inputs.py`: accuracy by training x reading strategy, speed."""
    readings = list(results["reviews_per_s"])
    rows = [
        [training, f"{results['train_seconds'][training]:,.0f}"]
        + [f"{row[reading]:.4f}" if reading in row else "-" for reading in readings]
        for training, row in results["accuracy"].items()
    ]
    rows.append(
        ["reviews/s (reading)", ""] + [f"{results['reviews_per_s'][r]:.1f}" for r in readings]
    )
    rows.append(
        ["windows per review", ""] + [f"{results['windows_per_review'][r]:.2f}" for r in readings]
    )
    return "\n".join(
        [
            f"{results['model']} fine-tuned on {results['train_reviews']:,} IMDb training reviews "
            f"({results['epochs']} epochs, {results['sequence_length']} tokens per window) once "
            "per training strategy, each model then read every way; accuracy on the first "
            f"{results['test_reviews']:,} test reviews longer than the window:",
            "",
            markdown_table(["trained on", "train s"] + readings, rows),
        ]
    )


def transfer_probes_section(results):
    """Table of `benchmarks/transfer_probes.py`: probe accuracy per layer, starts and controls."""
    accuracy = results["probe_accuracy"]
    layers = max(len(values) for values in accuracy.values())
    header = ["encoder"] + ["emb"] + [str(layer) for layer in range(1, layers)]
    rows = [[name] + [f"{value:.3f}" for value in values] for name, values in accuracy.items()]
    gains = [
        f"{name} {gain['gain_points']:+.1f} points at layer {gain['layer']} "
        f"({gain['accuracy']:.3f} vs {results['control_of'][name]} {gain['control']:.3f})"
        for name, gain in results["best_layer_gain"].items()
    ]
    parts = [
        f"Linear probes (softmax regression on the frozen, mean-pooled layer) trained on "
        f"{results['train_size']:,} TREC-6 questions, test accuracy on {results['test_size']} "
        f"(majority class {results['majority_class_acc']:.3f}); random controls are the mean of "
        f"{results['control_seeds']} seeds:",
        "",
        markdown_table(header, rows),
        "",
        "Best layer against its control: " + "; ".join(gains) + ".",
    ]
    if results.get("figure"):
        parts += ["", f"![probes]({Path(results['figure']).relative_to('docs')})"]
    return "\n".join(parts)


def _setting(row, groups):
    """A grid row's setting in words; discriminative rows name their lowest group's rate."""
    options = row.get("options", {})
    if "factor" in options:
        bottom = row["learning_rate"] / options["factor"] ** (groups - 1)
        return f"top {row['learning_rate']:g}, factor {options['factor']:g} (lowest {bottom:.1e})"
    if "strength" in options:
        return f"λ {options['strength']:g}, lr {row['learning_rate']:g}"
    return f"lr {row['learning_rate']:g}"


def _grid_rows(outcome, groups, prefix=()):
    chosen = set(outcome["chosen"].values())
    rows = []
    for row in outcome["rows"]:
        mark = "**" if row["label"] in chosen else ""
        spread = "" if row["acc_sd"] is None else f" ± {row['acc_sd']:.3f}"
        rows.append(
            [
                *prefix,
                row["method"],
                _setting(row, groups),
                f"{mark}{row['val_mean']:.3f}{mark}",
                f"{mark}{row['acc_mean']:.3f}{spread}{mark}",
                f"{row['train_s']:.0f}",
            ]
        )
    return rows


def adaptation_grid_section(results):
    """Tables of `benchmarks/adaptation_grid.py`: every grid, the chosen settings in bold."""
    settings, majority = results["settings"], results["majority_class_acc"]
    header = ["method", "setting", "validation", "test (mean ± sd)", "train s"]
    parts = [
        f"TREC-6, {settings['train_examples']:,} training questions (the multitask study: "
        f"fewer), {settings['epochs']} epochs, batch {settings['batch_size']}, "
        f"{settings['seeds']} seeds; each method's setting (bold) chosen on the "
        f"{settings['validation_examples']} held-out validation questions, test = TREC_10. "
        f"Majority class: validation {majority['validation']:.3f}, test {majority['test']:.3f}.",
    ]
    titles = {
        "rates": "Full fine-tuning's rate against discriminative rates (top rate × factor; "
        "the lowest layer group's peak rate in brackets)",
        "anchors": "L2-SP and EWC λ, at full fine-tuning's chosen rate",
        "multitask": "Classification 1.0 + causal-LM 0.5 against full fine-tuning, few labels",
        "peft": "LoRA, prefix and prompt tuning, each at its own rates",
    }
    runs = [
        row
        for by_start in results["studies"].values()
        for outcome in by_start.values()
        for each in (outcome.values() if "rows" not in outcome else [outcome])
        if isinstance(each, dict) and "rows" in each
        for row in each["rows"]
    ]
    total = sum(row["train_s"] * row["seeds"] for row in runs)
    parts += [
        "",
        f"Training time summed over the {sum(row['seeds'] for row in runs)} runs: "
        f"{total / 60:,.0f} min (the wall time above counts only the recording call; rows "
        "resumed from an earlier, interrupted call are reused, not rerun).",
    ]
    for name, by_start in results["studies"].items():
        for start, outcome in by_start.items():
            groups = results["layer_groups"][start]
            if name == "multitask":
                rows = [
                    row
                    for size, each in outcome.items()
                    for row in _grid_rows(each, groups, (f"{int(size):,} ({each['epochs']} ep.)",))
                ]
                table = markdown_table(["labels"] + header, rows)
            else:
                table = markdown_table(header, _grid_rows(outcome, groups))
            parts += ["", f"**{titles[name]}: {start}** ({groups} layer groups)", "", table]
    return "\n".join(parts)


def comparison_section(results):
    """Table of an adaptation comparison (labs 3–6, 15, 16, `benchmarks/adaptation.py`)."""
    validation = any(row.get("val_mean") is not None for row in results["rows"])
    rows = []
    for row in results["rows"]:
        spread = "" if row["acc_sd"] is None else f" ± {row['acc_sd']:.3f}"
        rows.append(
            [
                row["start"],
                row["label"],
                f"{row['trainable_params']:,} ({row['trainable_pct']:.2f}%)",
                *([f"{row['val_mean']:.3f}"] if validation else []),
                f"{row['acc_mean']:.3f}{spread} (n={row['seeds']})",
                f"{row['train_s']:.0f}",
            ]
        )
    starts = ", ".join(f"{name}: `{path}`" for name, path in results["starts"].items())
    return "\n".join(
        [
            f"TREC-6, {results['train_examples']:,} training questions, {results['epochs']} "
            f"epochs, batch {results['batch_size']}, length {results['sequence_length']}, "
            f"{results['seeds']} seed(s); validation = {results['validation_examples']} "
            f"held-out training questions, test = TREC_10 ({results['test_examples']}). "
            f"Starts: {starts}.",
            "",
            markdown_table(
                ["start", "method", "trainable"]
                + (["validation"] if validation else [])
                + ["test (mean ± sd)", "train s per run"],
                rows,
            ),
        ]
    )


def _comparison_headline(results):
    parts = []
    for start in dict.fromkeys(row["start"] for row in results["rows"]):
        rows = [row for row in results["rows"] if row["start"] == start]
        best = max(rows, key=lambda row: row["acc_mean"])
        full = next((row for row in rows if row["label"] == "full"), None)
        text = f"{start}: best {best['label']} {best['acc_mean']:.3f}"
        if full is not None and full is not best:
            text += f" (full {full['acc_mean']:.3f})"
        parts.append(text)
    return "TREC-6 test accuracy, " + "; ".join(parts)


def document_classification_section(results):
    """Table of `labs/lab07_document_classification.py`: ULMFiT stage 1 or not, by labels."""
    settings, language_model = results["settings"], results["language_model"]
    names = {"ulmfit": "LM fine-tuned, then classifier", "plain": "classifier only"}
    rows = []
    for size, by_variant in results["results"].items():
        for name, row in by_variant.items():
            spread = "" if row["test_sd"] is None else f" ± {row['test_sd']:.3f}"
            rows.append(
                [
                    f"{int(size):,}",
                    names.get(name, name),
                    f"{row['val_mean']:.3f}",
                    f"{row['test_mean']:.3f}{spread} (n={row['seeds']})",
                    f"{row['train_s']:.0f}",
                ]
            )
    gains = ", ".join(
        f"{int(size):,}: {gain:+.1f}" for size, gain in results["gain_points"].items()
    )
    return "\n".join(
        [
            f"{results['model']} on {results['task']}, {settings['sequence_length']} tokens; stage 1 "
            f"on {language_model['lm_examples']:,} unlabelled training texts, held-out LM loss "
            f"{language_model['lm_loss_before']:.3f} → {language_model['lm_loss_after']:.3f}; "
            f"scored on {settings['validation_examples']:,} validation and "
            f"{settings['test_examples']:,} test documents.",
            "",
            markdown_table(
                ["labelled", "start", "validation", "test (mean ± sd)", "train s per run"], rows
            ),
            "",
            f"Stage 1's gain in test points, by labelled documents: {gains or 'not measured'}.",
        ]
    )


def _document_classification_headline(results):
    gains = ", ".join(
        f"{int(size):,}: {gain:+.1f}" for size, gain in results["gain_points"].items()
    )
    start = Path(results["model"]).name
    return (
        f"ULMFiT stage 1 on {results['task']} from {start}, test points gained by labels: {gains}"
    )


def tokenizer_parity_section(results):
    """Table of `benchmarks/tokenizer_parity.py`: agreement with each reference."""
    references = {
        "bpe": "Hugging Face BPE (characters, `</w>`), ids and offsets",
        "byte_level_bpe": "Hugging Face byte-level BPE (GPT-2), ids and offsets",
        "bpe_in_graph": "the same BPE file through `GraphBytePairTokenizer` (core ops and "
        "tf-text's regex split, as in an exported graph) vs Hugging Face, ids and offsets",
        "byte_level_bpe_in_graph": "the same byte-level BPE file through "
        "`GraphBytePairTokenizer` vs Hugging Face, ids and offsets",
        "unigram": "Hugging Face Unigram (Metaspace), ids and offsets",
        "sentencepiece": "sentencepiece unigram (identity normalization), ids",
        "sentencepiece_in_graph": "the same sentencepiece model through `SentencePieceTokenizer` "
        "(tf-text's SentencePiece ops, as in an exported graph) vs sentencepiece, ids",
        "kbert_unigram_in_graph": "kbert's own unigram model through `SentencePieceTokenizer` vs "
        "kbert's Python `UnigramTokenizer`, ids",
    }
    pipelines = {
        "pipeline_bpe_nfkc_lowercase": "BPE; NFKC + Lowercase; Whitespace",
        "pipeline_roberta_byte_level_bpe": "byte-level BPE; ByteLevel with prefix space; "
        "RobertaProcessing (offsets trimmed)",
        "pipeline_byte_level_bpe_nfc": "byte-level BPE; NFC; Split regex + ByteLevel without "
        "its regex (Llama 3's shape); ByteLevel post-processor",
        "pipeline_bpe_strip_accents_punctuation_digits": "BPE; NFD + StripAccents + Lowercase "
        "+ Strip; WhitespaceSplit + Punctuation + Digits; BertProcessing",
        "pipeline_bpe_replace_prepend_split": "BPE; NFKD + Replace + Prepend; two Splits "
        "(merged with previous, with next); TemplateProcessing",
        "pipeline_unigram_nmt_nfkc_metaspace": "Unigram; Nmt + NFKC + Replace; Metaspace",
        "pipeline_t5_precompiled_unigram": "sentencepiece unigram converted as T5's: "
        "Precompiled nmt_nfkc charsmap + Replace; Metaspace; template `$A </s>`",
        "pipeline_albert_precompiled_unigram": "the same model as ALBERT's: Replace ×2 + NFKD + "
        "StripAccents + Lowercase + Precompiled + Replace; Metaspace (first); template",
        "pipeline_roberta_byte_level_bpe_in_graph": "the RoBERTa file through "
        "`GraphBytePairTokenizer` (prefix space and trimming in graph ops), no special tokens",
    }
    rows = [
        [name, what, f"{results[name + '_agreement']:.4%}", f"{results[name + '_seconds']:.1f}"]
        for name, what in references.items()
        if name + "_agreement" in results
    ]
    pipeline_rows = [
        [
            name.removeprefix("pipeline_"),
            what,
            f"{results[name + '_agreement']:.4%}",
            f"{results[name + '_seconds']:.1f}",
        ]
        for name, what in pipelines.items()
        if name + "_agreement" in results
    ]
    # The other pipelines the graph layers run: by ids, and offsets where they give them.
    pipeline_rows += [
        [
            name.removeprefix("pipeline_") + "_in_graph",
            "the same file through the graph layer (`GraphBytePairTokenizer` or "
            "`SentencePieceTokenizer`), no special tokens, "
            + results.get(name + "_in_graph_compares", "ids and offsets")
            + _graph_disagreement_note(results, name),
            f"{results[name + '_in_graph_agreement']:.4%}",
            f"{results[name + '_in_graph_seconds']:.1f}",
        ]
        for name in pipelines
        if name + "_in_graph_agreement" in results and name + "_in_graph" not in pipelines
    ]
    pipeline_lines = []
    if pipeline_rows:
        pipeline_lines = [
            "",
            f"Whole `tokenizer.json` pipelines (normalizer; pre-tokenizer; post-processor), "
            f"each loaded by `from_huggingface` and compared with `tokenizers` by ids and "
            f"offsets (special tokens added where there is a post-processor) on "
            f"{results['pipeline_texts']:,} held-out texts: reviews, dialogue, books and "
            "reviews or dialogue rewritten with accents, combining marks, full-width forms, "
            "ligatures and emoji (trained on "
            f"{results['pipeline_train_texts']:,} texts):",
            "",
            markdown_table(["pipeline", "components", "texts identical", "kbert s"], pipeline_rows),
        ]
    refused = [f"- {what}: {message}" for what, message in (results.get("refusals") or {}).items()]
    if refused:
        pipeline_lines += ["", "Still refused, with the loader's message:", "", *refused]
    in_graph_refused = sorted(results.get("pipeline_in_graph_refusals") or {})
    if in_graph_refused:
        pipeline_lines += [
            "",
            "The graph layers refuse, naming the component: "
            + ", ".join(name.removeprefix("pipeline_") for name in in_graph_refused)
            + " (they run in Python only).",
        ]
    return "\n".join(
        [
            f"Each reference trained at {results['vocabulary_size']:,} tokens on "
            f"{results['train_texts']:,} texts (TREC-6 train, half of WikiText-2 valid); kbert "
            f"loads its file; {results['texts']:,} held-out texts compared (TREC-6 test, SST-2, "
            "WikiText-2):",
            "",
            markdown_table(["kbert tokenizer", "reference", "texts identical", "kbert s"], rows),
        ]
        + [
            f"\n`{name}`: {results[name + '_disagreements_that_are_ties']} of its "
            f"{round((1 - results[name + '_agreement']) * results['texts'])} disagreements are "
            "exact ties (both segmentations have the same total log probability in float32): "
            "tf-text's bundled SentencePiece breaks ties the other way from the `sentencepiece` "
            "package, whose choice kbert's Python tokenizer follows."
            for name in ("sentencepiece_in_graph", "kbert_unigram_in_graph")
            if name + "_disagreements_that_are_ties" in results
        ]
        + pipeline_lines
    )


def _tokenizer_parity_headline(results):
    shares = {
        name.replace("_", " "): results[name + "_agreement"]
        for name in (
            "bpe",
            "byte_level_bpe",
            "bpe_in_graph",
            "byte_level_bpe_in_graph",
            "unigram",
            "sentencepiece",
            "sentencepiece_in_graph",
            "kbert_unigram_in_graph",
        )
        if name + "_agreement" in results
    }
    pipelines = {
        name: share
        for name, share in results.items()
        if name.startswith("pipeline_") and name.endswith("_agreement")
    }
    # The summary names only the comparisons short of 100%; the page has every one.
    short = [
        f"{name}: {count:,} differ{'s' if count == 1 else ''}"
        for name, share in shares.items()
        for count in [round((1 - share) * results["texts"])]
        if share < 1
    ]
    headline = (
        f"{len(shares) - len(short)} of {len(shares)} identical on all "
        f"{results['texts']:,} texts" + (f" ({'; '.join(short)})" if short else "")
    )
    if pipelines:
        identical = sum(share == 1 for share in pipelines.values())
        headline += (
            f"; tokenizer.json pipelines: {identical} of {len(pipelines)} on all "
            f"{results['pipeline_texts']:,}"
            + (f" (lowest {min(pipelines.values()):.4%})" if identical < len(pipelines) else "")
        )
    return headline


def dialog_section(results):
    """Tables of `labs/lab09_dialog.py`: held-out perplexity and Hits@1 per start, samples."""
    settings = results["settings"]
    rows = [
        [
            name,
            f"{r['before']['perplexity']:,.1f} → {r['perplexity']:,.1f}",
            f"{r['before']['hits_at_1']:.3f} → {r['hits_at_1']:.3f}",
            f"{r['train_choice_accuracy']:.3f}",
        ]
        for name, r in results["results"].items()
    ]
    parts = [
        f"PERSONA-CHAT (ConvAI2 validation split by persona): {results['train_replies']:,} "
        f"training replies, {results['held_out_replies']:,} held-out replies of unseen personas; "
        f"{settings['epochs']} epochs, batch {settings['batch_size']}, lr "
        f"{settings['learning_rate']:g}, {settings['sequence_length']} tokens, history "
        f"{settings['max_history']}; start `{settings['lab01_model']}`. Hits@1 among "
        f"{results['candidates']} candidates (chance {1 / results['candidates']:.3f}); "
        "before → after fine-tuning:",
        "",
        markdown_table(["start", "held-out perplexity", "Hits@1", "train choice accuracy"], rows),
    ]
    for sample in results.get("samples", []):
        replies = "; ".join(
            f"{name}: “{sample[name]}”" for name in results["results"] if name in sample
        )
        parts += [
            "",
            f"- persona “{' '.join(sample['persona'])}”, partner “{sample['partner']}” → {replies}",
        ]
    return "\n".join(parts)


def _dialog_headline(results):
    cells = ", ".join(
        f"{name} Hits@1 {results['hits_at_1'][name]:.3f} / perplexity "
        f"{results['perplexity'][name]:,.1f}"
        for name in results["hits_at_1"]
    )
    return f"TransferTransfo on PERSONA-CHAT, held-out personas: {cells}"


def text_to_text_section(results):
    """Tables of `labs/lab19_text_to_text.py`: TREC-6 per family and start, other tasks, export."""
    sizes = sorted({size for row in results["curve"].values() for size in row}, key=int)
    parameters = results["parameters"]
    pretraining = results["pretraining"]
    rows = []
    for name, row in results["curve"].items():
        cells = [
            f"{row[size]['mean']:.3f} ± {row[size]['sd']:.3f}"
            + (f" ({row[size]['invalid']:.1%} no label word)" if row[size]["invalid"] else "")
            for size in sizes
        ]
        rows.append([name, f"{results['learning_rates'][name]:g}", *cells])
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
        "start on validation:",
        "",
        markdown_table(["start", "rate", *[f"{int(size):,} labels" for size in sizes]], rows),
    ]
    if results.get("other_tasks"):
        parts += ["", "Other tasks as text to text (one seed):", ""]
        other = [
            [name, ", ".join(f"{k} {v}" for k, v in scores.items() if not isinstance(v, str))]
            for name, scores in results["other_tasks"].items()
        ]
        parts.append(markdown_table(["task / start", "scores"], other))
    export = results.get("export")
    if export:
        parts += [
            "",
            f"Export: `generate` signature (beam search, {export['num_beams']} beams, in the "
            f"graph); reloaded answers equal the Keras model's: {export['served_equals_keras']}.",
        ]
    parts += [
        "",
        "Why a start sits near the majority class: `benchmarks/text_to_text_start` measures the "
        "span-corruption checkpoints (what the decoder learnt, whether it reads its source, "
        "fine-tuning per rate); see its section below.",
    ]
    for sample in results.get("span_samples", [])[:2]:
        parts += [
            "",
            f"- span corruption, truth “{sample['truth']}” → written “{sample['writes']}”",
        ]
    return "\n".join(parts)


def _text_to_text_headline(results):
    return (
        f"TREC-6 with {results['labelled']:,} labels, same parameters and pretraining minutes: "
        f"text-to-text {results['text_to_text_trec_acc']:.3f} vs encoder "
        f"{results['encoder_trec_acc']:.3f} (random init {results['random_text_to_text_trec_acc']:.3f}"
        f" / {results['random_encoder_trec_acc']:.3f})"
    )


def tokenizers_section(results):
    """Table of `labs/lab18_tokenizers.py`: fertility and unknown share per tokenizer and size."""
    sets = list(next(iter(next(iter(results["results"].values())).values())))
    sets = [name for name in sets if name not in ("train_seconds", "vocabulary")]
    rows = []
    for name, by_size in results["results"].items():
        for size, row in by_size.items():
            rows.append(
                [name, f"{int(size):,}", f"{row['vocabulary']:,}"]
                + [f"{row[s]['fertility']:.3f} / {row[s]['unknown_pct']:.3f}%" for s in sets]
                + [f"{row['train_seconds']:,.0f}"]
            )
    segmented = results["segmented"]
    parts = [
        f"Trained on {results['train_books']} Gutenberg books ({results['train_words']:,} words); "
        "held-out texts: "
        + ", ".join(f"{name} {count:,}" for name, count in results["held_out_texts"].items())
        + ". Cells: fertility (subwords per whitespace word) / unknown tokens.",
        "",
        markdown_table(["tokenizer", "size", "vocabulary"] + sets + ["train s"], rows),
        "",
        f"“{segmented['text']}” at {segmented['vocabulary_size']:,}:",
        "",
    ]
    parts += [
        f"- {name}: `{' '.join(segmented[name])}`"
        for name in ("wordpiece", "bpe", "byte_level_bpe", "unigram")
        if name in segmented
    ]
    if results.get("figure"):
        parts += [
            "",
            f"![fertility by vocabulary size]({Path(results['figure']).relative_to('docs')})",
        ]
    return "\n".join(parts)


def _tokenizers_headline(results):
    largest = max(int(size) for size in next(iter(results["results"].values())))
    cells = ", ".join(
        f"{name} {by_size[str(largest)][s]['fertility']:.2f}"
        for name, by_size in results["results"].items()
        for s in ["wikitext"]
        if s in by_size[str(largest)]
    )
    return f"subwords per word on WikiText at {largest:,} tokens: {cells}"


def data_curation_section(results):
    """Tables of `labs/lab18b_data_curation.py`: each filter's removals, recall, the two corpora."""
    documents = results["documents"]
    filter_rows = [
        [
            step,
            row["removed"],
            ", ".join(f"{reason} {count}" for reason, count in row["by_reason"].items()) or "-",
            ", ".join(f"{kind} {count}" for kind, count in row["planted_removed"].items()) or "-",
            row["originals_removed"],
        ]
        for step, row in results["filters"].items()
    ]
    median = results.get("median_perplexity", {})
    recall_rows = [
        [kind, f"{value:.1%}", median.get(kind, "")] for kind, value in results["recall"].items()
    ]
    corpus_rows = [
        [
            name,
            f"{p['documents']:,}",
            f"{p['held_out_perplexity']:.1f}",
            f"{results['trec'][name]['mean']:.3f} ± {results['trec'][name]['sd']:.3f}",
        ]
        for name, p in results["pretraining"].items()
    ]
    return "\n".join(
        [
            f"{documents['originals']:,} documents (~200 words) from the training books, plus "
            f"{documents['copies']:,} planted copies and {documents['noise']:,} planted noise "
            "documents; the filters run in this order, each on what the previous kept:",
            "",
            markdown_table(
                ["filter", "removed", "by reason", "planted removed", "originals removed"],
                filter_rows,
            ),
            "",
            "Recall per planted kind (share removed by some filter), and the reference LM's "
            "median word-level perplexity for the kinds that reached the perplexity filter "
            f"(originals: {median.get('None', '-')}):",
            "",
            markdown_table(["planted kind", "recall", "median perplexity"], recall_rows),
            "",
            f"The same causal model pretrained for {results['steps']} steps "
            f"({results['tokens_per_corpus']:,} tokens) on each corpus; held-out perplexity "
            "(sub-word) on books by other authors, TREC-6 test accuracy after fine-tuning on "
            f"{results['labelled']:,} questions (mean ± sd of {results['seeds']} seeds):",
            "",
            markdown_table(["corpus", "documents", "held-out perplexity", "TREC-6"], corpus_rows),
        ]
    )


def _data_curation_headline(results):
    recall = results["recall"]
    perplexity, trec = results["held_out_perplexity"], results["trec_acc"]
    return (
        f"planted copies and noise found: recall {min(recall.values()):.0%}–"
        f"{max(recall.values()):.0%} per kind; equal tokens: held-out perplexity "
        f"{perplexity['curated']:.1f} curated vs {perplexity['planted']:.1f} planted, TREC-6 "
        f"{trec['curated']:.3f} vs {trec['planted']:.3f}"
    )


def _start_cell(scores):
    return (
        f"{scores['validation_accuracy']:.3f} (top label {scores['most_generated_share']:.0%}, "
        f"source {scores['label_source_gain_nats']:+.2f})"
    )


def text_to_text_start_section(results):
    """Tables of `benchmarks/text_to_text_start.py`: span corruption and TREC-6 per checkpoint."""
    rates = [str(rate) for rate in results["rates"]]
    span_rows, trec_rows = [], []
    for step, row in results["checkpoints"].items():
        span = row["span_corruption"]
        span_rows.append(
            [
                step,
                f"{span['format_token_accuracy']:.3f}",
                f"{span['content_token_accuracy']:.3f}",
                f"{span['unigram_content_accuracy']:.3f}",
                f"{span['content_loss']:.3f}",
                f"{span['content_loss_other_sources']:.3f}",
                f"{span['source_gain_nats']:+.3f}",
            ]
        )
        trec_rows.append([step] + [_start_cell(row["trec"][rate]) for rate in rates])
    for step, row in results.get("decoder_reset", {}).items():
        trec_rows.append(
            [f"{step}, decoder re-initialised"] + [_start_cell(row["trec"][rate]) for rate in rates]
        )
    return "\n".join(
        [
            f"lab19's span-corruption pretraining ({results['steps']} steps"
            + (f", {results['pretrain_seconds']:,.0f} s" if results.get("pretrain_seconds") else "")
            + "), checkpoints measured; step 0 is the random init. Held-out span corruption "
            "(format = sentinels and the end token; content = the hidden tokens; unigram = "
            f"always writing “{results['most_frequent_content_token']}”; source gain = content "
            "loss with other blocks' encoder inputs minus with their own, in nats):",
            "",
            markdown_table(
                [
                    "step",
                    "format acc",
                    "content acc",
                    "unigram acc",
                    "content loss",
                    "with other sources",
                    "source gain",
                ],
                span_rows,
            ),
            "",
            f"TREC-6 as text to text from each checkpoint ({results['labelled']:,} labels, "
            "lab19's recipe, seed 0): validation accuracy (majority class "
            f"{results['majority_class_validation']:.3f}), the share of the most generated "
            "label, and the fine-tuned model's source gain on the label words (nats):",
            "",
            markdown_table(["step", *[f"rate {rate}" for rate in rates]], trec_rows),
        ]
    )


def _text_to_text_start_headline(results):
    checkpoints = results["checkpoints"]
    first, last = min(checkpoints, key=int), max(checkpoints, key=int)

    def best(step):
        return max(row["validation_accuracy"] for row in checkpoints[step]["trec"].values())

    span = checkpoints[last]["span_corruption"]
    return (
        f"after {last} span-corruption steps: content accuracy {span['content_token_accuracy']:.3f}"
        f" (unigram {span['unigram_content_accuracy']:.3f}), source gain "
        f"{span['source_gain_nats']:+.3f} nats; TREC-6 validation, best rate: step {last} "
        f"{best(last):.3f} vs random init {best(first):.3f}"
    )


def pairs_section(results):
    """Table of `labs/lab12_pairs.py`: test accuracy (and F1) per task beside the majority class."""
    rows, seeds, settings = [], 1, ""
    for name, row in results.items():
        seeds = row.get("seeds", 1)
        if row.get("settings"):
            settings = " (" + ", ".join(f"{k} {v}" for k, v in row["settings"].items()) + ")"
        spread = f" ± {row['test_accuracy_sd']:.3f}" if row.get("test_accuracy_sd") else ""
        failed = row.get("runs_at_or_below_majority")
        if failed is None:
            failed = int(row["test_accuracy"] <= row["majority_accuracy"])
        f1 = "-" if row["test_f1"] is None else f"{row['test_f1']:.3f}"
        if row.get("test_f1_sd"):
            f1 += f" ± {row['test_f1_sd']:.3f}"
        runs = row.get("runs") or [row]
        rows.append(
            [
                name,
                f"{row['train']:,}",
                f"{row['test']:,}",
                "; ".join(
                    " ".join(f"{v:.3f}" for v in run["val_accuracy_per_epoch"]) for run in runs
                ),
                f"{row['test_accuracy']:.3f}{spread}",
                f1,
                f"{row['majority_accuracy']:.3f}",
                f"{failed} of {seeds}",
            ]
        )
    return "\n".join(
        [
            f"MiniLM-L6 fine-tuned on each task's training pairs, {seeds} seed(s){settings}; the "
            "epoch with the best held-out accuracy (10% of the training file) is kept and scored "
            "on the GLUE dev set (mean ± sd over seeds):",
            "",
            markdown_table(
                [
                    "task",
                    "train",
                    "test",
                    "held-out acc by epoch (per seed)",
                    "test acc",
                    "test F1",
                    "majority",
                    "runs at or below majority",
                ],
                rows,
            ),
        ]
        + (
            [
                "",
                "RTE sits near its majority class. The checkpoint is all-MiniLM-L6-v2, trained "
                "further as a mean-pooled sentence embedder (not the distilled MiniLM behind the "
                "published ~63), and this run reads its [CLS] vector; `lab12_pairs_rte_mean_pooling` "
                "measures the same seeds with mean pooling.",
            ]
            if "rte" in results
            and results["rte"].get("settings", {}).get("pooling", "cls") != "mean"
            else []
        )
    )


def _pairs_headline(results):
    return "; ".join(
        f"{name.upper()} accuracy {row['test_accuracy']:.3f} (majority {row['majority_accuracy']:.3f})"
        + (f", F1 {row['test_f1']:.3f}" if row["test_f1"] is not None else "")
        for name, row in results.items()
    )


def feature_extraction_section(results):
    """Table of `labs/lab15_feature_extraction.py`: frozen features × head, TREC-6 accuracy."""
    rows = [
        [
            run["pooling"],
            run["layers"],
            run["head"],
            f"{run['validation_accuracy']:.3f}",
            f"{run['test_accuracy']:.3f}",
            f"{run['parameters']:,}",
            run["epochs"],
        ]
        for run in results["runs"]
    ]
    return "\n".join(
        [
            f"{results['checkpoint']} frozen; features extracted once per pooling, a head trained "
            f"on {results['examples']['train']:,} TREC-6 questions (early stopping on "
            f"{results['examples']['validation']:,}), test on {results['examples']['test']:,} "
            f"(training-majority baseline {results['majority_baseline_test_accuracy']:.3f}):",
            "",
            markdown_table(
                ["pooling", "layers", "head", "validation", "test", "head parameters", "epochs"],
                rows,
            ),
        ]
    )


def ner_section(results):
    """Table of `labs/lab13_ner.py`: CoNLL-2003 entity F1 per method (BIO softmax, CRF, span)."""
    rows = []
    for name, run in results["methods"].items():
        accuracy = run.get("test_token_accuracy")
        types = run.get("per_type_f1") or {}
        rows.append(
            [
                name,
                f"{run['train_sentences']:,}",
                f"{run['train_seconds']:.0f}",
                f"{run['validation_f1']:.2f}",
                f"{run['test_f1']:.2f}",
                " / ".join(
                    f"{run[key]:.1f}" if key in run else "-"
                    for key in ("test_precision", "test_recall")
                ),
                "-" if accuracy is None or accuracy != accuracy else f"{accuracy:.2f}",
                " / ".join(f"{types[t]:.1f}" for t in ("PER", "LOC", "ORG", "MISC") if t in types),
            ]
        )
    return "\n".join(
        [
            "CoNLL-2003 (entity-level F1, conlleval's rules; BIO decoded from each word's first "
            "subword; span = every span up to a width, classified):",
            "",
            markdown_table(
                [
                    "method",
                    "train sentences",
                    "train s",
                    "validation F1",
                    "test F1",
                    "test P / R",
                    "test token acc",
                    "test F1 PER / LOC / ORG / MISC",
                ],
                rows,
            ),
        ]
    )


def _ner_headline(results):
    return "CoNLL-2003 test entity F1: " + ", ".join(
        f"{name} {run['test_f1']:.2f}" for name, run in results["methods"].items()
    )


def _feature_extraction_headline(results):
    best = max(results["runs"], key=lambda run: run["validation_accuracy"])
    return (
        f"frozen {results['checkpoint']} on TREC-6: best on validation {best['pooling']} / "
        f"{best['layers']} / {best['head']} head, test {best['test_accuracy']:.3f}"
    )


def _contextual_bank_headline(results):
    return (
        f"“bank” ({results['layers']}): same-sense cosine {results['same_sense_cosine']:.3f} vs "
        f"different-sense {results['different_sense_cosine']:.3f} (a static embedding: "
        f"{results['static_cosine']:.3f})"
    )


def serving_section(results):
    """Table of `labs/lab20_serving.py`: the export against `model.predict`, per batch size."""
    rows = [
        [
            name,
            row["batch_size"],
            f"{row['p50_ms']:.2f}",
            f"{row['p95_ms']:.2f}",
            f"{row['sentences_per_s']:,.1f}",
        ]
        for name, row in results["timings"].items()
    ]
    return "\n".join(
        [
            f"MiniLM-L6 fine-tuned on TREC-6 (test accuracy {results['test_accuracy']:.3f}), exported "
            "with the tokenizer in the graph and reloaded; the largest difference between the "
            f"export's and the Keras model's outputs: {results['max_abs_diff']:.1e}. "
            "Latency on raw text (export) and on tokenized input (Keras):",
            "",
            markdown_table(["path", "batch", "p50 ms", "p95 ms", "sentences/s"], rows),
        ]
    )


def _serving_headline(results):
    ratio = results["export_sentences_per_s"] / results["keras_sentences_per_s"]
    return (
        f"TREC-6 MiniLM-L6 exported for TF Serving: accuracy {results['test_accuracy']:.3f}, "
        f"{results['export_sentences_per_s']:,.0f} sentences/s from raw text vs "
        f"{results['keras_sentences_per_s']:,.0f} through model.predict ({ratio:.2f}x), "
        f"outputs equal to {results['max_abs_diff']:.0e}"
    )


def tfhub_squad_section(results):
    """Table of lab08: SQuAD through the TF Hub path, and kbert's own encoder beside it."""
    rows = [
        [
            "TF Hub BERT format, loaded into Keras 3 (`kbert.hub`)",
            f"{results['exact_match']:.2f}",
            f"{results['f1']:.2f}",
            f"{results['train_seconds']:,.0f}",
        ]
    ]
    own = results.get("kbert_encoder")
    if own:
        rows.append(
            [
                "kbert's own encoder, same checkpoint and recipe",
                f"{own['exact_match']:.2f}",
                f"{own['f1']:.2f}",
                f"{own['train_seconds']:,.0f}",
            ]
        )
    difference = results.get("max_abs_difference")
    return "\n".join(
        [
            f"SQuAD v1.1 ({results['source']}): {results['train_questions']:,} training "
            f"questions ({results['train_windows']:,} windows), {results['eval_questions']:,} "
            f"held out. Hub preprocessing equals kbert's: {results['same_preprocessing']}; Hub "
            f"variables updated by `fit`: {results['hub_variables_updated']}"
            + (
                f"; encoders' outputs differ by at most {difference:.1e}"
                if difference is not None
                else ""
            )
            + f". Exported to `{results['export']}` with an `answer` signature on raw strings.",
            "",
            markdown_table(["encoder", "EM", "F1", "train s"], rows),
        ]
    )


def _tfhub_squad_headline(results):
    text = (
        f"SQuAD through a TF Hub BERT in Keras 3 ({results['train_questions']:,} questions): "
        f"EM {results['exact_match']:.2f} / F1 {results['f1']:.2f}"
    )
    own = results.get("kbert_encoder")
    if own:
        text += f" vs {own['exact_match']:.2f} / {own['f1']:.2f} on kbert's own encoder"
    return text


def train_step_section(results):
    """Table of `benchmarks/train_step.py`: kbert vs keras-hub tokens/s and MFU per setting."""
    parts = [
        f"One training step (forward, backward, AdamW) of MiniLM-L6 + a classifier, batch "
        f"{results['configuration']['batch_size']} × {results['configuration']['sequence_length']}"
        f" positions; matmul peak measured in the same run: float32 "
        f"{results['peak_gflops']['float32']:.0f}, bfloat16 "
        f"{results['peak_gflops']['mixed_bfloat16']:.0f} GFLOP/s. MFU counts real tokens only."
    ]
    workloads = {results["workload"]: results} | {
        name: value
        for name, value in results.items()
        if isinstance(value, dict) and "configurations" in value
    }
    for name, workload in workloads.items():
        rows = [
            [
                row["dtype"],
                "yes" if row["jit_compile"] else "no",
                f"{row['kbert_tokens_per_s']:,.0f}",
                f"{row['kbert_mfu']:.1%}",
                f"{row['keras_hub_tokens_per_s']:,.0f}",
                f"{row['keras_hub_mfu']:.1%}",
                f"{row['ratio']:.2f}",
            ]
            for row in workload.get("configurations", [])
        ]
        parts += [
            "",
            f"Workload `{name}` ({workload['real_token_fraction']:.0%} of the positions are "
            "real tokens):",
            "",
            markdown_table(
                [
                    "dtype",
                    "XLA",
                    "kbert tok/s",
                    "kbert MFU",
                    "keras-hub tok/s",
                    "keras-hub MFU",
                    "ratio",
                ],
                rows,
            ),
        ]
    return "\n".join(parts)


def _train_step_headline(results):
    best = results["configuration"]
    return (
        f"MiniLM-L6 training step: kbert {results['kbert_tokens_per_s']:,.0f} tokens/s "
        f"({best['dtype']}{', XLA' if best['jit_compile'] else ''}; MFU "
        f"{results['mfu']:.1%}), {results['ratio']:.2f}x keras-hub in the same setting"
    )


def _speed_rows(results):
    return {
        name: value
        for name, value in results.items()
        if isinstance(value, dict) and "tokens_per_s" in value
    }


def pretrain_speed_section(results):
    """Table of `benchmarks/pretrain_speed.py`: causal-LM training tokens/s and MFU."""
    rows = [
        [name, f"{value['tokens_per_s']:,.0f}", f"{value['mfu']:.1%}"]
        for name, value in _speed_rows(results).items()
    ]
    size = f", {results['parameters'] / 1e6:.1f}M parameters" if "parameters" in results else ""
    return "\n".join(
        [
            f"Causal-LM training steps of preset `{results['preset']}`{size}, batch "
            f"{results['batch_size']} × {results['sequence_length']} tokens; matmul peak "
            f"measured in the same run: float32 {results['peak_gflops']['float32']:.0f}, "
            f"bfloat16 {results['peak_gflops']['mixed_bfloat16']:.0f} GFLOP/s.",
            "",
            markdown_table(["configuration", "tokens/s", "MFU"], rows),
        ]
    )


def _pretrain_speed_headline(results):
    name, best = max(_speed_rows(results).items(), key=lambda item: item[1]["tokens_per_s"])
    return (
        f"`{results['preset']}` causal-LM pretraining: {best['tokens_per_s']:,.0f} tokens/s "
        f"({name}, MFU {best['mfu']:.1%})"
    )


def classification_benchmark_section(results):
    """Table of `benchmarks/classification.py`: kbert vs keras-hub fine-tuning MiniLM-L6."""
    rows = [
        [
            f"kbert ({results['kbert_dtype']}{', XLA' if results['kbert_jit'] else ''}, "
            f"{results['kbert_pooling']} pooling)",
            f"{results['kbert_acc']:.4f}",
            f"{results['kbert_examples_per_s']:.1f}",
        ]
    ]
    if "peer_acc" in results:
        rows.append(
            [
                "keras-hub BertTextClassifier (float32)",
                f"{results['peer_acc']:.4f}",
                f"{results['peer_examples_per_s']:.1f}",
            ]
        )
    return "\n".join(
        [
            f"MiniLM-L6 fine-tuned on {results['task']} ({results['train_examples']:,} training "
            f"examples × {results['epochs']} epochs, batch {results['batch_size']}, length "
            f"{results['sequence_length']}, peak rate {results['learning_rate']:g}), the same "
            "recipe on both sides; examples/s over the whole `fit`, tracing included.",
            "",
            markdown_table(["implementation", "test accuracy", "training examples/s"], rows),
        ]
    )


def _classification_benchmark_headline(results):
    text = f"MiniLM-L6 on {results['task']}: kbert {results['kbert_acc']:.3f}"
    if "peer_acc" in results:
        text += (
            f" vs keras-hub {results['peer_acc']:.3f}, {results['speedup']:.2f}x its training speed"
        )
    return text


def token_tasks_section(results):
    """Table of `benchmarks/token_tasks.py`: kbert vs transformers on CoNLL-2003 NER and SQuAD."""
    versions = results.get("versions", {})
    peer = "transformers" + (
        f" {versions['transformers']} (PyTorch {versions['torch']})" if "torch" in versions else ""
    )

    def cells(task, *metrics, form):
        """kbert's and the peer's values of `metrics` (joined by " / "), "—" where absent."""
        return [
            " / ".join(
                format(results[key], form) if key in results else "—"
                for key in (f"{side}_{task}_{metric}" for metric in metrics)
            )
            for side in ("kbert", "peer")
        ]

    rows, lines = [], []
    for task, score_name, scores, unit in (
        ("ner", "test entity F1", ("f1",), "sentences"),
        ("qa", "EM / F1", ("em", "f1"), "windows"),
    ):
        if f"{task}_epochs" not in results:
            continue
        speeds = [results.get(f"{side}_{task}_train_examples_per_s") for side in ("kbert", "peer")]
        ratio = "—" if None in speeds else f"{speeds[0] / speeds[1]:.2f}×"
        rows += [
            [task.upper(), score_name, *cells(task, *scores, form=".2f"), ""],
            ["", f"training {unit}/s", *cells(task, "train_examples_per_s", form=".1f"), ratio],
        ]
    if "ner_epochs" in results:
        lines.append(
            f"- NER: CoNLL-2003, BIO softmax on each word's first subword, "
            f"{results['ner_train_sentences']:,} training sentences × {results['ner_epochs']} "
            f"epochs at {results['ner_lr']:g}; test on {results['ner_test_sentences']:,} sentences."
        )
    if "qa_epochs" in results:
        lines.append(
            f"- QA: SQuAD v1.1, {results['qa_source']}: {results['qa_train_questions']:,} "
            f"training questions × {results['qa_epochs']} epoch"
            f"{'s' if results['qa_epochs'] != 1 else ''} at {results['qa_lr']:g}; "
            f"evaluated on {results['qa_eval_questions']:,} questions (official normalisation)."
        )
    measured_peer = any(key.startswith("peer_") for key in results)
    kbert = ", ".join(
        f"{name} {versions[name]}" for name in ("tensorflow", "keras") if name in versions
    )
    return "\n".join(
        [
            f"{results['checkpoint']} fine-tuned by kbert ({kbert or 'TensorFlow'})"
            + (f" and by {peer} in one process" if measured_peer else " (the peer was not run)")
            + f", the same recipe (AdamW, 10% warmup then linear decay, clipping 1.0, "
            f"batch {results['batch_size']}, length-grouped batches); throughput over the whole "
            "training run, tracing included. One seed per side.",
            "",
            *lines,
            "",
            markdown_table(["task", "metric", "kbert", peer, "kbert / peer"], rows),
        ]
    )


def _token_tasks_headline(results):
    parts = []
    for task in ("ner", "qa"):
        if f"kbert_{task}_f1" not in results:
            continue
        text = f"{task.upper()} F1 kbert {results[f'kbert_{task}_f1']:.2f}"
        if f"peer_{task}_f1" in results:
            speed = (
                results[f"kbert_{task}_train_examples_per_s"]
                / results[f"peer_{task}_train_examples_per_s"]
            )
            text += f" vs transformers {results[f'peer_{task}_f1']:.2f} ({speed:.2f}× its speed)"
        parts.append(text)
    return "; ".join(parts)


SERVING_SIDES = {
    "kbert": "kbert SavedModel (session loader)",
    "kbert_fixed": "kbert SavedModel, rows at sequence_length",
    "ort": "HF fast tokenizer + ONNX Runtime",
    "ort_optimized": "HF fast tokenizer + ONNX Runtime, optimized",
}


def serving_speed_section(results):
    """Tables of `benchmarks/serving.py`: kbert's exported `classify` vs ONNX Runtime."""
    batch = results["batch_size"]
    lines = [
        f"MiniLM-L6 with a {results['num_classes']}-class head, the same weights on every side, "
        f"end to end from raw text, length {results['sequence_length']}, median of "
        f"{results['passes']} passes on {results['cpu_count']} cores. The ratio is kbert's "
        "speed over each side's (above 1: kbert is faster); the difference is the largest "
        "absolute difference of log-probabilities from kbert's.",
    ]
    for name, entry in results["datasets"].items():
        rows = []
        for side, label in SERVING_SIDES.items():
            if side not in entry:
                continue
            timing = entry[side]
            ratio = entry.get(f"ratio_kbert_over_{side}")
            difference = entry.get(f"max_abs_diff_{side}")
            rows.append(
                [
                    label,
                    f"{timing['batch1_p50_ms']:.2f}",
                    f"{timing['batch1_p95_ms']:.2f}",
                    f"{timing['batch_sentences_per_s']:,.1f}",
                    f"{ratio['batch1_p50']:.2f}× / {ratio['batch']:.2f}×" if ratio else "",
                    f"{difference:.1e}" if difference is not None else "",
                ]
            )
        lines += [
            "",
            f"{name} ({entry['examples']} test texts):",
            "",
            markdown_table(
                [
                    "side",
                    "batch 1 p50 ms",
                    "batch 1 p95 ms",
                    f"batch {batch} sentences/s",
                    "kbert / side (batch 1 / batch)",
                    "max abs Δ log-prob",
                ],
                rows,
            ),
        ]
    return "\n".join(lines)


def _serving_speed_headline(results):
    """Each dataset's batch throughput and batch-1 p50 latency beside plain ONNX Runtime's (the
    way practitioners run it; the optimized graph's numbers are in the section)."""
    parts = []
    for name, entry in results["datasets"].items():
        mine = entry["kbert"]
        text = f"{name} {mine['batch_sentences_per_s']:,.0f}/s, p50 {mine['batch1_p50_ms']:g} ms"
        if "ort" in entry:
            peer = entry["ort"]
            text += f" (ORT {peer['batch_sentences_per_s']:,.0f}/s, {peer['batch1_p50_ms']:g} ms)"
        parts.append(text)
    return "classify from raw text, batch 32 / 1: " + "; ".join(parts)


def _graph_disagreement_note(results, name):
    """What a graph layer's disagreements are, where the benchmark measured it."""
    notes = []
    as_reference = results.get(name + "_in_graph_disagreements_as_python_reference")
    if as_reference:
        notes.append(f"{as_reference} disagreements are the float32 Python reference's ids")
    reordered = results.get(name + "_in_graph_disagreements_same_pieces_reordered")
    if reordered:
        notes.append(
            f"{reordered} are the reference's pieces in another order, an exact tie in score"
        )
    return f" ({'; '.join(notes)})" if notes else ""


def anchor_strength_section(results):
    """Table of `benchmarks/anchor_strength.py`: L2-SP's λ × clipping, with the weights' paths."""

    def number(value, form):
        return "—" if value is None else format(value, form)

    rows = [
        [
            "— (encoder frozen)" if row["strength"] is None else f"{row['strength']:g}",
            "none" if row["clipnorm"] is None else f"{row['clipnorm']:g}",
            f"{row['validation_accuracy']:.3f}",
            f"{row['test_accuracy']:.3f}",
            f"{row['final_loss']:.3f} ({row['final_penalty']:.3f})",
            " → ".join(f"{value:.1e}" for value in row["displacement_by_epoch"]),
            f"{row['step_rms_last_epoch']:.1e}",
            number(row["path_over_displacement"], ".1f"),
            number(row.get("head_displacement_rms"), ".1e"),
        ]
        for row in results["rows"]
    ]
    control = next((row for row in results["rows"] if row["strength"] is None), None)
    findings = []
    for row in results["rows"]:
        if (
            control is not None
            and row["strength"] is not None
            and abs(row["test_accuracy"] - control["test_accuracy"]) <= 0.02
        ):
            clip = "none" if row["clipnorm"] is None else f"{row['clipnorm']:g}"
            findings.append(
                f"- λ {row['strength']:g} (clip {clip}) scores as the encoder-frozen control "
                f"({row['test_accuracy']:.3f} against {control['test_accuracy']:.3f}, final "
                f"loss {row['final_loss']:.3f} against {control['final_loss']:.3f}): at this "
                f"λ only the head trains, at the rate chosen for the whole model "
                f"({results['learning_rate']:g})."
            )
    return "\n".join(
        [
            f"L2-SP on `{results['start']}`: TREC-6, {results['train_examples']:,} training "
            f"questions, {results['epochs']} epochs, batch {results['batch_size']}, peak rate "
            f"{results['learning_rate']:g}, seed {results['seed']}; validation "
            f"{results['validation_examples']}, test {results['test_examples']} (majority class "
            f"{results['test_majority']:.3f}). RMS(w − w₀) is over the encoder's anchored "
            "weights at the end of each epoch; the step is the RMS change of those weights per "
            "update, averaged over the last epoch; path ÷ displacement is the last epoch's "
            "summed steps over the final RMS(w − w₀) (large: the weights go back and forth); "
            "the head's RMS change is from its initial weights (it carries no anchor). The "
            "encoder-frozen row is the control: no anchor, the same rate and clipping.",
            "",
            markdown_table(
                [
                    "λ",
                    "clip",
                    "validation",
                    "test",
                    "final loss (penalty)",
                    "RMS(w − w₀) by epoch",
                    "RMS step",
                    "path ÷ displacement",
                    "head RMS change",
                ],
                rows,
            ),
            *([""] + findings if findings else []),
        ]
    )


COMPARISONS = (
    "adaptation",
    "lab03_adapters",
    "lab04_gradual_unfreezing",
    "lab05_discriminative_lr",
    "lab06_multitask",
    "lab16_peft",
    "lab17_distillation",
)


RENDERERS = {
    "adaptation_grid": adaptation_grid_section,
    "adaptation_grid_peft": adaptation_grid_section,
    "lab11_contextual_embeddings": contextual_embeddings_section,
    "lab01_pretraining": pretraining_section,
    "transfer": transfer_section,
    "long_inputs": long_inputs_section,
    "transfer_probes": transfer_probes_section,
    "lab07_document_classification": document_classification_section,
    "tokenizer_parity": tokenizer_parity_section,
    "lab09_dialog": dialog_section,
    "lab18_tokenizers": tokenizers_section,
    "lab19_text_to_text": text_to_text_section,
    "lab18b_data_curation": data_curation_section,
    "text_to_text_start": text_to_text_start_section,
    "lab12_pairs": pairs_section,
    "lab12_pairs_rte_mean_pooling": pairs_section,
    "lab15_feature_extraction": feature_extraction_section,
    "lab13_ner": ner_section,
    # Why span-based NER trails BIO tagging: both on 3,000 sentences, at the lab's rate and at 1e-3.
    "lab13_ner_3000_lr3e-4": ner_section,
    "lab13_ner_3000_lr1e-3": ner_section,
    # ... and the span classifier whose bias starts at the NULL prior (its default since).
    "lab13_ner_3000_span_prior": ner_section,
    "lab13_ner_3000_span_prior_4_epochs": ner_section,
    "lab20_serving": serving_section,
    "train_step": train_step_section,
    "lab08_tfhub_squad": tfhub_squad_section,
    "pretrain_speed": pretrain_speed_section,
    "classification": classification_benchmark_section,
    "anchor_strength": anchor_strength_section,
    "token_tasks": token_tasks_section,
    "serving": serving_speed_section,
} | dict.fromkeys(COMPARISONS, comparison_section)


def _wsd_headline(results):
    wsd = results["wsd"]
    all_set = wsd["sets"]["ALL"]
    return (
        f"WSD on the Raganato ALL set: F1 {all_set[wsd['variant']]:.2f} ({wsd['variant']}, "
        f"trained on {wsd['train_corpus']}) vs {all_set['mfs_f1']:.2f} for WordNet's first "
        "sense"
    )


def _pretraining_headline(results):
    parts = []
    for part, r in results.items():
        if part == "causal":
            parts.append(
                f"causal word perplexity {r['word_perplexity']:.0f}"
                if "word_perplexity" in r
                else f"causal loss {r['clm_loss']:.2f}"
            )
        elif part == "masked":
            parts.append(f"masked-token accuracy {r['mlm_accuracy']:.3f}")
        elif part == "electra":
            parts.append(f"ELECTRA replaced/original accuracy {r['rtd_accuracy']:.3f}")
    budget = next(iter(results.values())).get("budget_minutes")
    return ", ".join(parts) + (f" ({budget:g} min of pretraining each)" if budget else "")


def _transfer_headline(results):
    if not results.get("objective"):
        return "no pretrained start measured"
    return (
        f"TREC-6 with {results['labelled']:,} labels: {results['objective']} start "
        f"{results['pretrained_acc']:.3f} vs random init {results['random_acc']:.3f} "
        f"({results['gap_points']:+.1f} points, {results['seeds']} seeds)"
    )


def _long_inputs_headline(results):
    best = max(
        (
            (training, reading, value)
            for training, row in results["accuracy"].items()
            for reading, value in row.items()
        ),
        key=lambda item: item[2],
    )
    head = results["accuracy"].get("head", {}).get("head")
    return (
        f"IMDb reviews longer than {results['sequence_length']} tokens: best "
        f"{best[2]:.3f} (trained {best[0]}, read {best[1]})"
        + (f" vs {head:.3f} head-only" if head is not None else "")
    )


def _probes_headline(results):
    gains = ", ".join(
        f"{name} {gain['gain_points']:+.1f}" for name, gain in results["best_layer_gain"].items()
    )
    return f"frozen-layer linear probes on TREC-6, best layer vs random weights (points): {gains}"


PEFT_METHODS = ("lora", "prefix_tuning", "prompt_tuning")


def _adaptation_grid_headline(results):
    """The chosen full, discriminative and PEFT settings; a multitask-only record's instead."""
    chosen = results["chosen"]
    shown = [
        key
        for key in chosen
        if key.split("/", 1)[1] in ("discriminative_lr", "full", *PEFT_METHODS)
    ]
    parts = []
    for key in shown:
        row = chosen[key]
        start, method = key.split("/", 1)
        parts.append(
            f"{start} {method} {row['test']:.3f} ({row['chosen'][row['chosen'].find('lr=') :]})"
        )
    if not shown:  # a multitask study alone: each labelled size's two methods side by side
        for key, row in chosen.items():
            start, method_at_size = key.split("/", 1)
            method, _, size = method_at_size.partition("@")
            full = chosen.get(f"{start}/full@{size}")
            if method == "multitask" and full:
                parts.append(
                    f"{start}, {size} labels: multitask {row['test']:.3f} vs full {full['test']:.3f}"
                )
    return "TREC-6 test, chosen on validation: " + "; ".join(parts)


HEADLINES = {
    "adaptation_grid": _adaptation_grid_headline,
    "adaptation_grid_peft": _adaptation_grid_headline,
    "lab11_contextual_embeddings": _wsd_headline,
    "lab01_pretraining": _pretraining_headline,
    "transfer": _transfer_headline,
    "long_inputs": _long_inputs_headline,
    "transfer_probes": _probes_headline,
    "lab07_document_classification": _document_classification_headline,
    "tokenizer_parity": _tokenizer_parity_headline,
    "lab09_dialog": _dialog_headline,
    "lab18_tokenizers": _tokenizers_headline,
    "lab19_text_to_text": _text_to_text_headline,
    "lab18b_data_curation": _data_curation_headline,
    "text_to_text_start": _text_to_text_start_headline,
    "lab12_pairs": _pairs_headline,
    "lab15_feature_extraction": _feature_extraction_headline,
    "lab13_ner": _ner_headline,
    "lab10_contextual_bank": _contextual_bank_headline,
    "lab20_serving": _serving_headline,
    "train_step": _train_step_headline,
    "lab08_tfhub_squad": _tfhub_squad_headline,
    "pretrain_speed": _pretrain_speed_headline,
    "classification": _classification_benchmark_headline,
    "token_tasks": _token_tasks_headline,
    "serving": _serving_speed_headline,
} | dict.fromkeys(COMPARISONS, _comparison_headline)


def for_record(table, stem):
    """The entry for a record named `stem`: its own, or that of the longest name it extends.

    `transfer_pre_ln` is a `transfer` record (another run of the same program, kept beside
    the first), `lab01_pretraining_pre_ln_masked` a `lab01_pretraining` one.
    """
    base = _base_name(table, stem)
    return None if base is None else table[base]


README_BEGIN = "<!-- results summary: generated by python -m benchmarks.report -->"
README_END = "<!-- end of results summary -->"


# Records that hold part of one program's run at its defaults, split over runs (`--studies`,
# `--starts`): summarised beside the program's own record, unlike other variants.
SUMMARY_PARTS = (
    "adaptation_grid_peft",
    "adaptation_grid_minilm",
    "adaptation_grid_multitask",
    "lab07_document_classification_lab01",
)


def _base_name(table, stem):
    """The name in `table` that record `stem` is a run of (itself, or the longest it extends)."""
    if stem in table:
        return stem
    bases = [name for name in table if stem.startswith(name + "_")]
    return max(bases, key=len) if bases else None


def readme_summary(results_dir):
    """The README's short results table: one headline per program's run at its defaults.

    Another run of a program (a diagnosis, another budget or setting: `lab13_ner_3000_*`,
    `transfer_pre_ln`) is left to `docs/results.md` when the program's own record exists, so
    the README stays short; it stands in for a program that has no record of its own.
    """
    stems = {path.stem for path in Path(results_dir).glob("*.json")}
    rows = []
    for path in sorted(Path(results_dir).glob("*.json")):
        base = _base_name(HEADLINES, path.stem)
        if base != path.stem and base in stems and path.stem not in SUMMARY_PARTS:
            continue
        if base is not None:
            record = json.loads(path.read_text(encoding="utf-8"))
            rows.append(
                [
                    f"[{path.stem}](docs/results.md#{path.stem})",
                    HEADLINES[base](record["results"]),
                    record["date"][:10],
                ]
            )
    return markdown_table(["run", "what it shows", "recorded"], rows)


def with_readme_summary(readme, summary):
    """`readme` with the text between the summary markers replaced by `summary`."""
    if README_BEGIN not in readme or README_END not in readme:
        raise ValueError(f"README.md must hold the lines {README_BEGIN!r} and {README_END!r}")
    head, rest = readme.split(README_BEGIN, 1)
    _, tail = rest.split(README_END, 1)
    return f"{head}{README_BEGIN}\n{summary}\n{README_END}{tail}"


def _recorded_time(record):
    """The syllabus cell for a record: wall time, date, and any flags beyond the defaults."""
    words = record["command"].split()[1:]  # without "python"
    words = words[2:] if words[:1] == ["-m"] else words[1:]  # without the program
    if "--record" in words:
        at = words.index("--record")
        del words[at : at + 2]
    cell = f"{record['wall_seconds']:,.0f} s, recorded {record['date'][:10]}"
    return cell + (f" with `{' '.join(words)}`" if words else "")


def with_syllabus_times(syllabus, results_dir):
    """`labs/README.md` with each lab's "time" cell made from its record (or "not recorded yet").

    A row names its program as a link to `labNN_name.py` or `../benchmarks/name.py`; the time
    is the row's fifth cell.
    """
    lines = []
    for line in syllabus.split("\n"):
        cells = line.split(" | ")
        match = (
            re.search(r"\[`(?:\.\./benchmarks/)?(\w+)\.py`\]", cells[1]) if len(cells) > 5 else None
        )
        if match and line.startswith("| "):
            path = Path(results_dir) / f"{match.group(1)}.json"
            cells[4] = (
                _recorded_time(json.loads(path.read_text(encoding="utf-8")))
                if path.is_file()
                else "not recorded yet"
            )
            line = " | ".join(cells)
        lines.append(line)
    return "\n".join(lines)


def _flat_numbers(value, prefix=""):
    """`(dotted.key, number or text)` for every scalar under `value` (dicts and lists)."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _flat_numbers(inner, f"{prefix}{key}.")
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from _flat_numbers(inner, f"{prefix}{index}.")
    elif isinstance(value, (int, float, str)) and not isinstance(value, bool):
        yield prefix.rstrip("."), value


def _generic_section(results, limit=80):
    """Every number of a record without its own renderer, by dotted key (the first `limit`)."""
    numbers = list(_flat_numbers(results))
    if not numbers:
        return "(no numbers)"
    shown = [[key, f"{value:.4g}" if isinstance(value, float) else value] for key, value in numbers]
    more = len(shown) - limit
    table = markdown_table(["result", "value"], shown[:limit])
    return table + (f"\n\n({more} more values in the record)" if more > 0 else "")


def render(results_dir):
    """Returns the Markdown page for every record in `results_dir`, sorted by name."""
    records = sorted(Path(results_dir).glob("*.json"))
    parts = [
        "# Results",
        "",
        "Generated by `python -m benchmarks.report` from the recorded runs in "
        "`docs/results/`; do not edit by hand. Each section names the command, commit, "
        "date, wall time and machine of its run.",
        "",
    ]
    for path in records:
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            results = record["results"]
            source = provenance(record)
        except (ValueError, KeyError, TypeError) as error:
            raise ValueError(
                f"{path}: expected a run record written by "
                f"kbert.run_records.write_run_record; {error}"
            ) from None
        name = path.stem
        parts += [
            f"## {name}",
            "",
            source,
            "",
            (for_record(RENDERERS, name) or _generic_section)(results),
            "",
        ]
        if name in COMPARISONS:
            notes = full_rate_notes(results, results_dir)
            notes += near_majority_notes(results, results_dir)
            parts += [note + "\n" for note in notes]
        if _base_name(RENDERERS, name) == "lab07_document_classification":
            parts += [note + "\n" for note in document_classification_notes(name, results_dir)]
    return "\n".join(parts)


def document_classification_notes(name, results_dir):
    """A note under a lab07 record with a row near the majority class: what the other runs of
    the lab (other starts or stage-1 sizes, same labelled subsets and seeds) measured."""
    records = {
        path.stem: json.loads(path.read_text(encoding="utf-8"))["results"]
        for path in sorted(Path(results_dir).glob("lab07_document_classification*.json"))
    }
    results = records[name]
    if results["task"] != "imdb":
        return []
    majority = 0.5  # IMDb's test split: 12,500 positive and 12,500 negative reviews
    low = [
        f"{int(size):,} labelled, {variant} {row['test_mean']:.3f}"
        for size, by_variant in results["results"].items()
        for variant, row in by_variant.items()
        if row["test_mean"] <= majority + NEAR_MAJORITY
    ]
    if not low:
        return []
    head = f"Note ({'; '.join(low)}; IMDb's test split is balanced, majority class {majority})"
    others = []
    for other, each in records.items():
        if other == name or each["task"] != results["task"]:
            continue
        scores = "; ".join(
            f"{int(size):,} labelled: "
            + ", ".join(f"{variant} {row['test_mean']:.3f}" for variant, row in by_variant.items())
            for size, by_variant in each["results"].items()
        )
        others.append(
            f"`{other}` ({each['model']}, {each['settings']['sequence_length']} tokens, stage 1 "
            f"on {each['language_model']['lm_examples']:,} texts): {scores}"
        )
    if not others:
        return [f"{head}: {UNEXPLAINED} (no other run of this lab on {results['task']})."]
    return [
        f"{head}: the other runs of this lab, on the same labelled subsets and seeds: "
        + "; ".join(others)
        + ". Where another start clears the majority class by far on the same labelled "
        "documents, the start (its pretraining, size, length and rates), not the labels, holds "
        "these rows down."
    ]


def _grid_results(results_dir):
    """The `results` of every `adaptation_grid*.json` record in `results_dir`, by file name."""
    return [
        json.loads(path.read_text(encoding="utf-8"))["results"]
        for path in sorted(Path(results_dir).glob("adaptation_grid*.json"))
    ]


def full_rate_notes(results, results_dir):
    """Notes under a comparison whose `full` row used another rate than `adaptation_grid`
    chose on validation for that start: the grid's measured rates, so a reader sees why that
    row (and a teacher or ensemble built from it) may sit low."""
    grids = {}  # start → (that start's rates study, its grid's settings)
    for grid in _grid_results(results_dir):
        for start, study in grid.get("studies", {}).get("rates", {}).items():
            grids[start] = (study, grid["settings"])
    notes = []
    for row in results["rows"]:
        if row["label"] != "full" or row["start"] not in grids:
            continue
        study, settings = grids[row["start"]]
        measured = {
            entry["learning_rate"]: entry for entry in study["rows"] if entry["method"] == "full"
        }
        if not measured:
            continue
        # The grid's own rule (best validation mean), so the note names the rate it chose.
        best = max(measured.values(), key=lambda entry: entry["val_mean"])
        if row.get("learning_rate") in (None, best["learning_rate"]):
            continue
        rates = ", ".join(
            f"{rate:g}: {entry['acc_mean']:.3f} ± {entry['acc_sd']:.3f}"
            for rate, entry in sorted(measured.items())
        )
        checkpoint = settings.get(f"{row['start']}_model", row["start"])
        notes.append(
            f"Note ({row['start']}): its `full` row is fine-tuned at {row['learning_rate']:g}. "
            f"`adaptation_grid` measured full fine-tuning of "
            f"`{checkpoint}` on the same task ({settings['train_examples']:,} questions, "
            f"{settings['epochs']} epochs, {settings['seeds']} seeds; test accuracy by rate: "
            f"{rates}) and chose {best['learning_rate']:g} on validation, so this row (and "
            f"what is built from it: a teacher, an ensemble) is under-tuned, not a ceiling of "
            f"the method."
        )
    return notes


def near_majority_notes(results, results_dir):
    """Notes under a comparison for each row near TREC-6's majority class: every setting
    `adaptation_grid` measured of that method on that start (so a reader sees whether a rate
    was missed or the method cannot do better here), and the same method on the other starts.
    """
    # The grid is TREC-6 with its 500 test questions: its majority class and rows say nothing
    # of a comparison on another task or test set.
    grids = [
        grid
        for grid in _grid_results(results_dir)
        if results.get("task") == "trec"
        and grid["settings"]["test_examples"] == results.get("test_examples")
    ]
    if not grids:
        return []
    majority = grids[0]["majority_class_acc"]["test"]
    measured = {}  # (start, method) → grid rows of that method on that start
    budgets = {}  # (start, method) → the grid's training budget, in words
    for grid in grids:
        settings = grid["settings"]
        for by_start in grid["studies"].values():
            for start, outcome in by_start.items():
                for row in outcome.get("rows", []):
                    measured.setdefault((start, row["method"]), []).append(row)
                    budgets[start, row["method"]] = (
                        f"{settings['train_examples']:,} questions, {settings['epochs']} epochs"
                    )
    notes = []
    for row in results["rows"]:
        if row["acc_mean"] > majority + NEAR_MAJORITY:
            continue
        head = (
            f"Note ({row['start']} {row['label']}, test {row['acc_mean']:.3f} against the "
            f"majority class {majority:.3f})"
        )
        grid_rows = measured.get((row["start"], row["method"]))
        if not grid_rows:
            notes.append(f"{head}: {UNEXPLAINED} (no `adaptation_grid` study of this method).")
            continue
        best = max(grid_rows, key=lambda entry: entry["val_mean"])
        settings = "; ".join(
            f"{entry['label']}: {entry['acc_mean']:.3f} ± {entry['acc_sd']:.3f}"
            for entry in grid_rows
        )
        others = [
            f"{start} {max(entry['acc_mean'] for entry in entries):.3f}"
            for (start, method), entries in sorted(measured.items())
            if method == row["method"] and start != row["start"]
        ]
        text = (
            f"{head}: `adaptation_grid` measured this method on this start at every setting of "
            f"its grid ({budgets[row['start'], row['method']]}; test mean ± sd over "
            f"{best['seeds']} seeds: {settings}); the setting "
            f"chosen on validation, {best['label']}, scores {best['acc_mean']:.3f}"
        )
        if max(entry["acc_mean"] for entry in grid_rows) <= majority + NEAR_MAJORITY:
            text += (
                f", and no setting of the grid clears the majority class by "
                f"{NEAR_MAJORITY:g}: with {row['trainable_pct']:.2f}% of the weights training, "
                "the method does not adapt this start at this budget."
            )
        else:
            text += (
                ": the grid does better than this row, so its setting, not the method, holds "
                "it down (rerun it at the chosen setting)."
            )
        if others:
            text += f" The best of the same grid on the other start(s): {', '.join(others)}."
        notes.append(text)
    return notes


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results-dir", default=str(ROOT / "docs" / "results"))
    parser.add_argument("--output", default=str(ROOT / "docs" / "results.md"))
    parser.add_argument(
        "--readme",
        default=str(ROOT / "README.md"),
        help="the README whose results summary is regenerated ('' to skip)",
    )
    parser.add_argument(
        "--syllabus",
        default=None,
        help="the labs' syllabus whose time column is regenerated ('' to skip; default "
        "labs/README.md when --results-dir is the default)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="do not write; exit 1 when the page differs from the records",
    )
    args = parser.parse_args(argv)
    if args.syllabus is None:
        default = Path(args.results_dir).resolve() == (ROOT / "docs" / "results").resolve()
        args.syllabus = str(ROOT / "labs" / "README.md") if default else ""
    outputs = {Path(args.output): render(args.results_dir)}
    if args.readme:
        readme = Path(args.readme)
        outputs[readme] = with_readme_summary(
            readme.read_text(encoding="utf-8"), readme_summary(args.results_dir)
        )
    if args.syllabus:
        syllabus = Path(args.syllabus)
        outputs[syllabus] = with_syllabus_times(
            syllabus.read_text(encoding="utf-8"), args.results_dir
        )
    if args.check:
        stale = [
            path
            for path, text in outputs.items()
            if not path.is_file() or path.read_text(encoding="utf-8") != text
        ]
        for path in stale:
            print(f"{path} is out of date: run `python -m benchmarks.report`", file=sys.stderr)
        if stale:
            return 1
        print(f"{', '.join(map(str, outputs))} match the records")
        return 0
    for path, text in outputs.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    print(
        f"wrote {', '.join(map(str, outputs))} from "
        f"{len(list(Path(args.results_dir).glob('*.json')))} record(s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
