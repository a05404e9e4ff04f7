from benchmarks.reports import lab22_bias


def _record():
    def seat(d, p):
        return {"t1": {"effect_size": d, "p_value": p}, "t2": {"effect_size": -d, "p_value": 0.5}}

    def row(plain, cda, mean, sd, change):
        difference = {"mean": mean, "sd": sd, "n": 3, "verdict": "no difference"}
        return {"fine_tuned": plain, "cda": cda, "difference": {**difference, "change": change}}

    return {
        "model": "m",
        "pooling": "mean",
        "seeds": 3,
        "train_examples": 200,
        "augmented_examples": 210,
        "test_examples": 872,
        "templates": ["{} is here."] * 8,
        "groups": {"gender_terms": {"first": "male", "second": "female"}},
        "tests": {"t1": ["X", "Y", "A", "B"], "t2": ["P", "Q", "R", "S"]},
        "seat": {"pretrained": seat(0.8, 0.001), "random_weights": seat(0.1, 0.3)},
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


def test_render_shows_seat_beside_the_control_and_cda_paired():
    page = lab22_bias.render(_record())
    assert (
        "| t1 | X vs Y | A vs B | +0.800 (p 0.0010) | +0.100 (p 0.3000) | 0.7000 ± 0.1000 |" in page
    )
    assert "| t2 | P vs Q | R vs S | -0.800 (p 0.5000) | -0.100 (p 0.5000) | – | – |" in page
    assert (
        "| abs gap gender_terms | 0.0300 ± 0.0100 | 0.0100 ± 0.0050 | -0.0200 ± 0.0040 (smaller) |"
        in page
    )
    assert "10 gender-swapped copies (5.0% of the training sentences" in page
    assert "gender_terms: male minus female" in page
    for table in page.split("\n\n"):  # a "|" inside a cell would add a column
        rows = [line for line in table.splitlines() if line.startswith("|")]
        assert len({row.count("|") for row in rows}) <= 1, table


def test_headline_counts_the_tests_below_the_level_and_names_the_cost():
    line = lab22_bias.headline(_record())
    assert "|" not in line  # it sits in a cell of the README's table
    assert line.startswith("SEAT p < 0.01 on 1 of 2 tests for m (0 with random weights)")
    assert "accuracy cost -0.0100 ± 0.0050 (worse)" in line
    assert line.endswith("gender-term abs gap -0.0200 ± 0.0040 (smaller)")
