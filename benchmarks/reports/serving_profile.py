"""The records of `benchmarks/serving_profile.py`: TF Serving kernels, exports and thread
settings, and where one serving call's time goes."""

from benchmarks.reports._common import markdown_table

STEMS = ("serving_profile",)

KERNELS = {"on": "oneDNN", "off": "TensorFlow's own (Eigen)"}
EXPORTS = {"plain": "plain", "xla": "XLA for small batches"}


def _threads(row):
    return (
        "default"
        if not (row["intra_op"] or row["inter_op"])
        else (f"{row['intra_op']} : {row['inter_op']}")
    )


def _setting(row):
    """A row's kernels, export and threads, in words."""
    return (
        f"{KERNELS[row['onednn']]}, {EXPORTS[row['export']]}"
        f"{' (' + str(row['xla_rows']) + ' rows)' if row['export'] == 'xla' else ''}, "
        f"threads {_threads(row)}"
    )


def render(results):
    """Two tables: speed per (kernels, export, thread setting) and dataset; op ms per call by
    kind per kernels, dataset and batch size, beside the wall ms."""
    datasets = list(results["threads"][0]["datasets"])
    batch = results["batch_size"]
    rows = [
        [
            KERNELS[row["onednn"]],
            EXPORTS[row["export"]],
            _threads(row),
            *(
                f"{row['datasets'][name]['batch1_p50_ms']:.2f} / "
                f"{row['datasets'][name]['batch1_p95_ms']:.2f} ms · "
                f"{row['datasets'][name]['batch_sentences_per_s']:,.1f}"
                for name in datasets
            ),
        ]
        for row in results["threads"]
    ]
    parts = [
        f"MiniLM-L6 `classify` export (padding to the batch's longest, float32) in the session "
        f"loader TF Serving uses, {results['cpu_count']} CPUs. Kernels: oneDNN (TensorFlow's "
        "x86 wheels on AVX-512 CPUs, Intel's TF Serving builds) or TensorFlow's own "
        "(`TF_ENABLE_ONEDNN_OPTS=0`; TF Serving's default builds). Exports: plain, or batches "
        f"of up to {results['xla_rows']} rows through XLA (`--xla-rows`). Per thread setting "
        "(`--tensorflow_intra_op_parallelism` : `--tensorflow_inter_op_parallelism`; default = "
        f"TensorFlow's): batch-1 p50 / p95 latency · sentences/s at batch {batch}, medians of "
        f"{results['passes']} passes.",
        "",
        markdown_table(["kernels", "export", "threads", *datasets], rows),
    ]
    parts += _sweep(results)
    for setting, profile in results["profile"].items():
        for name, sizes in profile.items():
            kinds = list(dict.fromkeys(kind for entry in sizes.values() for kind in entry["kinds"]))
            table = [["call (wall)"] + [f"{entry['call_ms']:,.2f}" for entry in sizes.values()]]
            table += [
                [kind]
                + [
                    f"{entry['kinds'].get(kind, 0.0):,.2f} "
                    f"({entry['kinds'].get(kind, 0.0) / entry['op_ms']:.0%})"
                    for entry in sizes.values()
                ]
                for kind in kinds
            ]
            parts += [
                "",
                f"**{name}, {KERNELS[setting]} kernels, plain export**: ms per call, traced over "
                f"{results['trace_calls']} calls (op time summed over threads; its share in "
                "brackets)",
                "",
                markdown_table(["", *(f"batch {size}" for size in sizes)], table),
            ]
    return "\n".join(parts)


def xla_ahead(sweep):
    """The batch sizes of a sweep at which the XLA export served more sentences/s than the plain
    one, ascending."""
    return [int(size) for size, speeds in sweep["sizes"].items() if speeds["xla"] > speeds["plain"]]


def _sweep(results):
    """Per kernels, sentences/s by batch size for the plain export and the one sending every
    size through XLA."""
    parts = []
    for setting, sweep in results.get("sweep", {}).items():
        rows = [
            [
                size,
                f"{speeds['plain']:,.1f}",
                f"{speeds['xla']:,.1f}",
                f"{speeds['xla'] / speeds['plain']:.2f}×",
            ]
            for size, speeds in sweep["sizes"].items()
        ]
        ahead = ", ".join(str(size) for size in xla_ahead(sweep)) or "none"
        parts += [
            "",
            f"**Batch-size sweep, {KERNELS[setting]} kernels** ({sweep['dataset']}, default "
            f"threads, sentences/s, medians of {results['passes']} passes after an untimed "
            f"pass): XLA ahead at batch sizes {ahead} (`--xla-rows` is {results['xla_rows']}).",
            "",
            markdown_table(["batch", "plain", "XLA", "XLA / plain"], rows),
        ]
    return parts


def headline(results):
    """Batch-1 wall time per kernels (plain export, default threads), and the setting with the
    lowest batch-1 latency summed over the datasets."""
    cells = []
    for setting, profile in results["profile"].items():
        times = ", ".join(
            f"{name} {sizes['1']['call_ms']:.2f} ms" for name, sizes in profile.items()
        )
        cells.append(f"{KERNELS[setting]} {times}")
    fastest = min(
        results["threads"],
        key=lambda row: sum(entry["batch1_p50_ms"] for entry in row["datasets"].values()),
    )
    return (
        f"one serving call at batch 1: {'; '.join(cells)}; lowest batch-1 latency: "
        f"{_setting({**fastest, 'xla_rows': results['xla_rows']})}"
    )
