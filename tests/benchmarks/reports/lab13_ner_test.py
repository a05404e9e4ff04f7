from benchmarks.reports import lab13_ner


def _run(method, f1, **extra):
    return {
        "method": method,
        "train_sentences": 14041,
        "train_seconds": 300.0,
        "validation_f1": f1 + 1,
        "test_f1": f1,
        "test_precision": f1 - 1,
        "test_recall": f1 + 1,
        "test_token_accuracy": 97.0,
        "per_type_f1": {"PER": 90.0, "LOC": 88.0, "ORG": 80.0, "MISC": 75.0},
        **extra,
    }


def test_one_seed_records_render_as_before_and_three_seeds_add_sd_and_the_difference():
    old = {"methods": {"softmax": _run("softmax", 88.0), "crf": _run("crf", 88.5)}}
    page = lab13_ner.render(old)
    assert "1 seed(s)" in page and "| softmax | 14,041 | 300 | 89.00 | 88.00 | – |" in page
    new = {
        "methods": {
            "softmax": _run("softmax", 88.0, test_f1_sd=0.3),
            "crf": _run("crf", 88.5, test_f1_sd=0.2),
        },
        "differences": {"crf": {"mean": 0.5, "sd": 0.6, "n": 3, "verdict": "no difference"}},
        "settings": {"seeds": 3, "seed": 0, "epochs": 2},
    }
    page = lab13_ner.render(new)
    assert "3 seed(s)" in page
    assert "| crf | 14,041 | 300 | 89.50 | 88.50 ± 0.20 | +0.50 ± 0.60 (no difference) |" in page
    assert lab13_ner.headline(old) == "CoNLL-2003 test entity F1: softmax 88.00, crf 88.50"
    assert lab13_ner.headline(new) == (
        "CoNLL-2003 test entity F1: softmax 88.00, crf 88.50 (crf − softmax: no difference)"
    )


def test_the_invalid_tags_each_method_repaired_are_a_column_where_the_record_counts_them():
    # The CLAIM says a CRF makes every tag sequence valid; the record counts the invalid BIO
    # tags each method predicted on test (None for span, which decodes no BIO tags).
    one_seed = {
        "methods": {
            "softmax": _run("softmax", 88.0, repaired_tags=144),
            "crf": _run("crf", 88.5, repaired_tags=0),
            "span": _run("span", 87.0, repaired_tags=None),
        }
    }
    page = lab13_ner.render(one_seed)
    assert "| invalid test tags repaired (all seeds) |" in page
    assert "read as `B-X` (conlleval's rule):" in page
    assert "| 90.0 / 88.0 / 80.0 / 75.0 | 144 |" in page.split("| softmax |")[1].split("\n")[0]
    assert page.split("| crf |")[1].split("\n")[0].endswith("| 0 |")
    assert page.split("| span |")[1].split("\n")[0].endswith("| - |")
    # Three seeds (the lab's `summarize`): the row's sum, then each seed's count.
    seeded = {
        "methods": {
            "softmax": _run(
                "softmax",
                88.0,
                repaired_tags=1300,
                runs=[{"repaired_tags": n} for n in (400, 500, 400)],
            ),
            "span": _run("span", 87.0, repaired_tags=None, runs=[{"repaired_tags": None}] * 3),
        },
        "settings": {"seeds": 3, "seed": 0, "epochs": 2},
    }
    page = lab13_ner.render(seeded)
    assert page.split("| softmax |")[1].split("\n")[0].endswith("| 1,300 (400 / 500 / 400) |")
    assert page.split("| span |")[1].split("\n")[0].endswith("| - |")
    # A record without the count, or of span NER alone, renders without the column.
    plain = lab13_ner.render({"methods": {"softmax": _run("softmax", 88.0)}})
    assert "repaired" not in plain and "F1 points:" in plain
    span = lab13_ner.render({"methods": {"span": _run("span", 87.0, repaired_tags=None)}})
    assert "repaired" not in span and "F1 points:" in span
