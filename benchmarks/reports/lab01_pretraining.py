"""The records of `labs/lab01_pretraining.py`: their section of docs/results.md and README
headline."""

from benchmarks.reports._common import markdown_table

STEMS = ("lab01_pretraining",)

# What the lab's source claims: stated under the record's title, above what it found.
CLAIM = "J&M ch. 10–11 and the tutorial §2: a transformer pretrained on raw text learns to predict held-out text far better than chance, with a causal (next-token) or a masked (fill-in) objective"


def render(results):
    """Table of `labs/lab01_pretraining.py`: one row per objective."""
    prefixes = {"causal": "clm", "masked": "mlm", "electra": "rtd"}
    measure = {
        "causal": "next-token accuracy",
        "masked": "masked-token accuracy",
        "electra": "replaced/original accuracy",
    }
    rows = []
    for part, r in results.items():
        prefix = prefixes[part]
        perplexity = r.get(f"{prefix}_perplexity")
        # Records before the --layer-norm flag: causal pre-LN, the others post-LN (BERT).
        layer_norm = r.get("layer_norm") or ("pre" if part == "causal" else "post")
        settings = [f"{layer_norm}-LN"]  # the recipe's other settings, where recorded
        if r.get("mask_rate"):
            settings.append(f"{r['mask_rate']:.0%} masked")
        if "dropout" in r:
            settings.append(f"dropout {r['dropout']:g}")
        settings += [r[key] for key in ("schedule", "dtype") if key in r]
        rows.append(
            [
                f"{part} ({', '.join(settings)})",
                f"{r['parameters'] / 1e6:.1f}M",
                f"{r['steps']:,}",
                r.get("budget_minutes") or "-",
                f"{r['train_s']:,.0f}",
                f"{r['train_examples_per_s']:.1f}",
                f"{r[f'{prefix}_loss']:.3f}",
                "-" if perplexity is None else f"{perplexity:.1f}",
                f"{r['word_perplexity']:.1f}" if "word_perplexity" in r else "-",
                f"{r[f'{prefix}_accuracy']:.3f} ({measure[part]})",
            ]
        )
    parts = [
        markdown_table(
            [
                "objective",
                "encoder params",
                "steps",
                "budget (min)",
                "train s",
                "train sequences/s",
                "held-out loss",
                "sub-word ppl",
                "word ppl",
                "held-out accuracy",
            ],
            rows,
        )
    ]
    samples = [
        (prompt, text)
        for r in results.values()
        for prompt, strategy, text in r.get("samples", [])
        if strategy == "top_p"
    ]
    if samples:
        parts += [
            "",
            "Nucleus-sampled continuations (p = 0.9, temperature 0.8) of the causal model:",
            "",
        ]
        parts += [f"- *{prompt}* … {text}" for prompt, text in samples]
    return "\n".join(parts)


def headline(results):
    parts = []
    for part, r in results.items():
        if part == "causal":
            parts.append(
                f"causal word perplexity {r['word_perplexity']:.0f}"
                if "word_perplexity" in r
                else f"causal loss {r['clm_loss']:.2f}"
            )
        elif part == "masked":
            parts.append(f"masked-token accuracy {r['mlm_accuracy']:.3f}")
        elif part == "electra":
            parts.append(f"ELECTRA replaced/original accuracy {r['rtd_accuracy']:.3f}")
    budget = next(iter(results.values())).get("budget_minutes")
    return ", ".join(parts) + (f" ({budget:g} min of pretraining each)" if budget else "")
