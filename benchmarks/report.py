"""Regenerates `docs/results.md` from the recorded runs in `docs/results/*.json`.

Each record (written by `kbert.run_records.write_run_record`, e.g. a lab run with `--record`)
holds its numbers, command, commit, date, wall time and machine; this page is made from those
files only, so no published number is copied by hand. A record without its own table renderer
below is listed with its command and its top-level numbers.

    python -m benchmarks.report            # writes docs/results.md
    python -m benchmarks.report --check    # exit 1 when docs/results.md is out of date
"""

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SET_NAMES = {"senseval2": "Senseval-2", "senseval3": "Senseval-3", "semeval2007": "SemEval-2007",
             "semeval2013": "SemEval-2013", "semeval2015": "SemEval-2015", "ALL": "ALL"}


def _table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def _provenance(record):
    machine = record["machine"]
    dirty = " (with uncommitted changes)" if record.get("dirty") else ""
    return (f"Command: `{record['command']}`; commit `{(record['commit'] or 'unknown')[:10]}`"
            f"{dirty}; {record['date']}; wall time {record['wall_seconds']:,.0f} s; "
            f"{machine['cpu']}, {machine['cores']} cores, {machine['memory_gib']} GiB.")


def contextual_embeddings_section(results):
    """Tables of `labs/lab_contextual_embeddings.py`: WSD per variant and set, anisotropy, probes."""
    wsd = results["wsd"]
    sets = list(wsd["sets"])
    variants = [key for key in wsd["sets"]["ALL"]
                if key not in ("instances", "mfs_f1", "corpus_nearest_pct")]
    rows = [["instances"] + [f"{wsd['sets'][name]['instances']:,}" for name in sets]]
    for variant in variants:
        mark = "**" if variant == wsd["variant"] else ""
        rows.append([f"{mark}{variant}{mark}"] + [
            f"{mark}{wsd['sets'][name][variant]:.2f}{mark}" for name in sets])
    rows.append(["MFS (WordNet's first sense)"] + [f"{wsd['sets'][name]['mfs_f1']:.2f}"
                                                   for name in sets])
    rows.append(["instances with a SemCor-seen sense (%)"] + [
        f"{wsd['sets'][name]['corpus_nearest_pct']:.1f}" for name in sets])
    coverage = ", ".join(f"{count:,} {source}" for source, count in wsd["coverage"].items())
    parts = [
        f"**Word sense disambiguation** (F1, the framework's scorer). Sense embeddings from "
        f"{wsd['train_corpus']} ({wsd['train_sentences']:,} sentences, "
        f"{wsd['train_instances']:,} instances, {wsd['sense_embeddings']:,} senses; embedding "
        f"pass {wsd['train_seconds']:,.0f} s); the {wsd['test_lemma_senses']:,} WordNet senses of "
        f"the test lemmas covered as {coverage}; glosses embedded in "
        f"{wsd['gloss_seconds']:,.0f} s. In bold, the variant chosen on {wsd['development_set']} "
        f"(the development set); xW is the weight of the gloss part.",
        "",
        _table(["variant"] + [SET_NAMES.get(name, name) for name in sets], rows),
        "",
        "**Anisotropy per layer** (expected cosine of random words from different sentences, "
        "the share of it carried by the top 3 dimensions, and the word-in-context AUC; raw and "
        "z-scored):",
        "",
        _table(["layer", "E[cos]", "z-scored", "top-3 share", "WiC AUC", "WiC AUC z-scored"],
               [[layer, f"{results['expected_cosine'][layer]:.3f}",
                 f"{results['expected_cosine_z'][layer]:.3f}",
                 f"{results['rogue_share'][layer]:.3f}", f"{results['wic_auc'][layer]:.3f}",
                 f"{results['wic_auc_z'][layer]:.3f}"]
                for layer in range(len(results["expected_cosine"]))]),
        "",
        "**Linear probes** (test accuracy %, per layer, against the random-weight control):",
        "",
    ]
    probes = results["probes"]
    layers = len(probes["pos_pretrained"])
    probe_rows = [[f"{task.upper()} {kind}"] + [f"{value:.2f}" for value in probes[f"{task}_{kind}"]]
                  + [f"{probes[f'{task}_majority']:.2f}"]
                  for task in ("pos", "ner") for kind in ("pretrained", "random")]
    parts.append(_table(["probe"] + [f"L{i}" for i in range(layers)] + ["majority"], probe_rows))
    return "\n".join(parts)


RENDERERS = {"lab_contextual_embeddings": contextual_embeddings_section}


def _generic_section(results):
    numbers = {key: value for key, value in results.items()
               if isinstance(value, (int, float, str)) and not isinstance(value, bool)}
    return _table(["result", "value"], sorted(numbers.items())) if numbers else "(no numbers)"


def render(results_dir):
    """Returns the Markdown page for every record in `results_dir`, sorted by name."""
    records = sorted(Path(results_dir).glob("*.json"))
    parts = ["# Results", "",
             "Generated by `python -m benchmarks.report` from the recorded runs in "
             "`docs/results/`; do not edit by hand. Each section names the command, commit, "
             "date, wall time and machine of its run.", ""]
    for path in records:
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            results = record["results"]
            provenance = _provenance(record)
        except (ValueError, KeyError, TypeError) as error:
            raise ValueError(f"{path}: expected a run record written by "
                             f"kbert.run_records.write_run_record; {error}") from None
        name = path.stem
        parts += [f"## {name}", "", provenance, "",
                  RENDERERS.get(name, _generic_section)(results), ""]
    return "\n".join(parts)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results-dir", default=str(ROOT / "docs" / "results"))
    parser.add_argument("--output", default=str(ROOT / "docs" / "results.md"))
    parser.add_argument("--check", action="store_true",
                        help="do not write; exit 1 when the page differs from the records")
    args = parser.parse_args(argv)
    page = render(args.results_dir)
    output = Path(args.output)
    if args.check:
        current = output.read_text(encoding="utf-8") if output.is_file() else None
        if current != page:
            print(f"{output} is out of date: run `python -m benchmarks.report`", file=sys.stderr)
            return 1
        print(f"{output} matches the records")
        return 0
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(page, encoding="utf-8")
    print(f"wrote {output} from {len(list(Path(args.results_dir).glob('*.json')))} record(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
