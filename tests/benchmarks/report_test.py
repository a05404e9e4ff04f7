import json

import pytest

from benchmarks import report
from kbert.run_records import write_run_record

WSD = {
    "variant": "corpus+glosses x0.5",
    "development_set": "semeval2007",
    "train_corpus": "semcor",
    "train_sentences": 10,
    "train_instances": 20,
    "sense_embeddings": 5,
    "test_lemma_senses": 7,
    "coverage": {"corpus": 4, "synset": 1, "hypernym": 1, "lexname": 1},
    "train_seconds": 1.0,
    "gloss_seconds": 2.0,
    "sets": {
        name: {
            "instances": 3,
            "mfs_f1": 50.0,
            "corpus": 55.5,
            "corpus+glosses x0.5": 61.25,
            "corpus_nearest_pct": 90.0,
        }
        for name in ("semeval2007", "ALL")
    },
}
LAB = {
    "wsd": WSD,
    "expected_cosine": [0.1, 0.2],
    "expected_cosine_z": [0.0, 0.01],
    "rogue_share": [0.5, 0.6],
    "wic_auc": [0.7, 0.8],
    "wic_auc_z": [0.71, 0.81],
    "probes": {
        "pos_pretrained": [80.0, 90.0],
        "pos_random": [70.0, 70.0],
        "pos_majority": 20.0,
        "ner_pretrained": [85.0, 88.0],
        "ner_random": [79.0, 79.0],
        "ner_majority": 77.0,
    },
}


def test_the_page_is_made_from_the_records_and_checked(tmp_path, capsys):
    records, page = tmp_path / "results", tmp_path / "results.md"
    write_run_record(
        records / "lab11_contextual_embeddings.json",
        LAB,
        305.2,
        argv=["labs/lab11_contextual_embeddings.py"],
    )
    write_run_record(
        records / "other.json",
        {"accuracy": 0.5, "nested": {"x": 1}},
        2.0,
        argv=["benchmarks/other.py"],
    )
    arguments = ["--results-dir", str(records), "--output", str(page), "--readme", ""]
    assert report.main(arguments + ["--check"]) == 1  # no page yet
    assert report.main(arguments) == 0
    text = page.read_text()
    assert "Command: `python labs/lab11_contextual_embeddings.py`" in text
    assert "| **corpus+glosses x0.5** | **61.25** | **61.25** |" in text
    assert "| MFS (WordNet's first sense) | 50.00 | 50.00 |" in text
    assert "| NER random | 79.00 | 79.00 | 77.00 |" in text
    # A record without its own renderer lists every number by its dotted key.
    assert "## other" in text and "| accuracy | 0.5 |" in text and "| nested.x | 1 |" in text
    assert report.main(arguments + ["--check"]) == 0
    page.write_text(text.replace("61.25", "99.99"))  # a hand edit
    assert report.main(arguments + ["--check"]) == 1
    assert "out of date" in capsys.readouterr().err


TRANSFER = {
    "labelled": 300,
    "pretrained_acc": 0.71,
    "random_acc": 0.6,
    "seeds": 3,
    "objective": "masked",
    "control": "random_bidirectional",
    "gap_points": 11.0,
    "majority_class_acc": 0.188,
    "learning_rates": {"masked": {"3e-04": 0.8}},
    "chosen_learning_rate": {"masked": "3e-04"},
    "curve": {"masked": {"300": {"mean": 0.71, "sd": 0.02, "runs": [0.7, 0.72]}}},
}


def test_the_readme_summary_is_made_from_the_records(tmp_path):
    records, page, readme = tmp_path / "results", tmp_path / "results.md", tmp_path / "README.md"
    write_run_record(records / "transfer.json", TRANSFER, 9.0, argv=["-m", "benchmarks.transfer"])
    readme.write_text(f"# kbert\n\n{report.README_BEGIN}\nold\n{report.README_END}\n\nmore\n")
    arguments = ["--results-dir", str(records), "--output", str(page), "--readme", str(readme)]
    assert report.main(arguments + ["--check"]) == 1
    assert report.main(arguments) == 0
    text = readme.read_text()
    assert "old" not in text and text.endswith(f"{report.README_END}\n\nmore\n")
    assert (
        "| [transfer](docs/results.md#transfer) | TREC-6 with 300 labels: masked start 0.710 "
        "vs random init 0.600 (+11.0 points, 3 seeds) |"
    ) in text
    assert "| masked | 3e-04 | 0.710 ± 0.020 |" in page.read_text()
    assert report.main(arguments + ["--check"]) == 0
    readme.write_text("# no markers\n")
    with pytest.raises(ValueError, match="must hold the lines"):
        report.main(arguments)


def test_a_file_that_is_not_a_record_is_named(tmp_path):
    (tmp_path / "broken.json").write_text(json.dumps({"accuracy": 1}))
    with pytest.raises(ValueError, match=r"broken.json: expected a run record"):
        report.render(tmp_path)


def test_the_committed_page_matches_the_committed_records():
    assert report.main(["--check"]) == 0, "run `python -m benchmarks.report` and commit"


LONG_INPUTS = {
    "accuracy": {
        "head": {"head": 0.8, "head_tail": 0.82, "window_mean": 0.83, "window_max": 0.81},
        "windows": {"head": 0.78, "head_tail": 0.8, "window_mean": 0.85, "window_max": 0.84},
    },
    "reviews_per_s": {"head": 40.0, "head_tail": 39.5, "window_mean": 12.25, "window_max": 12.0},
    "windows_per_review": {"head": 1.0, "head_tail": 1.0, "window_mean": 3.4, "window_max": 3.4},
    "train_seconds": {"head": 100.0, "windows": 300.4},
    "test_reviews": 1000,
    "train_reviews": 2000,
    "sequence_length": 128,
    "epochs": 2,
    "model": "minilm_l6",
}


def test_the_long_input_table_crosses_training_and_reading(tmp_path):
    write_run_record(tmp_path / "long_inputs.json", LONG_INPUTS, 9.0, argv=["-m", "x"])
    text = report.render(tmp_path)
    assert "| trained on | train s | head | head_tail | window_mean | window_max |" in text
    assert "| windows | 300 | 0.7800 | 0.8000 | 0.8500 | 0.8400 |" in text
    assert "| reviews/s (reading) |  | 40.0 | 39.5 | 12.2 | 12.0 |" in text
    assert "| windows per review |  | 1.00 | 1.00 | 3.40 | 3.40 |" in text
    summary = report.readme_summary(tmp_path)
    assert "best 0.850 (trained windows, read window_mean) vs 0.800 head-only" in summary


def test_a_second_run_of_a_program_is_rendered_as_the_first(tmp_path):
    write_run_record(tmp_path / "transfer_pre_ln.json", TRANSFER, 9.0, argv=["-m", "x"])
    text = report.render(tmp_path)
    assert "## transfer_pre_ln" in text and "| masked | 3e-04 | 0.710 ± 0.020 |" in text
    assert "masked start 0.710 vs random init 0.600" in report.readme_summary(tmp_path)
    assert report.for_record(report.RENDERERS, "transfers") is None  # a name, not a prefix


def test_the_probe_table_names_each_start_against_its_control(tmp_path):
    probes = {
        "probe_accuracy": {"masked": [0.5, 0.625], "random_bidirectional_post_ln": [0.5, 0.5]},
        "control_of": {"masked": "random_bidirectional_post_ln"},
        "best_layer_gain": {
            "masked": {"layer": 1, "accuracy": 0.625, "control": 0.5, "gain_points": 12.5}
        },
        "majority_class_acc": 0.188,
        "train_size": 1000,
        "test_size": 500,
        "control_seeds": 3,
    }
    write_run_record(tmp_path / "transfer_probes.json", probes, 9.0, argv=["-m", "x"])
    text = report.render(tmp_path)
    assert "| encoder | emb | 1 |" in text and "| masked | 0.500 | 0.625 |" in text
    assert "masked +12.5 points at layer 1 (0.625 vs random_bidirectional_post_ln 0.500)" in text


def test_a_record_without_a_renderer_lists_its_first_numbers(tmp_path):
    results = {"rows": [{"acc": 0.25, "name": "a", "ok": True}] * 50}
    text = report._generic_section(results, limit=10)
    assert "| rows.0.acc | 0.25 |" in text and "| rows.0.name | a |" in text
    assert "ok" not in text and "(90 more values in the record)" in text
    assert report._generic_section({"flag": True}) == "(no numbers)"


DIALOG = {
    "hits_at_1": {"pretrained": 0.3, "random": 0.1},
    "perplexity": {"pretrained": 40.0, "random": 300.0},
    "results": {
        name: {
            "before": {"perplexity": 900.0, "hits_at_1": 0.05},
            "perplexity": value,
            "hits_at_1": hits,
            "train_choice_accuracy": 0.7,
            "train_lm_loss": 3.0,
        }
        for name, value, hits in (("pretrained", 40.0, 0.3), ("random", 300.0, 0.1))
    },
    "candidates": 20,
    "train_replies": 7000,
    "held_out_replies": 500,
    "settings": {
        "epochs": 3,
        "batch_size": 16,
        "learning_rate": 3e-4,
        "max_history": 2,
        "seed": 0,
        "sequence_length": 128,
        "lab01_model": "runs/x",
    },
    "samples": [
        {"persona": ["i like dogs."], "partner": "hi", "pretrained": "hello", "random": "x"}
    ],
}
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


def test_the_dialog_and_tokenizer_labs_render_tables_and_headlines():
    page = report.dialog_section(DIALOG)
    assert "| pretrained | 900.0 → 40.0 | 0.050 → 0.300 | 0.700 |" in page
    assert "chance 0.050" in page and "“hello”" in page
    assert "pretrained Hits@1 0.300" in report.HEADLINES["lab09_dialog"](DIALOG)
    page = report.tokenizers_section(TOKENIZERS)
    assert "| bpe | 1,600 | 1,600 | 1.500 / 0.100% |" in page and "`hard</w> words</w>`" in page
    assert "(results/lab18_tokenizers.png)" in page
    assert "at 1,600 tokens: wordpiece 1.50" in report.HEADLINES["lab18_tokenizers"](TOKENIZERS)


TEXT_TO_TEXT = {
    "text_to_text_trec_acc": 0.5,
    "encoder_trec_acc": 0.6,
    "random_text_to_text_trec_acc": 0.4,
    "random_encoder_trec_acc": 0.55,
    "labelled": 1000,
    "seeds": 3,
    "parameters": {"encoder": 100, "encoder_decoder": 101, "encoder_decoder_intermediate_dim": 64},
    "pretrain_seconds": {"encoder_decoder": 600.0, "encoder": 601.0},
    "pretraining": {
        "encoder_decoder": {"steps": 10, "seconds": 600.0, "held_out": {"loss": 5.0}},
        "encoder": {"steps": 8, "seconds": 601.0, "held_out": {"mlm_accuracy": 0.1}},
    },
    "budget_minutes": 10.0,
    "learning_rates": {"encoder_decoder_pretrained": 0.001, "encoder_pretrained": 0.0003},
    "curve": {
        "encoder_decoder_pretrained": {"1000": {"mean": 0.5, "sd": 0.01, "invalid": 0.02}},
        "encoder_pretrained": {"1000": {"mean": 0.6, "sd": 0.02, "invalid": 0.0}},
    },
    "other_tasks": {"squad_pretrained": {"exact_match": 1.5, "f1": 4.0, "split": "dev-split"}},
    "span_samples": [
        {"reads": "a <extra_id_0> c", "truth": "<extra_id_0> b", "writes": "<extra_id_0> b"}
    ],
    "export": {"path": "x", "num_beams": 4, "served_equals_keras": True, "examples": []},
}


def test_the_text_to_text_lab_renders_both_families_and_its_headline():
    page = report.text_to_text_section(TEXT_TO_TEXT)
    assert "| encoder_decoder_pretrained | 0.001 | 0.500 ± 0.010 (2.0% no label word) |" in page
    assert "| encoder_pretrained | 0.0003 | 0.600 ± 0.020 |" in page
    assert "| squad_pretrained | exact_match 1.5, f1 4.0 |" in page
    assert "equal the Keras model's: True" in page and "written “<extra_id_0> b”" in page
    headline = report.HEADLINES["lab19_text_to_text"](TEXT_TO_TEXT)
    assert "text-to-text 0.500 vs encoder 0.600 (random init 0.400 / 0.550)" in headline


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


def test_the_curation_lab_and_the_text_to_text_start_render_tables_and_headlines():
    page = report.data_curation_section(CURATION)
    assert (
        "| exact_duplicates | 9 | exact_duplicate 9 | exact_copy 6, repeated_boilerplate 3 | 0 |"
        in page
    )
    assert "| word_salad | 75.0% | 980.0 |" in page
    assert "| curated | 110 | 280.5 | 0.620 ± 0.020 |" in page
    assert report.HEADLINES["lab18b_data_curation"](CURATION) == (
        "planted copies and noise found: recall 75%–100% per kind; equal tokens: held-out "
        "perplexity 280.5 curated vs 300.2 planted, TREC-6 0.620 vs 0.600"
    )
    page = report.text_to_text_start_section(START)
    assert "| 1500 | 0.900 | 0.050 | 0.040 | 6.000 | 6.000 | +0.000 |" in page
    assert "| 0 | 0.600 (top label 50%, source +0.50) |" in page
    assert "| 1500, decoder re-initialised | 0.500 (top label 40%, source +0.80) |" in page
    assert report.HEADLINES["text_to_text_start"](START).endswith(
        "TREC-6 validation, best rate: step 1500 0.300 vs random init 0.600"
    )


def test_pairs_flag_a_task_at_the_majority_class_and_feature_extraction_picks_on_validation():
    pairs = {
        name: {
            "train": 100,
            "test": 50,
            "val_accuracy_per_epoch": [0.5, 0.6],
            "test_accuracy": accuracy,
            "test_f1": f1,
            "majority_accuracy": 0.52,
        }
        for name, accuracy, f1 in (("rte", 0.51, None), ("mrpc", 0.8, 0.85))
    }
    page = report.pairs_section(pairs)
    assert "| rte | 100 | 50 | 0.500 0.600 | 0.510 | - | 0.520 | 1 of 1 |" in page
    assert "| mrpc | 100 | 50 | 0.500 0.600 | 0.800 | 0.850 | 0.520 | 0 of 1 |" in page
    seeded = {
        "rte": {
            **pairs["rte"],
            "seeds": 2,
            "test_accuracy_sd": 0.02,
            "runs_at_or_below_majority": 1,
            "runs": [{"val_accuracy_per_epoch": [0.5]}, {"val_accuracy_per_epoch": [0.6]}],
        }
    }
    page = report.pairs_section(seeded)
    assert "| rte | 100 | 50 | 0.500; 0.600 | 0.510 ± 0.020 | - | 0.520 | 1 of 2 |" in page
    runs = [
        {
            "pooling": p,
            "layers": "top",
            "head": "mlp",
            "validation_accuracy": v,
            "test_accuracy": t,
            "parameters": 10,
            "epochs": 3,
        }
        for p, v, t in (("cls", 0.7, 0.9), ("mean", 0.8, 0.85))
    ]
    features = {
        "checkpoint": "m",
        "examples": {"train": 9, "validation": 1, "test": 5},
        "majority_baseline_test_accuracy": 0.2,
        "runs": runs,
    }
    assert "| mean | top | mlp | 0.800 | 0.850 | 10 | 3 |" in report.feature_extraction_section(
        features
    )
    assert report.HEADLINES["lab15_feature_extraction"](features).endswith(
        "mean / top / mlp head, test 0.850"
    )


def test_the_serving_lab_renders_its_timings_and_headline():
    serving = {
        "export_sentences_per_s": 700.0,
        "keras_sentences_per_s": 350.0,
        "max_abs_diff": 1.5e-6,
        "test_accuracy": 0.96,
        "timings": {
            "export_batch32": {
                "batch_size": 32,
                "p50_ms": 45.0,
                "p95_ms": 51.0,
                "sentences_per_s": 700.0,
            }
        },
    }
    assert "| export_batch32 | 32 | 45.00 | 51.00 | 700.0 |" in report.serving_section(serving)
    assert "700 sentences/s from raw text vs 350 through model.predict (2.00x)" in (
        report.HEADLINES["lab20_serving"](serving)
    )


def test_the_syllabus_time_column_comes_from_the_records(tmp_path):
    records, page, syllabus = tmp_path / "results", tmp_path / "results.md", tmp_path / "labs.md"
    records.mkdir()
    write_run_record(
        records / "lab07_thing.json",
        {"accuracy": 0.5},
        1234.5,
        argv=["labs/lab07_thing.py", "--epochs", "2", "--record", "docs/results/lab07_thing.json"],
    )
    write_run_record(
        records / "thing.json",
        {"x": 1},
        61,
        argv=["-m", "benchmarks.thing", "--record", "docs/results/thing.json"],
    )
    syllabus.write_text(
        "| # | lab | reproduces | command | time (2 cores) | prints |\n"
        "|---|---|---|---|---|---|\n"
        "| 7 | [`lab07_thing.py`](lab07_thing.py) | a | `python labs/lab07_thing.py` | old | b |\n"
        "| 1b | [`../benchmarks/thing.py`](../benchmarks/thing.py) | c | d | hand | e |\n"
        "| 8 | [`lab08_other.py`](lab08_other.py) | f | g | 99 s (recorded) | h |\n"
        "\ntext after | the | table | with | bars | too\n"
    )
    arguments = ["--results-dir", str(records), "--output", str(page), "--readme", ""]
    arguments += ["--syllabus", str(syllabus)]
    assert report.main(arguments + ["--check"]) == 1
    assert report.main(arguments) == 0
    lines = syllabus.read_text().splitlines()
    date = json.loads((records / "thing.json").read_text())["date"][:10]
    assert lines[2].split(" | ")[4] == f"1,234 s, recorded {date} with `--epochs 2`"
    assert lines[3].split(" | ")[4] == f"61 s, recorded {date}"
    assert lines[4].split(" | ")[4] == "not recorded yet"  # no record: no number
    assert lines[-1] == "text after | the | table | with | bars | too"
    assert report.main(arguments + ["--check"]) == 0


def _grid_row(rate, val, acc):
    return {
        "method": "full",
        "learning_rate": rate,
        "val_mean": val,
        "acc_mean": acc,
        "acc_sd": 0.01,
    }


def test_a_full_row_at_another_rate_than_the_grid_chose_gets_a_note(tmp_path):
    grid = {
        "settings": {"train_examples": 1000, "epochs": 3, "seeds": 3, "lab01_model": "ckpt"},
        "chosen": {"lab01/full": {"chosen": "full lr=0.0003"}},
        "studies": {
            "rates": {
                "lab01": {"rows": [_grid_row(1e-4, 0.56, 0.647), _grid_row(3e-4, 0.67, 0.748)]}
            }
        },
    }
    (tmp_path / "adaptation_grid.json").write_text(json.dumps({"results": grid}))
    rows = [
        {"start": "lab01", "label": "full", "learning_rate": 1e-4},
        {"start": "lab01", "label": "lora", "learning_rate": 3e-3},
    ]
    (note,) = report.full_rate_notes({"rows": rows}, tmp_path)
    assert "fine-tuned at 0.0001" in note and "chose 0.0003 on validation" in note
    assert "0.0001: 0.647 ± 0.010, 0.0003: 0.748 ± 0.010" in note and "`ckpt`" in note
    rows[0]["learning_rate"] = 3e-4  # at the chosen rate: nothing to explain
    assert report.full_rate_notes({"rows": rows}, tmp_path) == []
    assert report.full_rate_notes({"rows": rows}, tmp_path / "elsewhere") == []


def test_a_second_grid_file_answers_for_its_own_start(tmp_path):
    grid = {
        "settings": {"train_examples": 1000, "epochs": 3, "seeds": 3},
        "studies": {
            "rates": {
                "minilm_l6": {"rows": [_grid_row(1e-4, 0.90, 0.93), _grid_row(3e-5, 0.92, 0.95)]}
            }
        },
    }
    (tmp_path / "adaptation_grid_minilm.json").write_text(json.dumps({"results": grid}))
    rows = [{"start": "minilm_l6", "label": "full", "learning_rate": 1e-4}]
    (note,) = report.full_rate_notes({"rows": rows}, tmp_path)
    assert note.startswith("Note (minilm_l6)") and "chose 3e-05 on validation" in note
    rows = [{"start": "lab01", "label": "full", "learning_rate": 1e-4}]  # no grid for it here
    assert report.full_rate_notes({"rows": rows}, tmp_path) == []


def _peft_row(method, rate, validation, test, seeds=3):
    return {
        "label": f"{method} lr={rate:g}",
        "method": method,
        "learning_rate": rate,
        "seeds": seeds,
        "val_mean": validation,
        "acc_mean": test,
        "acc_sd": 0.02,
    }


def test_a_row_near_the_majority_class_gets_the_grid_s_evidence_or_is_flagged(tmp_path):
    grid = {
        "settings": {"train_examples": 1000, "epochs": 3, "test_examples": 500},
        "majority_class_acc": {"validation": 0.23, "test": 0.276},
        "studies": {
            "peft": {
                "lab01": {
                    "rows": [
                        _peft_row("prompt_tuning", 3e-3, 0.29, 0.339),
                        _peft_row("prompt_tuning", 3e-2, 0.28, 0.307),
                        _peft_row("lora", 3e-3, 0.62, 0.670),
                    ],
                    "chosen": {"prompt_tuning": "prompt_tuning lr=0.003"},
                },
                "minilm_l6": {"rows": [_peft_row("prompt_tuning", 3e-2, 0.71, 0.750)]},
            }
        },
    }
    (tmp_path / "adaptation_grid_peft.json").write_text(json.dumps({"results": grid}))
    rows = [
        {"start": "lab01", "label": "prompt_tuning", "method": "prompt_tuning"},
        {"start": "lab01", "label": "lora", "method": "lora"},
        {"start": "lab01", "label": "features", "method": "feature_extraction"},
    ]
    for row, accuracy in zip(rows, (0.315, 0.670, 0.300), strict=True):
        row.update(acc_mean=accuracy, trainable_pct=0.13)
    comparison = {"task": "trec", "test_examples": 500, "rows": rows}
    prompt, features = report.near_majority_notes(comparison, tmp_path)
    assert prompt.startswith("Note (lab01 prompt_tuning, test 0.315 against the majority")
    assert "its grid (1,000 questions, 3 epochs; test mean" in prompt
    assert "prompt_tuning lr=0.003: 0.339 ± 0.020; prompt_tuning lr=0.03: 0.307" in prompt
    assert "chosen on validation, prompt_tuning lr=0.003, scores 0.339" in prompt
    assert "other start(s): minilm_l6 0.750." in prompt and "lora" not in prompt
    assert "no setting of the grid clears the majority class by 0.1" in prompt
    assert report.UNEXPLAINED in features and "lab01 features" in features
    grid["studies"]["peft"]["lab01"]["rows"][1]["acc_mean"] = 0.6  # a setting that does adapt
    (tmp_path / "adaptation_grid_peft.json").write_text(json.dumps({"results": grid}))
    prompt, _ = report.near_majority_notes(comparison, tmp_path)
    assert "its setting, not the method, holds it down" in prompt
    assert report.near_majority_notes(comparison, tmp_path / "elsewhere") == []
    # Another task or test set: TREC-6's majority class and grid say nothing of it.
    assert report.near_majority_notes({**comparison, "task": "sst2"}, tmp_path) == []
    assert report.near_majority_notes({**comparison, "test_examples": 96}, tmp_path) == []


def _document_record(model, ulmfit, plain):
    results = {
        "task": "imdb",
        "model": model,
        "language_model": {"lm_examples": 3800},
        "settings": {"sequence_length": 128},
        "results": {"100": {"ulmfit": {"test_mean": ulmfit}, "plain": {"test_mean": plain}}},
    }
    return json.dumps({"results": results})


def test_a_lab07_row_near_the_majority_class_is_set_beside_the_lab_s_other_runs(tmp_path):
    name = "lab07_document_classification_lab01"
    (tmp_path / f"{name}.json").write_text(_document_record("lab01", 0.569, 0.548))
    (note,) = report.document_classification_notes(name, tmp_path)
    assert note.startswith("Note (100 labelled, ulmfit 0.569; 100 labelled, plain 0.548; IMDb")
    assert report.UNEXPLAINED in note  # nothing else measured yet
    other = tmp_path / "lab07_document_classification.json"
    other.write_text(_document_record("minilm_l6", 0.768, 0.760))
    (note,) = report.document_classification_notes(name, tmp_path)
    assert report.UNEXPLAINED not in note
    assert "(minilm_l6, 128 tokens, stage 1 on 3,800 texts): 100 labelled: ulmfit 0.768" in note
    # Rows well above the majority class need no note.
    assert report.document_classification_notes("lab07_document_classification", tmp_path) == []


def test_no_committed_comparison_row_near_the_majority_class_is_unexplained():
    page = (report.ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    assert report.UNEXPLAINED not in page


SPEED_ROW = {
    "dtype": "float32",
    "jit_compile": False,
    "kbert_tokens_per_s": 5000.0,
    "kbert_mfu": 0.31,
    "keras_hub_tokens_per_s": 4000.0,
    "keras_hub_mfu": 0.25,
    "ratio": 1.25,
}


def test_the_speed_and_classification_benchmarks_render_tables_and_headlines():
    workload = {
        "kbert_tokens_per_s": 5000.0,
        "keras_hub_tokens_per_s": 4000.0,
        "ratio": 1.25,
        "mfu": 0.31,
        "keras_hub_mfu": 0.25,
        "real_token_fraction": 1.0,
        "configuration": {
            "dtype": "float32",
            "jit_compile": False,
            "batch_size": 32,
            "sequence_length": 128,
        },
        "configurations": [SPEED_ROW, {**SPEED_ROW, "dtype": "mixed_bfloat16", "ratio": 2.5}],
    }
    train_step = {
        **workload,
        "workload": "full",
        "sst2": {**workload, "real_token_fraction": 0.2},
        "peak_gflops": {"float32": 450.0, "mixed_bfloat16": 870.0},
    }
    text = report.RENDERERS["train_step"](train_step)
    assert "| float32 | no | 5,000 | 31.0% | 4,000 | 25.0% | 1.25 |" in text
    assert "| mixed_bfloat16 | no | 5,000 | 31.0% | 4,000 | 25.0% | 2.50 |" in text
    assert "Workload `sst2` (20% of the positions" in text and "bfloat16 870 GFLOP/s" in text
    assert report.HEADLINES["train_step"](train_step).endswith(
        "1.25x keras-hub in the same setting"
    )

    pretrain = {
        "float32": {"tokens_per_s": 900.0, "mfu": 0.2},
        "mixed_bfloat16+xla": {"tokens_per_s": 1500.5, "mfu": 0.17},
        "peak_gflops": {"float32": 450.0, "mixed_bfloat16": 870.0},
        "preset": "tutorial_50m",
        "parameters": 51_000_000,
        "batch_size": 8,
        "sequence_length": 256,
    }
    text = report.RENDERERS["pretrain_speed"](pretrain)
    assert "| mixed_bfloat16+xla | 1,500 | 17.0% |" in text and "51.0M parameters" in text
    assert "(mixed_bfloat16+xla, MFU 17.0%)" in report.HEADLINES["pretrain_speed"](pretrain)

    classification = {
        "task": "trec",
        "train_examples": 5452,
        "epochs": 3,
        "sequence_length": 64,
        "batch_size": 32,
        "learning_rate": 1e-4,
        "kbert_dtype": "float32",
        "kbert_jit": False,
        "kbert_pooling": "pooler",
        "kbert_acc": 0.97,
        "kbert_examples_per_s": 60.0,
    }
    text = report.RENDERERS["classification"](classification)
    assert "| kbert (float32, pooler pooling) | 0.9700 | 60.0 |" in text
    assert "keras-hub" not in text  # --skip-peer: no peer row
    peer = {**classification, "peer_acc": 0.96, "peer_examples_per_s": 30.0, "speedup": 2.0}
    assert "| keras-hub BertTextClassifier (float32) | 0.9600 | 30.0 |" in (
        report.RENDERERS["classification"](peer)
    )
    assert report.HEADLINES["classification"](peer) == (
        "MiniLM-L6 on trec: kbert 0.970 vs keras-hub 0.960, 2.00x its training speed"
    )


def test_the_tokenizer_parity_headline_names_only_what_falls_short():
    results = {"texts": 20000, "bpe_agreement": 1.0, "sentencepiece_in_graph_agreement": 0.9998}
    assert report.HEADLINES["tokenizer_parity"](results) == (
        "1 of 2 identical on all 20,000 texts (sentencepiece in graph: 4 differ)"
    )
    assert report.HEADLINES["tokenizer_parity"](
        {**results, "sentencepiece_in_graph_agreement": 1.0}
    ) == ("2 of 2 identical on all 20,000 texts")


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
    assert report.HEADLINES["tokenizer_parity"](results).endswith(
        "; tokenizer.json pipelines: 1 of 2 on all 12,000 (lowest 99.9950%)"
    )
    page = report.RENDERERS["tokenizer_parity"](results)
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
    page = report.RENDERERS["tokenizer_parity"](results)
    assert "| bpe_nfkc_lowercase_in_graph |" in page
    assert "no special tokens, ids | 100.0000% | 4.0 |" in page
    assert (
        "ids (1 disagreements are the float32 Python reference's ids; 1 are the reference's "
        "pieces in another order, an exact tie in score) | 99.9167%"
    ) in page


def test_the_token_task_benchmark_renders_both_sides_or_kbert_alone():
    kbert_side = {
        "checkpoint": "MiniLM-L6-H384-uncased",
        "batch_size": 32,
        "versions": {"tensorflow": "2.21.0", "keras": "3.15.1"},
        "ner_epochs": 2,
        "ner_lr": 3e-4,
        "ner_train_sentences": 14041,
        "ner_test_sentences": 3453,
        "kbert_ner_f1": 85.35,
        "kbert_ner_train_examples_per_s": 104.0,
        "qa_source": "dev-split",
        "qa_epochs": 1,
        "qa_lr": 2e-4,
        "qa_train_questions": 8981,
        "qa_eval_questions": 1589,
        "kbert_qa_em": 52.8,
        "kbert_qa_f1": 66.42,
        "kbert_qa_train_examples_per_s": 15.0,
    }
    text = report.RENDERERS["token_tasks"](kbert_side)
    assert "(the peer was not run)" in text and "| NER | test entity F1 | 85.35 | — |  |" in text
    assert report.HEADLINES["token_tasks"](kbert_side) == "NER F1 kbert 85.35; QA F1 kbert 66.42"
    both = {
        **kbert_side,
        "versions": {**kbert_side["versions"], "torch": "2.14.1", "transformers": "5.24.0"},
        "peer_ner_f1": 85.76,
        "peer_ner_train_examples_per_s": 52.0,
        "peer_qa_em": 55.0,
        "peer_qa_f1": 68.24,
        "peer_qa_train_examples_per_s": 5.0,
    }
    text = report.RENDERERS["token_tasks"](both)
    assert "| task | metric | kbert | transformers 5.24.0 (PyTorch 2.14.1) | kbert / peer |" in text
    assert "|  | training sentences/s | 104.0 | 52.0 | 2.00× |" in text
    assert "| QA | EM / F1 | 52.80 / 66.42 | 55.00 / 68.24 |  |" in text
    assert "|  | training windows/s | 15.0 | 5.0 | 3.00× |" in text
    assert report.HEADLINES["token_tasks"](both) == (
        "NER F1 kbert 85.35 vs transformers 85.76 (2.00× its speed); "
        "QA F1 kbert 66.42 vs transformers 68.24 (3.00× its speed)"
    )


def test_the_readme_summary_keeps_a_program_s_own_run_and_the_grid_s_parts(tmp_path):
    write_run_record(tmp_path / "transfer.json", TRANSFER, 9.0, argv=["-m", "x"])
    write_run_record(tmp_path / "transfer_pre_ln.json", TRANSFER, 9.0, argv=["-m", "x"])
    summary = report.readme_summary(tmp_path)
    assert "[transfer](" in summary and "transfer_pre_ln" not in summary
    assert "transfer_pre_ln" in report.render(tmp_path)  # the page keeps every run


def test_the_hub_squad_lab_renders_both_encoders():
    results = {
        "source": "dev-split",
        "train_questions": 3000,
        "train_windows": 3037,
        "eval_questions": 500,
        "train_seconds": 175.0,
        "exact_match": 15.0,
        "f1": 23.36,
        "hub_variables_updated": True,
        "same_preprocessing": True,
        "export": "saved_models/squad_hub/1",
    }
    # An old record: no kbert-encoder row, no difference.
    text = report.RENDERERS["lab08_tfhub_squad"](results)
    assert "| TF Hub BERT format, loaded into Keras 3 (`kbert.hub`) | 15.00 | 23.36 | 175 |" in text
    assert "own encoder" not in text and "differ by" not in text
    both = {
        **results,
        "max_abs_difference": 1.9e-6,
        "kbert_encoder": {"exact_match": 14.8, "f1": 22.86, "train_seconds": 170.0},
    }
    text = report.RENDERERS["lab08_tfhub_squad"](both)
    assert "| kbert's own encoder, same checkpoint and recipe | 14.80 | 22.86 | 170 |" in text
    assert "differ by at most 1.9e-06" in text
    assert report.HEADLINES["lab08_tfhub_squad"](both).endswith(
        "EM 15.00 / F1 23.36 vs 14.80 / 22.86 on kbert's own encoder"
    )


def _anchor_row(strength, test, loss):
    return {
        "strength": strength,
        "encoder": "frozen" if strength is None else "anchored",
        "clipnorm": 1.0,
        "test_accuracy": test,
        "validation_accuracy": test,
        "final_loss": loss,
        "final_penalty": 0.0,
        "displacement_by_epoch": [0.0],
        "step_rms_last_epoch": 0.0,
        "path_over_displacement": None if strength is None else 1.0,
        "head_displacement_rms": 5e-3,
    }


def test_a_strength_that_scores_as_the_frozen_control_is_named():
    results = {
        "start": "minilm_l6",
        "train_examples": 1000,
        "epochs": 3,
        "batch_size": 32,
        "learning_rate": 3e-4,
        "seed": 0,
        "validation_examples": 545,
        "test_examples": 500,
        "test_majority": 0.276,
        "rows": [
            _anchor_row(0.01, 0.936, 0.31),
            _anchor_row(10.0, 0.242, 1.73),
            _anchor_row(None, 0.240, 1.72),
        ],
    }
    page = report.anchor_strength_section(results)
    assert "| — (encoder frozen) | 1 |" in page
    assert page.count("scores as the encoder-frozen control") == 1
    assert "- λ 10 (clip 1) scores as the encoder-frozen control (0.242 against 0.240" in page
    without_control = {**results, "rows": results["rows"][:2]}
    assert "encoder-frozen control (" not in report.anchor_strength_section(without_control)


def test_the_grid_headline_shows_chosen_settings_or_a_multitask_study_s_pairs():
    def chosen(label, test):
        return {"chosen": label, "val": 0.5, "test": test, "test_sd": 0.01}

    grid = {
        "chosen": {
            "lab01/full": chosen("full lr=0.0003", 0.731),
            "lab01/discriminative_lr": chosen("discriminative_lr lr=0.001 factor=1", 0.785),
            "lab01/l2_sp": chosen("l2_sp λ=0.01 lr=0.0003", 0.727),
            "lab01/full@100": chosen("full lr=0.0003", 0.457),
        }
    }
    assert report.HEADLINES["adaptation_grid"](grid) == (
        "TREC-6 test, chosen on validation: lab01 full 0.731 (lr=0.0003); "
        "lab01 discriminative_lr 0.785 (lr=0.001 factor=1)"
    )
    multitask = {
        "chosen": {
            "lab01/full@100": chosen("full lr=0.0003", 0.457),
            "lab01/multitask@100": chosen("multitask clf 1.0 + LM 0.5 lr=0.0003", 0.422),
            "lab01/full@300": chosen("full lr=0.0001", 0.650),
            "lab01/multitask@300": chosen("multitask clf 1.0 + LM 0.5 lr=0.0003", 0.711),
        }
    }
    assert report.HEADLINES["adaptation_grid"](multitask) == (
        "TREC-6 test, chosen on validation: lab01, 100 labels: multitask 0.422 vs full 0.457; "
        "lab01, 300 labels: multitask 0.711 vs full 0.650"
    )


def test_the_serving_speed_benchmark_renders_every_side_and_its_headline():
    timing = {"batch1_p50_ms": 4.0, "batch1_p95_ms": 6.5, "batch_sentences_per_s": 300.0}
    results = {
        "checkpoint": "MiniLM-L6-H384-uncased",
        "num_classes": 6,
        "sequence_length": 128,
        "batch_size": 32,
        "passes": 3,
        "cpu_count": 2,
        "versions": {"tensorflow": "2.21.0"},
        "datasets": {
            "trec": {
                "examples": 500,
                "latency_examples": 500,
                "kbert": timing,
                "ort": {**timing, "batch1_p50_ms": 8.0, "batch_sentences_per_s": 150.0},
                "max_abs_diff_ort": 2.5e-6,
                "ratio_kbert_over_ort": {"batch": 2.0, "batch1_p50": 2.0},
            },
            "imdb": {"examples": 20, "latency_examples": 20, "kbert": timing},
        },
    }
    text = report.RENDERERS["serving"](results)
    assert "trec (500 test texts):" in text and "imdb (20 test texts):" in text
    assert "| kbert SavedModel (session loader) | 4.00 | 6.50 | 300.0 |  |  |" in text
    assert (
        "| HF fast tokenizer + ONNX Runtime | 8.00 | 6.50 | 150.0 | 2.00× / 2.00× | 2.5e-06 |"
        in text
    )
    assert "batch 32 sentences/s" in text and "on 2 cores" in text
    # Every row of both tables has the header's six cells (no "|" inside a cell).
    assert {line.count("|") for line in text.splitlines() if line.startswith("|")} == {7}
    assert report.HEADLINES["serving"](results) == (
        "classify from raw text, batch 32 / 1: trec 300/s, p50 4 ms "
        "(ORT 150/s, 8 ms); imdb 300/s, p50 4 ms"
    )
