from benchmarks.reports import lab18_tokenizers

TOKENIZERS = {
    "train_books": 2,
    "train_words": 1000,
    "held_out_texts": {"gutenberg": 10, "wikitext": 10, "sst2": 10},
    "results": {
        name: {
            size: {
                **{
                    s: {"fertility": 1.5, "tokens_per_text": 9.0, "unknown_pct": 0.1}
                    for s in ("gutenberg", "wikitext", "sst2")
                },
                "train_seconds": 3.0,
                "vocabulary": int(size),
            }
            for size in ("800", "1600")
        }
        for name in ("wordpiece", "bpe", "byte_level_bpe", "unigram")
    },
    "segmented": {"text": "hard words", "vocabulary_size": 800, "bpe": ["hard</w>", "words</w>"]},
    "figure": "docs/results/lab18_tokenizers.png",
}


def test_the_tokenizer_lab_renders_its_table_and_headline():
    page = lab18_tokenizers.render(TOKENIZERS)
    assert "| bpe | 1,600 | 1,600 | 1.500 / 0.100% |" in page and "`hard</w> words</w>`" in page
    assert "(results/lab18_tokenizers.png)" in page
    assert "at 1,600 tokens: wordpiece 1.50" in lab18_tokenizers.headline(TOKENIZERS)
