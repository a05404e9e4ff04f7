"""The records of `benchmarks/tokenizer_parity.py`: their section of docs/results.md and README
headline."""

from benchmarks.reports._common import markdown_table

STEMS = ("tokenizer_parity",)


def render(results):
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


def headline(results):
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
