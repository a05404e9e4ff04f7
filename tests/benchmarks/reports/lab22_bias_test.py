from benchmarks.reports import lab22_bias


def _seat(d, p):
    return {"t1": {"effect_size": d, "p_value": p}, "t2": {"effect_size": -d, "p_value": 0.5}}


def _record(steps=(130, 130)):
    def row(plain, cda, mean, sd, change):
        difference = {"mean": mean, "sd": sd, "n": 3, "verdict": "no difference"}
        return {"fine_tuned": plain, "cda": cda, "difference": {**difference, "change": change}}

    plain_steps, cda_steps = steps
    return {
        "model": "m",
        "pooling": "mean",
        "seeds": 3,
        "train_examples": 200,
        "augmented_examples": 210,
        "test_examples": 872,
        "settings": {
            "steps_matched_to": "fine_tuned",
            "arms": {
                "fine_tuned": {"batches_per_epoch": 65, "epochs": 2, "steps": 130},
                "cda": {"batches_per_epoch": 68, "epochs": 2, "steps": 130},
            },
        },
        "templates": ["{} is here."] * 8,
        "groups": {"gender_terms": {"first": "male", "second": "female"}},
        "tests": {"t1": ["X", "Y", "A", "B"], "t2": ["P", "Q", "R", "S"]},
        "seat": {
            "pretrained": _seat(0.8, 0.001),
            "random_weights": {  # three draws: t1's d 0.1, 0.3, 0.2; p < 0.01 in the second
                "seeds": [0, 1, 2],
                "draws": [_seat(0.1, 0.3), _seat(0.3, 0.005), _seat(0.2, 0.2)],
                "effect_size": {"t1": [0.2, 0.1], "t2": [-0.2, 0.1]},
            },
        },
        "runs": {
            "fine_tuned": [{"seed": s, "steps": plain_steps} for s in range(3)],
            "cda": [{"seed": s, "steps": cda_steps} for s in range(3)],
        },
        "summary": {
            "accuracy": {
                "fine_tuned": [0.85, 0.01],
                "cda": [0.84, 0.02],
                "difference": {"mean": -0.01, "sd": 0.005, "n": 3, "verdict": "worse"},
            },
            "abs gap gender_terms": row([0.03, 0.01], [0.01, 0.005], -0.02, 0.004, "smaller"),
            "abs d t1": row([0.7, 0.1], [0.6, 0.1], -0.1, 0.2, "no difference"),
        },
    }


def test_render_shows_seat_beside_the_controls_spread_and_cda_paired():
    page = lab22_bias.render(_record())
    assert (
        "| t1 | X vs Y | A vs B | +0.800 (p 0.0010) | +0.200 ± 0.100 (p < 0.01 in 1 of 3) | – "
        "| 0.7000 ± 0.1000 |" in page
    )
    assert (
        "| t2 | P vs Q | R vs S | -0.800 (p 0.5000) | -0.200 ± 0.100 (p < 0.01 in 0 of 3) | – | – "
        "| – |" in page
    )
    assert "beside 3 encoder(s) of the same shape with random weights (d as mean" in page
    # A record made before the lab compared the pretrained d with the draws, or tested the gaps.
    assert "re-splits" not in page
    assert (
        "| abs gap gender_terms | 0.0300 ± 0.0100 | 0.0100 ± 0.0050 | -0.0200 ± 0.0040 (smaller) |"
        in page
    )
    assert "10 gender-swapped copies (5.0% of the training sentences" in page
    assert "gender_terms: male minus female" in page
    for table in page.split("\n\n"):  # a "|" inside a cell would add a column
        rows = [line for line in table.splitlines() if line.startswith("|")]
        assert len({row.count("|") for row in rows}) <= 1, table


def test_render_states_each_arms_passes_and_the_steps_the_runs_took():
    page = lab22_bias.render(_record())
    assert "fine-tuned 2 pass(es) of 65 batches; with CDA 2 pass(es) of 68 batches" in page
    assert "every run took 130 optimizer steps." in page
    unequal = lab22_bias.render(_record(steps=(130, 136)))
    assert "the runs took 130, 136 optimizer steps (not equal)" in unequal
    assert "every run took" not in unequal


def test_a_single_random_draw_shows_no_spread():
    record = _record()
    record["seat"]["random_weights"] = {
        "seeds": [0],
        "draws": [_seat(0.1, 0.3)],
        "effect_size": {"t1": [0.1, None], "t2": [-0.1, None]},
    }
    page = lab22_bias.render(record)
    assert "| +0.800 (p 0.0010) | +0.100 (p < 0.01 in 0 of 1) |" in page
    assert "(random weights: 0 in 1 draw(s))" in lab22_bias.headline(record)


def test_headline_counts_the_tests_below_the_level_per_draw_and_names_the_cost():
    line = lab22_bias.headline(_record())
    assert "|" not in line  # it sits in a cell of the README's table
    assert line.startswith(
        "SEAT p < 0.01 on 1 of 2 tests for m (random weights: 0, 1, 0 in 3 draw(s))"
    )
    assert "accuracy cost at equal steps -0.0100 ± 0.0050 (worse)" in line
    assert line.endswith("gender-term abs gap -0.0200 ± 0.0040 (smaller)")


def test_render_reads_the_pretrained_d_against_the_draws_and_each_gap_against_its_null():
    record = _record()
    record["seat"]["pretrained_vs_random"] = {
        "t1": {"difference": 0.6, "control_sd": 0.1, "verdict": "better"},
        "t2": {"difference": -0.6, "control_sd": 0.1, "verdict": "worse"},
    }
    record["settings"]["permutations"] = 10000
    for arm, p_values in (("fine_tuned", (0.001, 0.02, 0.3)), ("cda", (0.5, 0.6, 0.7))):
        for run, p in zip(record["runs"][arm], p_values, strict=True):
            run["gaps"] = {"gender_terms": {"gap": 0.01, "p_value": p}}
    page = lab22_bias.render(record)
    assert "| +0.800 (p 0.0010) | +0.200 ± 0.100 (p < 0.01 in 1 of 3) | +0.600 (above) |" in page
    assert "| -0.600 (below) |" in page
    assert (
        "Each run's gap against 10,000 random re-splits of its fillers into groups of the same "
        "sizes"
    ) in page
    assert (
        "fine-tuned gender_terms p 0.0010, 0.0200, 0.3000; with CDA gender_terms p 0.5000, "
        "0.6000, 0.7000."
    ) in page


def test_render_gives_each_arm_s_rate_chosen_on_validation_and_the_rates_tried():
    tried = [
        {"learning_rate": 1e-4, "validation_accuracy": 0.85, "accuracy": 0.86},
        {"learning_rate": 3e-4, "validation_accuracy": 0.87, "accuracy": 0.85},
    ]
    choices = {
        "fine_tuned": {"chosen": 3e-4, "chosen_on": "validation_accuracy", "tried": tried},
        "cda": {"chosen": 1e-4, "chosen_on": "validation_accuracy", "tried": []},
    }
    page = lab22_bias.render({**_record(), "rate_choices": choices, "validation_examples": 1000})
    assert (
        "Each arm's peak rate, chosen on validation accuracy at the first seed (1,000 held-out "
        "training sentences;"
    ) in page
    assert (
        "fine-tuned 0.0003 of 0.0001 (0.850 / 0.860), 0.0003 (0.870 / 0.850); with CDA 0.0001."
        in page
    )
    assert "chosen on validation" not in lab22_bias.render(_record())
