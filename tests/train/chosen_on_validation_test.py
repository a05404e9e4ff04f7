import json
from types import SimpleNamespace

import pytest

from kbert import run_inputs
from kbert.train.chosen_on_validation import (
    CHOICES_VARIABLE,
    chosen_adapters,
    chosen_distillation,
    chosen_factor,
    chosen_feature_extraction,
    chosen_multitask,
    chosen_rates,
    chosen_variants,
    read_results,
    records_dir,
)

FALLBACK_RATES = {"full": 3e-4, "discriminative_lr": 1e-3, "top_2": 3e-4}


def _write(directory, name, results):
    path = directory / f"{name}.json"
    record = {"command": "python -m x", "commit": "0123456789abcdef", "results": results}
    path.write_text(json.dumps(record))
    return path


def _row(label, method, val_mean, learning_rate=None, **options):
    # As `benchmarks/adaptation_grid.study` writes a row: its rate beside the recipe's other
    # options, never among them.
    return {
        "label": label,
        "method": method,
        "val_mean": val_mean,
        "learning_rate": learning_rate,
        "options": options,
    }


def _rates_study():
    rows = [
        _row("full lr=0.0001", "full", 0.80, 1e-4),
        _row("full lr=0.0003", "full", 0.70, 3e-4),
        _row("discriminative_lr lr=0.003 factor=2.6", "discriminative_lr", 0.9, 3e-3, factor=2.6),
    ]
    chosen = {"full": "full lr=0.0001", "discriminative_lr": rows[2]["label"]}
    return {"studies": {"rates": {"minilm_l6": {"rows": rows, "chosen": chosen}}}}


def test_an_absent_record_falls_back_and_says_why(tmp_path):
    chosen = chosen_rates("minilm_l6", FALLBACK_RATES, results_dir=tmp_path)
    assert chosen.value == FALLBACK_RATES and not chosen.recorded
    assert "no choice for 'minilm_l6' in adaptation_grid_minilm.json" in chosen.source
    # A start no grid covers (a path) falls back too.
    assert not chosen_rates("/some/encoder", FALLBACK_RATES, results_dir=tmp_path).recorded
    assert read_results("adaptation_grid", tmp_path) is None


def test_a_broken_record_is_refused_naming_the_file(tmp_path):
    (tmp_path / "distillation_grid.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"distillation_grid.json is not a run record"):
        chosen_distillation("lab01", {"temperature": 2.0}, results_dir=tmp_path)
    (tmp_path / "distillation_grid.json").write_text('{"command": "x"}')
    with pytest.raises(ValueError, match="it has no 'results' dict"):
        read_results("distillation_grid", tmp_path)


def test_rates_and_factor_come_from_the_chosen_rows(tmp_path):
    path = _write(tmp_path, "adaptation_grid_minilm", _rates_study())
    run_inputs.forget_inputs()
    rates = chosen_rates("minilm_l6", FALLBACK_RATES, results_dir=tmp_path)
    # full's chosen rate (best validation, not the last row), and every one-rate method at it.
    assert rates.value == {"full": 1e-4, "discriminative_lr": 3e-3, "top_2": 1e-4}
    assert rates.recorded and "'full lr=0.0001'" in rates.source
    # The source names the record and the commit that made it.
    assert rates.source.startswith("adaptation_grid_minilm.json (0123456789):")
    factor = chosen_factor("minilm_l6", 1.0, results_dir=tmp_path)
    assert factor.value == {"factor": 2.6} and factor.recorded
    # The record read is an input of the run reading it (pinned by hash in its record).
    assert str(path) in run_inputs._NOTED


def test_the_adapters_choice_is_the_best_set_on_validation(tmp_path):
    rows = [
        _row("full lr=0.0003", "full", 0.9),
        _row(
            "adapters tutorial d=32 ×10 lr=0.003",
            "adapters",
            0.85,
            **_adapter("tutorial", 32, 3e-3),
        ),
        _row(
            "adapters houlsby d=32 ×30 lr=0.009", "adapters", 0.88, **_adapter("houlsby", 32, 9e-3)
        ),
        _row("feature_extraction last4 lr=0.02", "feature_extraction", 0.95, learning_rate=0.02),
    ]
    # Each family's own choice, as `benchmarks/adaptation_studies.adapter_family` names them.
    families = ("full", "adapters tutorial", "adapters houlsby", "feature_extraction")
    chosen = dict(zip(families, (row["label"] for row in rows), strict=True))
    study = {"rows": rows, "chosen": chosen, "full_rate": 3e-4}
    _write(tmp_path, "adaptation_grid_adapters", {"studies": {"adapters": {"lab01": study}}})
    result = chosen_adapters("lab01", {"trainable": "houlsby"}, results_dir=tmp_path)
    # Feature extraction's higher validation score is not an adapters setting; the rate is the
    # row's own (what validation saw), not a multiple of another study's full rate.
    assert result.value == {"trainable": "houlsby", "bottleneck_dim": 32, "learning_rate": 9e-3}
    assert "'adapters houlsby d=32 ×30 lr=0.009'" in result.source
    assert not chosen_adapters("minilm_l6", {"x": 1}, results_dir=tmp_path).recorded
    # Feature extraction's own choice in the same study: the rate its chosen row trained at.
    features = chosen_feature_extraction("lab01", {"learning_rate": 5e-3}, results_dir=tmp_path)
    assert features.value == {"learning_rate": 0.02} and features.recorded
    assert "'feature_extraction last4 lr=0.02'" in features.source
    fallback = chosen_feature_extraction("minilm_l6", {"learning_rate": 5e-3}, tmp_path)
    assert fallback.value == {"learning_rate": 5e-3} and not fallback.recorded


def _adapter(trainable, size, rate):
    return {"trainable": trainable, "bottleneck_dim": size, "learning_rate": rate}


def test_the_multitask_weight_at_the_nearest_size_and_the_distillation_setting(tmp_path):
    def size(weight, final=None):
        options = {"language_model_weight": weight}
        if final is not None:
            options["language_model_final_weight"] = final
        row = _row(f"multitask w={weight}", "multitask", 0.5, **options)
        return {"rows": [row], "chosen": {"multitask": row["label"]}}

    studies = {"multitask": {"lab01": {"100": size(0.25), "300": size(1.0, 0.0)}}}
    _write(tmp_path, "adaptation_grid_multitask", {"studies": studies})
    fallback = {"language_model_weight": 0.5}
    near = chosen_multitask("lab01", 1000, fallback, results_dir=tmp_path)
    assert near.value == {"language_model_weight": 1.0, "language_model_final_weight": 0.0}
    assert "at 300 questions" in near.source
    assert chosen_multitask("lab01", 120, fallback, tmp_path).value == {
        "language_model_weight": 0.25
    }
    assert chosen_multitask("minilm_l6", 1000, fallback, tmp_path).value == fallback
    # None: all the labelled examples, so the study's largest size.
    assert "at 300 questions" in chosen_multitask("lab01", None, fallback, tmp_path).source
    starts = {"lab01": {"chosen": {"temperature": 4.0, "soft_weight": 0.9}, "rows": []}}
    _write(tmp_path, "distillation_grid", {"starts": starts})
    chosen = chosen_distillation("lab01", {"temperature": 2.0, "soft_weight": 0.5}, tmp_path)
    assert chosen.value == {"temperature": 4.0, "soft_weight": 0.9} and chosen.recorded


def test_chosen_variants_give_one_row_when_starts_agree_else_one_per_setting():
    starts = [SimpleNamespace(name=name) for name in ("lab01", "minilm_l6", "other")]

    def recipe():
        pass

    settings = {"lab01": {"t": 1}, "minilm_l6": {"t": 2}, "other": {"t": 1}}
    recorded = {"lab01", "minilm_l6"}  # "other" has no grid record: it runs the fallback

    def choose(name):
        return SimpleNamespace(
            value=settings[name], source=f"record for {name}", recorded=name in recorded
        )

    variants, sources = chosen_variants("adapters", recipe, starts, choose, {"placement": "p"})
    assert variants == [
        ("adapters (chosen: lab01; fallback: other)", recipe, {"t": 1, "placement": "p"}),
        ("adapters (chosen: minilm_l6)", recipe, {"t": 2, "placement": "p"}),
    ]
    assert sources["minilm_l6"] == "record for minilm_l6"
    # lab01 chose what "other" falls back to: one setting, but not every start chose it.
    same, _ = chosen_variants("adapters", recipe, starts[:1] + starts[2:], choose)
    assert same == [("adapters (chosen: lab01; fallback: other)", recipe, {"t": 1})]
    agreed, _ = chosen_variants("adapters", recipe, starts[:1], choose)
    assert agreed == [("adapters", recipe, {"t": 1})]
    recorded.clear()
    fallback, _ = chosen_variants("adapters", recipe, starts[:2], choose)
    assert [label for label, _, _ in fallback] == [
        "adapters (fallback: lab01)",
        "adapters (fallback: minilm_l6)",
    ]
    settings["minilm_l6"] = {"t": 1}  # both fall back to one setting: still named a fallback
    fallback, _ = chosen_variants("adapters", recipe, starts[:2], choose)
    assert [label for label, _, _ in fallback] == ["adapters (fallback: lab01+minilm_l6)"]


def test_a_course_reads_the_records_where_record_labs_copies_them(tmp_path, monkeypatch):
    _write(tmp_path, "adaptation_grid_minilm", _rates_study())
    monkeypatch.setenv(CHOICES_VARIABLE, str(tmp_path))
    assert records_dir() == tmp_path
    assert chosen_rates("minilm_l6", FALLBACK_RATES).value["full"] == 1e-4
    assert records_dir(tmp_path / "other") == tmp_path / "other"  # an explicit folder wins
    monkeypatch.delenv(CHOICES_VARIABLE)
    assert records_dir().parts[-2:] == ("docs", "results")


def test_distillation_students_train_at_full_fine_tunings_chosen_rate(tmp_path):
    # A student trains its teacher's blocks: at the rate the teacher (full fine-tuning) trains
    # at, chosen on validation, not at a fixed library default.
    from kbert.train.adaptation_comparison import START_LEARNING_RATES

    _write(tmp_path, "adaptation_grid_minilm", _rates_study())
    run_inputs.forget_inputs()
    rates = chosen_rates("minilm_l6", START_LEARNING_RATES["minilm_l6"], results_dir=tmp_path)
    assert rates.recorded
    assert rates.value["distillation"] == rates.value["full"] == 1e-4
