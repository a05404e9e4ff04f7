"""Which saved comparison rows `run_comparison` may reuse: never one made with another rate,
other options or other weights (a lab16 re-record once reused rows made at an old default rate);
and choosing a method's settings on validation: summaries, the choice, the table (no training)."""

import pytest

from kbert.train import adaptation_comparison as comparison_module
from kbert.train import adaptation_recipes as recipes_module
from kbert.train.adaptation_comparison import (
    START_LEARNING_RATES,
    choose_on_validation,
    comparison_parser,
    format_summary_table,
    reusable,
    selected_variants,
    summarize,
    variant_key,
)
from kbert.train.adaptation_recipes import DEFAULT_LEARNING_RATES, StartingPoint

SETTINGS = {"train_examples": 1000, "epochs": 3}
SOURCES = {"minilm_l6": "minilm_l6"}


def _row(label, recipe, **changes):
    row = {
        "label": label,
        "start": "minilm_l6",
        "seed": 0,
        "source": "minilm_l6",
        "settings": SETTINGS,
        "recipe": recipe,
    }
    return {**row, **changes}


def test_a_row_is_reused_only_for_the_same_recipe_start_settings_and_seed():
    recipes = {"lora": variant_key("lora", {"rank": 8})}
    row = _row("lora", recipes["lora"])
    assert reusable(row, recipes, SOURCES, SETTINGS, seeds=1)
    assert recipes["lora"]["learning_rate"] == DEFAULT_LEARNING_RATES["lora"]
    # Labs pass the recipe function itself: the same key as its name.
    assert variant_key(recipes_module.lora, {"rank": 8}) == recipes["lora"]
    assert variant_key(recipes_module.full_fine_tuning, {})["learning_rate"] == 1e-4
    # The default rate changed since the row was made: rerun.
    old_rate = {**recipes["lora"], "learning_rate": DEFAULT_LEARNING_RATES["lora"] / 3}
    assert not reusable(_row("lora", old_rate), recipes, SOURCES, SETTINGS, seeds=1)
    # Another rank, an explicit rate, or a row saved without its recipe: rerun.
    assert not reusable(
        _row("lora", variant_key("lora", {"rank": 4})), recipes, SOURCES, SETTINGS, seeds=1
    )
    explicit = {"lora": variant_key("lora", {"rank": 8, "learning_rate": 1e-2})}
    assert not reusable(row, explicit, SOURCES, SETTINGS, seeds=1)
    assert not reusable({**row, "recipe": None}, recipes, SOURCES, SETTINGS, seeds=1)
    # Other weights, other settings, a seed not asked for.
    assert not reusable({**row, "source": "elsewhere"}, recipes, SOURCES, SETTINGS, seeds=1)
    assert not reusable(row, recipes, SOURCES, {**SETTINGS, "epochs": 4}, seeds=1)
    assert not reusable({**row, "seed": 1}, recipes, SOURCES, SETTINGS, seeds=1)


def test_a_start_s_chosen_rates_replace_the_method_defaults_and_key_its_rows():
    lab01 = StartingPoint("lab01", load=None, learning_rates=START_LEARNING_RATES["lab01"])
    minilm = StartingPoint("minilm_l6", load=None)
    assert lab01.learning_rate("full") == 3e-4
    assert lab01.learning_rate(recipes_module.full_fine_tuning) == 3e-4
    # A method the start has no rate for keeps the shared default.
    assert lab01.learning_rate("lora") == DEFAULT_LEARNING_RATES["lora"]
    assert minilm.learning_rate("full") == DEFAULT_LEARNING_RATES["full"] == 1e-4
    assert variant_key("full", {}, lab01)["learning_rate"] == 3e-4
    assert variant_key("full", {}, minilm)["learning_rate"] == 1e-4
    # An explicit rate still wins over the start's.
    assert variant_key("full", {"learning_rate": 1e-5}, lab01)["learning_rate"] == 1e-5
    # A row made at the shared default is not reused once the start has its own rate.
    old = {"full": variant_key("full", {})}
    new = {"full": variant_key("full", {}, lab01)}
    row = {**_row("full", old["full"]), "start": "lab01", "source": "lab01"}
    assert reusable(row, old, {"lab01": "lab01"}, SETTINGS, seeds=1)
    assert not reusable(row, new, {"lab01": "lab01"}, SETTINGS, seeds=1)


def test_with_the_code_version_only_rows_of_the_same_clean_commit_are_reused():
    recipes = {"lora": variant_key("lora", {"rank": 8})}
    code = {"commit": "a" * 40, "dirty": False}
    row = {**_row("lora", recipes["lora"]), "code": code}
    assert reusable(row, recipes, SOURCES, SETTINGS, seeds=1, code=code)
    # Another commit (a distilled student whose teacher's rate changed, new library code).
    later = {"commit": "b" * 40, "dirty": False}
    assert not reusable(row, recipes, SOURCES, SETTINGS, seeds=1, code=later)
    # Uncommitted changes now but not then, a row saved without its code, or outside a checkout.
    dirty = {**code, "dirty": True}
    assert not reusable(row, recipes, SOURCES, SETTINGS, seeds=1, code=dirty)
    # (An interrupted run on a tree with changes resumes its own rows.)
    assert reusable({**row, "code": dirty}, recipes, SOURCES, SETTINGS, seeds=1, code=dirty)
    assert not reusable({**row, "code": dirty}, recipes, SOURCES, SETTINGS, seeds=1, code=code)
    assert not reusable(_row("lora", recipes["lora"]), recipes, SOURCES, SETTINGS, 1, code)
    nowhere = {"commit": None, "dirty": False}
    assert not reusable({**row, "code": nowhere}, recipes, SOURCES, SETTINGS, 1, nowhere)


def test_a_seed_s_child_process_reruns_the_program_for_one_start_and_seed_without_recording():
    from kbert.train.adaptation_comparison import seed_process_command

    argv = ["python", "-m", "benchmarks.adaptation", "--record", "docs/results/a.json", "--fresh"]
    assert seed_process_command("minilm_l6", 2, argv) == [
        "python",
        "-m",
        "benchmarks.adaptation",
        "--fresh",
        "--starts",
        "minilm_l6",
        "--only-seed",
        "2",
    ]
    argv = ["python", "benchmarks/adaptation.py", "--record=a.json", "--starts", "lab01"]
    assert seed_process_command("lab01", 0, argv)[2:] == [
        "--starts",
        "lab01",
        "--starts",
        "lab01",
        "--only-seed",
        "0",
    ]


def test_missing_runs_leave_out_saved_rows_ensembles_and_ewc_without_a_pretraining_head():
    from kbert.train.adaptation_comparison import missing_runs

    variants = [("full", "full", {}), ("ewc", "ewc", {}), ("ensemble", "ensemble", {})]
    bert = StartingPoint("minilm_l6", load=None)
    causal = StartingPoint("lab01", load=None, objective="causal")
    saved = [{"label": "full", "start": "lab01", "seed": 0}]
    assert missing_runs(variants, bert, 0, saved) == ["full"]
    assert missing_runs(variants, causal, 0, saved) == ["ewc"]
    assert missing_runs(variants, causal, 1, saved) == ["full", "ewc"]


def test_a_student_distilled_from_the_ensemble_runs_after_every_seed_s_full_model():
    from kbert.train.adaptation_comparison import missing_runs, needs_every_seed, runs_per_seed

    bert = StartingPoint("minilm_l6", load=None)
    variants = [
        ("full", "full", {}),
        ("from_one", "distillation", {"temperature": 2.0}),
        ("from_ensemble", "distillation", {"temperature": 2.0, "teacher": "ensemble"}),
    ]
    assert missing_runs(variants, bert, 0, []) == ["full", "from_one"]
    assert needs_every_seed("distillation", {"teacher": "ensemble"})
    assert needs_every_seed("ensemble", {}) and not needs_every_seed("distillation", {})
    assert not runs_per_seed("distillation", bert, {"teacher": "ensemble"})
    assert runs_per_seed("distillation", bert)


def _summary_row(label, method, seed, validation, test):
    return {
        "label": label,
        "method": method,
        "start": "s",
        "seed": seed,
        "learning_rate": 1e-4,
        "trainable_params": 10,
        "trainable_pct": 100.0,
        "accuracy": test,
        "validation_accuracy": validation,
        "train_s": 1.0,
    }


def test_settings_are_chosen_on_validation_never_on_test():
    rows = [
        # "a" is best on test, "b" on validation: "b" must win.
        _summary_row("a", "m", 0, 0.50, 0.90),
        _summary_row("a", "m", 1, 0.60, 0.92),
        _summary_row("b", "m", 0, 0.70, 0.40),
        _summary_row("b", "m", 1, 0.70, 0.44),
        _summary_row("c", "other", 0, 0.10, 0.10),
    ]
    summaries = summarize(rows)
    assert [row["val_mean"] for row in summaries] == pytest.approx([0.55, 0.70, 0.10])
    assert summaries[1]["acc_mean"] == pytest.approx(0.42)
    chosen = choose_on_validation(summaries)
    assert {key: row["label"] for key, row in chosen.items()} == {
        ("s", "m"): "b",
        ("s", "other"): "c",
    }
    # One family for everything: the best validation row overall.
    assert choose_on_validation(summaries, family=lambda row: "all")[("s", "all")]["label"] == "b"
    table = format_summary_table(summaries)
    assert "| validation accuracy (mean) |" in table and "| 70.00 | 42.00 ± 2.83 (n=2)" in table


def test_choosing_without_validation_names_the_summary_row():
    rows = [{**_summary_row("a", "m", 0, 0.5, 0.5), "validation_accuracy": None}]
    with pytest.raises(ValueError, match="row s/a has no validation accuracy"):
        choose_on_validation(summarize(rows))
    # And the table then has no validation column.
    assert "validation" not in format_summary_table(summarize(rows))


def test_summaries_pair_each_method_with_the_baseline_seed_by_seed():
    rows = [
        _summary_row("full", "full", 0, 0.8, 0.90),
        _summary_row("full", "full", 1, 0.8, 0.80),
        _summary_row("full", "full", 2, 0.8, 0.85),
        # The same gap on every seed: better, though the means' spreads overlap.
        _summary_row("adapters", "adapters", 0, 0.8, 0.92),
        _summary_row("adapters", "adapters", 1, 0.8, 0.82),
        _summary_row("adapters", "adapters", 2, 0.8, 0.87),
        # Seeds 0 and 2 only: paired on those two; +5 then -5 points, no difference.
        _summary_row("noisy", "noisy", 0, 0.8, 0.95),
        _summary_row("noisy", "noisy", 2, 0.8, 0.80),
        {**_summary_row("ensemble", "ensemble", 0, 0.8, 0.9), "seed": None},
    ]
    summaries = {row["label"]: row for row in summarize(rows, baseline="full")}
    assert summaries["full"]["difference"] is None
    assert summaries["ensemble"]["difference"] is None
    adapters = summaries["adapters"]["difference"]
    assert adapters["mean"] == pytest.approx(0.02) and adapters["verdict"] == "better"
    assert adapters["sd"] == pytest.approx(0.0, abs=1e-12)
    noisy = summaries["noisy"]["difference"]
    assert noisy["n"] == 2 and noisy["verdict"] == "no difference"
    table = format_summary_table(list(summaries.values()))
    assert "| Δ to the baseline, paired (points) |" in table
    assert "+2.00 ± 0.00 (better)" in table and "+0.00 ± 7.07 (no difference)" in table
    # Without a baseline, no difference column.
    assert "Δ" not in format_summary_table(summarize(rows))


def test_summaries_keep_each_run_its_epochs_and_the_runs_at_the_majority_class():
    rows = [
        {**_summary_row("full", "full", 0, 0.8, 0.90), "epochs": 3, "at_majority": False},
        {**_summary_row("full", "full", 1, 0.8, 0.28), "epochs": 3, "at_majority": True},
        {**_summary_row("ulmfit", "full", 0, 0.8, 0.91), "epochs": 9, "at_majority": False},
        {**_summary_row("ulmfit", "full", 1, 0.8, 0.92), "epochs": 10, "at_majority": False},
        _summary_row("older", "full", 0, 0.8, 0.5),  # saved before runs recorded these
    ]
    summaries = {row["label"]: row for row in summarize(rows)}
    assert summaries["full"]["epochs"] == 3 and summaries["full"]["runs_at_majority"] == 1
    assert summaries["full"]["runs"] == [
        {"seed": 0, "accuracy": 0.90},
        {"seed": 1, "accuracy": 0.28},
    ]
    assert summaries["ulmfit"]["epochs"] is None  # its runs disagree: no one count to show
    assert summaries["ulmfit"]["runs_at_majority"] == 0
    assert summaries["older"]["epochs"] is None and summaries["older"]["runs_at_majority"] is None


def test_rows_can_each_have_their_own_baseline():
    rows = [
        _summary_row(label, label, seed, 0.8, accuracy)
        for label, accuracies in (
            ("full", (0.80, 0.82)),
            ("full_ulmfit", (0.84, 0.86)),
            ("gradual", (0.81, 0.83)),  # +1 over full, -3 under full_ulmfit
        )
        for seed, accuracy in enumerate(accuracies)
    ]
    summaries = {
        row["label"]: row
        for row in summarize(rows, baseline={"full_ulmfit": "full", "gradual": "full_ulmfit"})
    }
    assert summaries["full"]["difference"] is None
    assert summaries["full_ulmfit"]["difference"]["mean"] == pytest.approx(0.04)
    assert summaries["gradual"]["difference"]["mean"] == pytest.approx(-0.03)
    # Each row names the row it is paired with, for a reader of the record.
    assert summaries["gradual"]["baseline"] == "full_ulmfit"
    assert summaries["full_ulmfit"]["baseline"] == "full" and summaries["full"]["baseline"] is None
    # A label the dict does not name, or whose baseline did not run, has none.
    summaries = summarize(rows, baseline={"gradual": "missing"})
    assert all(row["difference"] is None and row["baseline"] is None for row in summaries)


def test_a_variant_s_epochs_option_sets_its_run_s_epochs(monkeypatch):
    calls = []

    def fake_adapt(method, start, data, seed, epochs, batch_size, verbose=0, **options):
        calls.append((method, epochs, options))
        return {"method": method, "seed": seed, "accuracy": 0.5, "train_s": 1.0}, None

    monkeypatch.setattr(comparison_module, "adapt_classifier", fake_adapt)
    start = StartingPoint("s", lambda: (None, None))
    variants = [
        ("full", "full", {}),
        ("full_longer", "full", {"epochs": 6, "learning_rate": 1e-4}),
    ]
    rows = comparison_module.compare_methods(variants, [start], {}, seeds=(0,), epochs=3)
    assert calls == [("full", 3, {}), ("full", 6, {"learning_rate": 1e-4})]
    assert [row["label"] for row in rows] == ["full", "full_longer"]
    # The epochs are part of the variant's key, so a resumed run tells the two apart.
    assert '"epochs": 6' in variant_key("full", variants[1][2])["options"]


def test_a_callable_baseline_pairs_each_row_with_its_own():
    rows = [
        _summary_row("full lr=0.001", "full", 0, 0.8, 0.80),
        _summary_row("full lr=0.003", "full", 0, 0.8, 0.70),
        _summary_row("discriminative_lr lr=0.001 factor=1", "discriminative_lr", 0, 0.8, 0.85),
        _summary_row("discriminative_lr lr=0.003 factor=1", "discriminative_lr", 0, 0.8, 0.85),
    ]

    def same_rate(row):
        rate = row["label"].split()[1]
        return None if row["method"] == "full" else f"full {rate}"

    summaries = {row["label"]: row for row in summarize(rows, baseline=same_rate)}
    assert summaries["full lr=0.001"]["difference"] is None
    assert summaries["discriminative_lr lr=0.001 factor=1"]["difference"]["mean"] == (
        pytest.approx(0.05)
    )
    assert summaries["discriminative_lr lr=0.003 factor=1"]["difference"]["mean"] == (
        pytest.approx(0.15)
    )


def test_methods_select_rows_by_label_or_by_the_name_a_chosen_or_fallback_row_extends():
    def recipe():
        pass

    variants = [
        ("full", recipe, {}),
        ("adapters (chosen: lab01)", recipe, {"t": 1}),
        ("adapters (fallback: minilm_l6)", recipe, {"t": 2}),
        ("adapters_pfeiffer (chosen: lab01)", recipe, {"t": 1}),
    ]
    parser = comparison_parser("test")
    chosen = selected_variants(parser, parser.parse_args(["--methods", "adapters"]), variants)
    assert [label for label, _, _ in chosen] == [variants[1][0], variants[2][0]]
    one = selected_variants(parser, parser.parse_args(["--methods", "full"]), variants)
    assert one == variants[:1]
    with pytest.raises(SystemExit):
        selected_variants(parser, parser.parse_args(["--methods", "adapter"]), variants)
