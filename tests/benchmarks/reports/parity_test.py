from benchmarks.reports import parity

RESULTS = {
    "sentences": 1372,
    "encoder_max_abs_diff": 0.0,
    "embedding_min_cosine": 0.9999999999999998,
    "tokenizer_agreement": 1.0,
    "tokenizer_texts": 6824,
    "exact_gelu_max_abs_diff": 0.009513616561889648,
    "exact_gelu_embedding_min_cosine": 0.9999974639452041,
}


def test_the_section_names_both_activations_and_the_tokenizer_agreement():
    page = parity.render(RESULTS)
    assert "100.00% of 6,824 texts" in page
    assert "| keras-hub `BertBackbone`, both with tanh GELU | 1,372 sentences | 0 |" in page
    assert "| 0.00951 | 0.9999974639 |" in page
    assert parity.headline(RESULTS) == (
        "tokenizer ids 100.00% identical to HF tokenizers; encoder max |Δ| 0 against keras-hub"
    )
