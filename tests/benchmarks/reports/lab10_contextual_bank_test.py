from benchmarks.reports import lab10_contextual_bank

RESULTS = {
    "layers": "last4",
    "same_sense_cosine": 0.9109,
    "different_sense_cosine": 0.7949,
    "static_cosine": 1.0,
}


def test_the_section_sets_same_sense_against_different_sense_and_static():
    page = lab10_contextual_bank.render(RESULTS)
    assert "| contextual (last4), same sense | 0.9109 |" in page
    assert "| static (the input embedding), any two | 1.0000 |" in page
    assert "sit above different-sense ones (+0.1160)" in page
    flat = dict(RESULTS, same_sense_cosine=0.7)
    assert "sit no higher than different-sense ones (-0.0949)" in lab10_contextual_bank.render(flat)
