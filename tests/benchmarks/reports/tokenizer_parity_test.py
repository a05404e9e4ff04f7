from benchmarks.reports import tokenizer_parity


def test_the_tokenizer_parity_headline_names_only_what_falls_short():
    results = {"texts": 20000, "bpe_agreement": 1.0, "sentencepiece_in_graph_agreement": 0.9998}
    assert tokenizer_parity.headline(results) == (
        "1 of 2 identical on all 20,000 texts (sentencepiece in graph: 4 differ)"
    )
    assert tokenizer_parity.headline({**results, "sentencepiece_in_graph_agreement": 1.0}) == (
        "2 of 2 identical on all 20,000 texts"
    )


def test_the_tokenizer_parity_page_and_headline_carry_the_pipelines():
    results = {
        "texts": 20000,
        "train_texts": 10,
        "vocabulary_size": 8000,
        "bpe_agreement": 1.0,
        "bpe_seconds": 1.0,
        "pipeline_texts": 12000,
        "pipeline_train_texts": 50,
        "pipeline_t5_precompiled_unigram_agreement": 0.99995,
        "pipeline_t5_precompiled_unigram_seconds": 3.0,
        "pipeline_roberta_byte_level_bpe_agreement": 1.0,
        "pipeline_roberta_byte_level_bpe_seconds": 2.0,
        "refusals": {"UnicodeScripts": "pre-tokenizer 'UnicodeScripts' is not supported"},
    }
    assert tokenizer_parity.headline(results).endswith(
        "; tokenizer.json pipelines: 1 of 2 on all 12,000 (lowest 99.9950%)"
    )
    page = tokenizer_parity.render(results)
    assert "| t5_precompiled_unigram |" in page and "99.9950%" in page
    assert "- UnicodeScripts: pre-tokenizer 'UnicodeScripts' is not supported" in page


def test_the_tokenizer_parity_page_has_a_row_per_pipeline_run_in_the_graph():
    results = {
        "texts": 20000,
        "train_texts": 10,
        "vocabulary_size": 8000,
        "pipeline_texts": 1200,
        "pipeline_train_texts": 50,
        "pipeline_bpe_nfkc_lowercase_agreement": 1.0,
        "pipeline_bpe_nfkc_lowercase_seconds": 2.0,
        "pipeline_bpe_nfkc_lowercase_in_graph_agreement": 1.0,
        "pipeline_bpe_nfkc_lowercase_in_graph_seconds": 4.0,
        "pipeline_bpe_nfkc_lowercase_in_graph_compares": "ids",
        "pipeline_unigram_nmt_nfkc_metaspace_agreement": 1.0,
        "pipeline_unigram_nmt_nfkc_metaspace_seconds": 2.0,
        "pipeline_unigram_nmt_nfkc_metaspace_in_graph_agreement": 0.999167,
        "pipeline_unigram_nmt_nfkc_metaspace_in_graph_seconds": 0.5,
        "pipeline_unigram_nmt_nfkc_metaspace_in_graph_compares": "ids",
        "pipeline_unigram_nmt_nfkc_metaspace_in_graph_disagreements_as_python_reference": 1,
        "pipeline_unigram_nmt_nfkc_metaspace_in_graph_disagreements_same_pieces_reordered": 1,
    }
    page = tokenizer_parity.render(results)
    assert "| bpe_nfkc_lowercase_in_graph |" in page
    assert "no special tokens, ids | 100.0000% | 4.0 |" in page
    assert (
        "ids (1 disagreements are the float32 Python reference's ids; 1 are the reference's "
        "pieces in another order, an exact tie in score) | 99.9167%"
    ) in page
