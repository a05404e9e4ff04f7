from benchmarks.reports import text_to_text_start

START = {
    "checkpoints": {
        str(step): {
            "span_corruption": {
                "format_token_accuracy": 0.9,
                "content_token_accuracy": 0.05 * (step > 0),
                "unigram_content_accuracy": 0.04,
                "content_loss": 6.0,
                "content_loss_other_sources": 6.0,
                "source_gain_nats": 0.0,
            },
            "trec": {
                "0.001": {
                    "validation_accuracy": 0.6 - 0.3 * (step > 0),
                    "most_generated_share": 0.5,
                    "label_source_gain_nats": 0.5,
                }
            },
        }
        for step in (0, 1500)
    },
    "decoder_reset": {
        "1500": {
            "trec": {
                "0.001": {
                    "validation_accuracy": 0.5,
                    "most_generated_share": 0.4,
                    "label_source_gain_nats": 0.8,
                }
            }
        }
    },
    "steps": 1500,
    "pretrain_seconds": 700.0,
    "most_frequent_content_token": "the",
    "majority_class_validation": 0.23,
    "labelled": 1000,
    "rates": [0.001],
}


def test_the_text_to_text_start_renders_its_tables_and_headline():
    page = text_to_text_start.render(START)
    assert "| 1500 | 0.900 | 0.050 | 0.040 | 6.000 | 6.000 | +0.000 |" in page
    assert "| 0 | 0.600 (top label 50%, source +0.50) |" in page
    assert "| 1500, decoder re-initialised | 0.500 (top label 40%, source +0.80) |" in page
    assert text_to_text_start.headline(START).endswith(
        "TREC-6 validation, best rate: step 1500 0.300 vs random init 0.600"
    )
