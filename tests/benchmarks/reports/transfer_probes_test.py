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
