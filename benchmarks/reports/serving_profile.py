"""The records of `benchmarks/serving_profile.py`: TF Serving thread settings and where one
serving call's time goes."""

from benchmarks.reports._common import markdown_table

STEMS = ("serving_profile",)


def _threads(row):
    return (
        "default"
        if not (row["intra_op"] or row["inter_op"])
        else (f"{row['intra_op']} : {row['inter_op']}")
    )


def render(results):
    """Two tables: speed per thread setting (intra-op : inter-op, the session TF Serving builds)
    and dataset; op ms per call by kind per dataset and batch size, beside the wall ms."""
    datasets = list(results["profile"]) or list(results["threads"][0]["datasets"])
    batch = results["batch_size"]
    rows = [
        [_threads(row)]
        + [
            f"{row['datasets'][name]['batch1_p50_ms']:.2f} / "
            f"{row['datasets'][name]['batch1_p95_ms']:.2f} ms · "
            f"{row['datasets'][name]['batch_sentences_per_s']:,.1f}"
            for name in datasets
        ]
        for row in results["threads"]
    ]
    parts = [
        f"MiniLM-L6 `classify` export (padding to the batch's longest, float32) in the session "
        f"loader TF Serving uses, {results['cpu_count']} CPUs. Per thread setting "
        f"(`--tensorflow_intra_op_parallelism` : `--tensorflow_inter_op_parallelism`; default = "
        f"TensorFlow's): batch-1 p50 / p95 latency · sentences/s at batch {batch}, medians of "
        f"{results['passes']} passes.",
        "",
        markdown_table(["threads", *datasets], rows),
    ]
    for name, sizes in results["profile"].items():
        kinds = list(dict.fromkeys(kind for entry in sizes.values() for kind in entry["kinds"]))
        table = [["call (wall)"] + [f"{entry['call_ms']:,.2f}" for entry in sizes.values()]]
        table += [
            [kind]
            + [
                f"{entry['kinds'].get(kind, 0.0):,.2f} ({entry['kinds'].get(kind, 0.0) / entry['op_ms']:.0%})"
                for entry in sizes.values()
            ]
            for kind in kinds
        ]
        parts += [
            "",
            f"**{name}**: ms per call, traced over {results['trace_calls']} calls (op time summed "
            "over threads; its share in brackets)",
            "",
            markdown_table(["", *(f"batch {size}" for size in sizes)], table),
        ]
    return "\n".join(parts)


def headline(results):
    cells = []
    for name, sizes in results["profile"].items():
        one = sizes["1"]
        share = one["kinds"].get("tokenizer", 0.0) / one["op_ms"]
        cells.append(f"{name} {one['call_ms']:.2f} ms at batch 1, tokenizer {share:.0%} of op time")
    fastest = min(
        results["threads"],
        key=lambda row: sum(entry["batch1_p50_ms"] for entry in row["datasets"].values()),
    )
    return (
        f"one serving call: {', '.join(cells)}; lowest batch-1 latency at threads "
        f"{_threads(fastest)}"
    )
