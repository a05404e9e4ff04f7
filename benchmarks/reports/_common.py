"""What every record family's rendering shares: Markdown tables, a record's provenance line,
two rows' runs paired by seed."""

from kbert.metrics.seed_comparison import paired_difference

# A row whose test mean is within this of the majority class gets a note: what other records
# measured of it, or that nothing explains the row yet.
NEAR_MAJORITY = 0.1
UNEXPLAINED = "no measured explanation is recorded"


def paired_by_seed(values, baseline):
    """`(paired_difference(values − baseline), seeds)` over the seeds both `{seed: value}` dicts
    hold, in seed order; `(None, [])` where they share none."""
    seeds = sorted(set(values) & set(baseline))
    if not seeds:
        return None, []
    return paired_difference([values[s] for s in seeds], [baseline[s] for s in seeds]), seeds


def chosen_rate(label, choice, cell):
    """ "label 0.0003 of 0.0001 (…), 0.0003 (…)": the peak rate a lab chose on validation
    (`kbert.train.rate_on_validation`'s `choice`) and each rate its first seed tried, `cell(row)`
    giving that rate's scores; "label 0.0003" where one rate was given (no choice)."""
    tried = ", ".join(f"{row['learning_rate']:g} ({cell(row)})" for row in choice["tried"])
    return f"{label} {choice['chosen']:g}" + (f" of {tried}" if tried else "")


def chosen_rates(choices, names, cell):
    """`chosen_rate` for each of `choices` (name → a rate choice), "; "-joined, each labelled
    `names[name]` (a dict, or a callable)."""
    label = names if callable(names) else names.__getitem__
    return "; ".join(chosen_rate(label(name), choice, cell) for name, choice in choices.items())


def markdown_table(header, rows):
    """A Markdown table: `header` (cell texts) over `rows` (lists of cells, formatted by `str`)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def provenance(record):
    """The line under a section's title: the record's command, commit, date, time and machine."""
    machine = record["machine"]
    dirty = " (with uncommitted changes)" if record.get("dirty") else ""
    return (
        f"Command: `{record['command']}`; commit `{(record['commit'] or 'unknown')[:10]}`"
        f"{dirty}; {record['date']}; wall time {record['wall_seconds']:,.0f} s; "
        f"{machine['cpu']}, {machine['cores']} cores, {machine['memory_gib']} GiB."
    )


def torch_peer_section(comparison, peer_facts, model):
    """The PyTorch peer's table for a speed record (`benchmarks/torch_peer.py` wrote it).

    Args:
        comparison: dict, dtype → the peer's tokens/s and MFU, kbert's best, ratio, goal_met;
            None where the record has no peer side.
        peer_facts: dict, the record's `torch_peer` (versions and threads, or `skipped`); None
            in records made before the peer existed.
        model: str, what the peer runs, for the caption.
    """
    if not peer_facts:
        return []
    if "skipped" in peer_facts or comparison is None:
        return ["", f"PyTorch peer skipped: {peer_facts.get('skipped', 'no peer side')}."]
    versions, threads = peer_facts["versions"], peer_facts["threads"]
    rows = [
        [
            dtype,
            f"{peer['torch_tokens_per_s']:,.0f}",
            f"{peer['torch_mfu']:.1%}",
            f"{peer['kbert_tokens_per_s']:,.0f}",
            f"{peer['ratio']:.2f}",
            "yes" if peer["goal_met"] else "no",
        ]
        for dtype, peer in comparison.items()
    ]
    return [
        "",
        f"PyTorch peer: {model}, torch {versions['torch']}, transformers "
        f"{versions['transformers']}, {threads['torch_intra_op']} intra-op threads (as "
        "TensorFlow) in a process of its own; bfloat16 under torch.autocast; MFU against the "
        "same measured peak. Goal: "
        f"kbert's best configuration of each dtype at least {peer_facts['goal_ratio']}x PyTorch.",
        "",
        markdown_table(
            ["dtype", "PyTorch tok/s", "PyTorch MFU", "kbert tok/s", "kbert/PyTorch", "goal met"],
            rows,
        ),
    ]


def bfloat16_speedup(speeds, peaks):
    """A sentence: each side's bfloat16 / float32 training speed beside the ratio of the two
    matmul peaks measured in the same run, which is what bfloat16 gains where both dtypes run at
    the same share of their peak (issue #37 asks bfloat16 to pay: a goal above the peaks' ratio
    is reached only by a float32 path that is slow to begin with).

    Args:
        speeds: dict side name -> (float32 tokens/s, bfloat16 tokens/s), either None where the
            record lacks it (the side is then left out).
        peaks: dict with "float32" and "mixed_bfloat16" GFLOP/s.

    Returns:
        str, or "" when no side has both speeds.
    """
    ratios = {
        side: bfloat16 / float32
        for side, (float32, bfloat16) in speeds.items()
        if float32 and bfloat16
    }
    if not ratios:
        return ""
    ceiling = peaks["mixed_bfloat16"] / peaks["float32"]
    sides = ", ".join(f"{side} {ratio:.2f}×" for side, ratio in ratios.items())
    first = next(iter(ratios))
    return (
        f"bfloat16 / float32 tokens/s: {sides}; the matmul peaks' ratio in the same run (the "
        f"gain at equal shares of each peak): {ceiling:.2f}× ({first} reaches "
        f"{ratios[first] / ceiling:.0%} of it)."
    )
