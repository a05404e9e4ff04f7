import copy
import json
from pathlib import Path

from benchmarks.reports import lab11_contextual_embeddings
from kbert.metrics.seed_comparison import paired_difference

RECORD = Path(__file__).resolve().parents[3] / "docs/results/lab11_contextual_embeddings.json"


def test_probes_over_seeds_render_each_layer_with_its_sd_and_paired_difference():
    results = copy.deepcopy(json.loads(RECORD.read_text())["results"])
    layers = len(results["probes"]["pos_pretrained"])
    pretrained = [[90.0 + seed] * layers for seed in range(3)]
    random = [[70.0, 70.5, 69.0][seed : seed + 1] * layers for seed in range(3)]
    probes = {"seeds": 3}
    for task in ("pos", "ner"):
        probes |= {
            f"{task}_pretrained": [91.0] * layers,
            f"{task}_pretrained_sd": [1.0] * layers,
            f"{task}_random": [69.83] * layers,
            f"{task}_random_sd": [0.76] * layers,
            f"{task}_majority": 23.91,
            f"{task}_difference": [
                paired_difference(list(p), list(r))
                for p, r in zip(
                    zip(*pretrained, strict=True), zip(*random, strict=True), strict=True
                )
            ],
        }
    results["probes"] = probes
    text = lab11_contextual_embeddings.render(results)
    assert "| POS pretrained | 91.00 ± 1.00 |" in text
    assert "| NER random | 69.83 ± 0.76 |" in text
    assert "| POS pretrained − random, paired by seed | +21.17 ± 1.61 (better) |" in text
    assert "Probes: mean ± sd over 3 seeds, a fresh random control each." in text


def test_a_one_seed_probe_record_still_renders():
    results = json.loads(RECORD.read_text())["results"]
    text = lab11_contextual_embeddings.render(results)
    assert f"| POS pretrained | {results['probes']['pos_pretrained'][0]:.2f} |" in text
    assert "paired by seed" not in text


def test_a_record_without_all_minus_semeval2007_renders_as_before():
    results = json.loads(RECORD.read_text())["results"]
    wsd = results["wsd"]
    assert "ALL_minus_semeval2007" not in wsd["sets"]  # the committed record predates the key
    every = wsd["sets"]["ALL"]
    assert lab11_contextual_embeddings.headline(results) == (
        f"WSD on the Raganato ALL set: F1 {every[wsd['variant']]:.2f} ({wsd['variant']}, "
        f"trained on {wsd['train_corpus']}) vs {every['mfs_f1']:.2f} for WordNet's first sense"
    )
    text = lab11_contextual_embeddings.render(results)
    assert text.startswith("**Word sense disambiguation**")
    assert "ALL minus SemEval-2007" not in text and "Reported WSD variant" not in text
    assert "| SemEval-2015 | ALL |" in text


def _with_all_minus_semeval2007(f1, mfs_f1):
    """The committed record with a planted ALL-minus-SemEval-2007 row, placed before ALL."""
    results = copy.deepcopy(json.loads(RECORD.read_text())["results"])
    sets = results["wsd"]["sets"]
    held_out = {**sets["ALL"], results["wsd"]["variant"]: f1, "mfs_f1": mfs_f1}
    held_out["instances"] = sets["ALL"]["instances"] - sets["semeval2007"]["instances"]
    every = sets.pop("ALL")
    sets |= {"ALL_minus_semeval2007": held_out, "ALL": every}
    return results


def test_all_minus_semeval2007_leads_the_headline_with_all_beside_it():
    results = _with_all_minus_semeval2007(12.34, 43.21)
    wsd = results["wsd"]
    every = wsd["sets"]["ALL"]
    line = lab11_contextual_embeddings.headline(results)
    assert line == (
        "WSD on Raganato's ALL minus SemEval-2007 (not used to choose the variant): F1 12.34 "
        f"({wsd['variant']}, trained on {wsd['train_corpus']}) vs 43.21 for WordNet's first "
        f"sense; on ALL, the field's convention: {every[wsd['variant']]:.2f} vs "
        f"{every['mfs_f1']:.2f}"
    )
    assert line.index("12.34") < line.index(f"{every[wsd['variant']]:.2f}")


def test_all_minus_semeval2007_leads_the_wsd_section_and_has_its_column():
    results = _with_all_minus_semeval2007(12.34, 43.21)
    wsd = results["wsd"]
    every = wsd["sets"]["ALL"]
    text = lab11_contextual_embeddings.render(results)
    assert text.startswith(
        f"**Reported WSD variant** ({wsd['variant']}, chosen on SemEval-2007): F1 12.34 on ALL "
        "minus SemEval-2007, the sets not used for the choice (WordNet's first sense 43.21); on "
        "ALL, the field's convention, which includes SemEval-2007: "
        f"{every[wsd['variant']]:.2f} (first sense {every['mfs_f1']:.2f})."
    )
    assert "| SemEval-2015 | ALL minus SemEval-2007 | ALL |" in text
    instances = every["instances"] - wsd["sets"]["semeval2007"]["instances"]
    assert f"| {instances:,} | {every['instances']:,} |" in text
    assert f"**12.34** | **{every[wsd['variant']]:.2f}** |" in text
    assert "| 43.21 |" in text
