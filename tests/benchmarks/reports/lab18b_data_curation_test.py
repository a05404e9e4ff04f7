from benchmarks.reports import lab18b_data_curation

CURATION = {
    "documents": {"originals": 100, "copies": 12, "noise": 15},
    "filters": {
        "exact_duplicates": {
            "removed": 9,
            "by_reason": {"exact_duplicate": 9},
            "planted_removed": {"exact_copy": 6, "repeated_boilerplate": 3},
            "originals_removed": 0,
        },
        "perplexity": {
            "removed": 5,
            "by_reason": {"perplexity_high": 4, "perplexity_low": 1},
            "planted_removed": {"word_salad": 3},
            "originals_removed": 2,
        },
    },
    "recall": {"exact_copy": 1.0, "word_salad": 0.75},
    "median_perplexity": {"None": 120.5, "word_salad": 980.0},
    "pretraining": {
        "planted": {"documents": 127, "held_out_perplexity": 300.25},
        "curated": {"documents": 110, "held_out_perplexity": 280.5},
    },
    "held_out_perplexity": {"planted": 300.25, "curated": 280.5},
    "trec": {"planted": {"mean": 0.6, "sd": 0.01}, "curated": {"mean": 0.62, "sd": 0.02}},
    "trec_acc": {"planted": 0.6, "curated": 0.62},
    "steps": 300,
    "tokens_per_corpus": 1228800,
    "labelled": 1000,
    "seeds": 3,
}


def test_the_curation_lab_renders_its_tables_and_headline():
    page = lab18b_data_curation.render(CURATION)
    assert (
        "| exact_duplicates | 9 | exact_duplicate 9 | exact_copy 6, repeated_boilerplate 3 | 0 |"
        in page
    )
    assert "| word_salad | 75.0% | 980.0 |" in page
    assert "| curated | 110 | 280.5 | 0.620 ± 0.020 |" in page
    assert lab18b_data_curation.headline(CURATION) == (
        "planted copies and noise found: recall 75%–100% per kind; equal tokens: held-out "
        "perplexity 280.5 curated vs 300.2 planted, TREC-6 0.620 vs 0.600"
    )
