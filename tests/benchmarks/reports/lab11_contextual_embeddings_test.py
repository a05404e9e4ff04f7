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
