from benchmarks import report
from kbert.run_records import write_run_record


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
    assert "Best layer (by test accuracy) against its control" in text  # an older record


def test_the_layer_is_read_as_chosen_on_validation_with_each_start_s_reading():
    from benchmarks.reports import transfer_probes

    probes = {
        "probe_accuracy": {"causal": [0.5, 0.6], "random_causal_pre_ln": [0.5, 0.55]},
        "validation_accuracy": {"causal": [0.5, 0.62], "random_causal_pre_ln": [0.5, 0.5]},
        "control_of": {"causal": "random_causal_pre_ln"},
        "best_layer_gain": {
            "causal": {
                "layer": 1,
                "chosen_on": "validation",
                "accuracy": 0.6,
                "control": 0.55,
                "gain_points": 5.0,
            }
        },
        "majority_class_acc": 0.188,
        "train_size": 1000,
        "test_size": 500,
        "validation_size": 500,
        "control_seeds": 3,
        "pooling": {"causal": "last"},
    }
    text = transfer_probes.render(probes)
    assert "read as each encoder was trained: causal at its last real token" in text
    assert "Layer chosen on 500 held-out training questions, its test accuracy against" in text
    assert transfer_probes.headline(probes).startswith(
        "frozen-layer linear probes on TREC-6, layer chosen on validation vs random weights"
    )
