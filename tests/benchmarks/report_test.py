import importlib
import json
from pathlib import Path

import pytest

from benchmarks import report, reports
from benchmarks.reports import _families
from benchmarks.reports import _pages as pages
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
    "headline_size": 300,
    "gaps": {
        "masked": {
            "control": "random_bidirectional",
            "pretrained_acc": 0.71,
            "random_acc": 0.6,
            "gap_points": 11.0,
        }
    },
    "seeds": 3,
    "majority_class_acc": 0.188,
    "learning_rates": {"masked": {"3e-04": 0.8}},
    "chosen_learning_rate": {"masked": "3e-04"},
    "curve": {"masked": {"300": {"mean": 0.71, "sd": 0.02, "runs": [0.7, 0.72]}}},
}


def test_the_readme_summary_is_made_from_the_records(tmp_path):
    records, page, readme = tmp_path / "results", tmp_path / "results.md", tmp_path / "README.md"
    write_run_record(records / "transfer.json", TRANSFER, 9.0, argv=["-m", "benchmarks.transfer"])
    readme.write_text(f"# kbert\n\n{pages.README_BEGIN}\nold\n{pages.README_END}\n\nmore\n")
    arguments = ["--results-dir", str(records), "--output", str(page), "--readme", str(readme)]
    assert report.main(arguments + ["--check"]) == 1
    assert report.main(arguments) == 0
    text = readme.read_text()
    assert "old" not in text and text.endswith(f"{pages.README_END}\n\nmore\n")
    assert (
        "| [transfer](docs/results.md#transfer) | TREC-6 with 300 labels, each start vs the "
        "random init of its architecture: masked 0.710 vs 0.600 (+11.0 points); mean of 3 "
        "seeds |"
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


def test_a_second_run_of_a_program_is_rendered_as_the_first(tmp_path):
    write_run_record(tmp_path / "transfer_pre_ln.json", TRANSFER, 9.0, argv=["-m", "x"])
    text = report.render(tmp_path)
    assert "## transfer_pre_ln" in text and "| masked | 3e-04 | 0.710 ± 0.020 |" in text
    assert "masked 0.710 vs 0.600 (+11.0 points)" in pages.readme_summary(tmp_path)
    assert _families.for_record(_families.RENDERERS, "transfers") is None  # a name, not a prefix


def test_a_record_without_a_renderer_lists_its_first_numbers(tmp_path):
    results = {"rows": [{"acc": 0.25, "name": "a", "ok": True}] * 50}
    text = report._generic_section(results, limit=10)
    assert "| rows.0.acc | 0.25 |" in text and "| rows.0.name | a |" in text
    assert "ok" not in text and "(90 more values in the record)" in text
    assert report._generic_section({"flag": True}) == "(no numbers)"


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


def test_the_readme_summary_keeps_a_program_s_own_run_and_the_grid_s_parts(tmp_path):
    write_run_record(tmp_path / "transfer.json", TRANSFER, 9.0, argv=["-m", "x"])
    write_run_record(tmp_path / "transfer_pre_ln.json", TRANSFER, 9.0, argv=["-m", "x"])
    summary = pages.readme_summary(tmp_path)
    assert "[transfer](" in summary and "transfer_pre_ln" not in summary
    assert "transfer_pre_ln" in report.render(tmp_path)  # the page keeps every run


def test_the_readme_names_its_chosen_runs_and_the_page_sums_up_every_run(tmp_path, monkeypatch):
    write_run_record(tmp_path / "transfer.json", TRANSFER, 9.0, argv=["-m", "x"])
    readme = pages.readme_summary(tmp_path)
    assert "[transfer](docs/results.md#transfer)" in readme
    assert readme.endswith(
        "All 1 runs, a line each: [docs/results.md#summary](docs/results.md#summary)."
    )
    monkeypatch.setattr(pages, "README_RECORDS", ("lab01_pretraining",))
    assert "transfer" not in pages.readme_summary(tmp_path).split("All 1 runs")[0]
    page = report.render(tmp_path)
    summary = page.split("## Summary\n\n", 1)[1].split("\n\n", 1)[0]
    assert "| [transfer](#transfer) | TREC-6 with 300 labels, each start vs the random" in summary


def test_the_driver_finds_every_family_module_of_the_package():
    package = Path(reports.__file__).parent
    modules = {path.stem for path in package.glob("*.py") if not path.stem.startswith("_")}
    found = {module.__name__.rsplit(".", 1)[1] for module in _families.FAMILIES.values()}
    assert found == modules
    for name in sorted(modules):
        module = importlib.import_module(f"benchmarks.reports.{name}")
        assert module.STEMS, name
        assert hasattr(module, "render") or hasattr(module, "headline"), name
        for stem in module.STEMS:
            assert _families.FAMILIES[stem] is module, stem


def test_each_committed_record_has_one_family_or_the_generic_table():
    # Each stem belongs to one module (`families` refuses a second claim), and a record named
    # `<stem>_<run>` to the module with the longest such stem: one family per record.
    page = (report.ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    generic = []
    for path in sorted((report.ROOT / "docs" / "results").glob("*.json")):
        family = _families.for_record(_families.FAMILIES, path.stem)
        if family is None or not hasattr(family, "render"):
            generic.append(path.stem)
            results = json.loads(path.read_text(encoding="utf-8"))["results"]
            assert report._generic_section(results) in page, path.stem
    # Every committed record has its own section; a new record gets its module in reports/.
    assert generic == []


def test_two_modules_claiming_one_record_name_are_refused(tmp_path, monkeypatch):
    package = tmp_path / "claims"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "_helpers.py").write_text("")  # not a family: skipped
    (package / "first.py").write_text('STEMS = ("lab99_thing",)\n')
    (package / "second.py").write_text('STEMS = ("lab99_other", "lab99_thing")\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(
        ValueError, match="'lab99_thing' is claimed by claims.first and claims.second"
    ):
        _families.families(importlib.import_module("claims"))


def test_the_page_says_which_commit_it_describes_flags_the_others_and_sums_the_time(tmp_path):
    from benchmarks.reports._evidence import evidence_summary

    def record(commit, cpu="AMD EPYC", seconds=600.0, **extra):
        machine = {"cpu": cpu, "cores": 2, "memory_gib": 23.5}
        return {"commit": commit, "machine": machine, "wall_seconds": seconds, **extra}

    records = {
        "lab01": record("a" * 40, seconds=3600.0, inputs={}),
        "lab02": record("a" * 40, inputs={}),
        "lab03": record("b" * 40, cpu="Intel Xeon", dirty=True, inputs={}),
        "lab04": record("a" * 40),
    }
    text = evidence_summary(records)
    assert text.startswith(
        "These pages describe commit `aaaaaaaaaa` on AMD EPYC, 2 cores: 3 of 4 records were made "
        "there. The course's total wall time, summed over its records: 1 h 30 min (5,400 s)."
    )
    split = evidence_summary(records, benchmarks={"lab01"})
    assert "over its records: 30 min (1,800 s); the benchmarks beyond them: 1 h 00 min" in split
    # The course is what a student runs (the labs at their defaults); the grids and diagnoses
    # the labs read, and the benchmarks, are summed apart.
    three = evidence_summary(records, benchmarks={"lab01"}, labs={"lab02", "lab03"})
    assert (
        "every lab at its defaults: 20 min (1,200 s); the grids and diagnoses the labs read and "
        "cite: 10 min (600 s); the benchmarks beyond them: 1 h 00 min (3,600 s)."
    ) in three
    # lab01 names the files it wrote; a record that read other bytes under that name is flagged.
    model = "saved_models/lab01_causal/encoder.keras"
    writer = {
        "part": {"saved_files": {model: "1" * 64, "saved_models/lab01_causal/vocab.txt": "2"}}
    }
    linked = {
        "lab01": record("a" * 40, inputs={}, results=writer),
        "lab02": record("a" * 40, inputs={model: "1" * 64}),
        "lab07": record("a" * 40, inputs={model: "9" * 64, "$KBERT_DATA_DIR/x.txt": "3"}),
    }
    flagged = evidence_summary(linked)
    assert (
        "**1 that read a saved model other than the one its writer's record wrote:** lab07 "
        f"({model}: not what lab01 wrote)."
    ) in flagged
    assert "lab02 (" not in flagged
    assert report.lab_records({"lab02_finetuning": {}, "lab02_finetuning_x": {}}) == {
        "lab02_finetuning"
    }
    from benchmarks.course import RETIRED

    retired = next(name for name, now in RETIRED.items() if now == "transfer" or "60min" in now)
    assert report.benchmark_records({retired: {}, "lab02_finetuning": {}}) == {retired}
    assert "**1 made at another commit:** lab03 (`bbbbbbbbbb`)." in text
    assert "**1 made on another machine:** lab03 (Intel Xeon, 2 cores)." in text
    assert "**1 made with uncommitted changes:** lab03." in text
    assert "**1 without pinned inputs" in text and text.endswith(":** lab04.")
    # Records that name the CPU's features tell a Xeon with AMX from one without.
    amx = record("a" * 40, cpu="Xeon", inputs={})
    amx["machine"]["cpu_features"] = ["avx512f", "avx512_bf16", "amx_bf16"]
    plain = record("a" * 40, cpu="Xeon", inputs={})
    plain["machine"]["cpu_features"] = ["avx2"]
    text = evidence_summary({"x": amx, "y": amx, "z": plain})
    assert "on Xeon (avx512_bf16, amx_bf16), 2 cores" in text
    assert "**1 made on another machine:** z (Xeon (no bf16), 2 cores)." in text
    same = {name: record("a" * 40, inputs={}) for name in ("x", "y")}
    assert "**" not in evidence_summary(same)  # nothing to flag
    # A comparison resumed after an interruption times only its last call: its rows' training
    # (mean seconds × seeds) is the floor the totals count, and the record is named.
    rows = [{"train_s": 100.0, "seeds": 3}, {"train_s": 50.0, "seeds": 2}, {"label": "x"}]
    resumed = record("a" * 40, seconds=120.0, inputs={}, results={"rows": rows})
    whole = record("a" * 40, seconds=500.0, inputs={}, results={"rows": rows})
    text = evidence_summary({"lab03": resumed, "lab04": whole}, labs={"lab03", "lab04"})
    assert "every lab at its defaults: 15 min (900 s)" in text  # 400 + 500
    assert (
        "**1 resumed after an interruption (their rows' training exceeds their wall time, which "
        "counts only the last call; the totals above count the training instead):** lab03 "
        "(120 s wall, 400 s of training)."
    ) in text
    assert evidence_summary({}) == ""


def test_every_lab_s_section_states_what_its_source_claims():
    # A lab's record family states its source's claim: a `CLAIM` under the title, or (these
    # families) a sentence beside the rows that test it, made from the record.
    beside_the_rows = {
        "adaptation",  # labs 3-6, 16, 17: benchmarks/reports/_claims.py
        "lab02_finetuning",
        "lab07_document_classification",
        "lab12_pairs",
        "lab19_text_to_text",
    }
    labs = {path.stem for path in (report.ROOT / "labs").glob("lab*.py")}
    families = {module.__name__.rsplit(".", 1)[1]: module for module in _families.FAMILIES.values()}
    for name, module in families.items():
        if set(module.STEMS) & labs and name not in beside_the_rows:
            assert getattr(module, "CLAIM", None), name
    page = report.render(report.ROOT / "docs" / "results")
    assert "What the source claims: TransferTransfo (Wolf et al. 2019)" in page
