"""Lab 5: discriminative learning rates, slanted triangular schedules, and staying close to home.

Reproduces hands-on #5 of the NAACL 2019 tutorial "Transfer Learning in NLP" (§4.2.B) and the
textbook's layer-wise learning-rate decay: lower layers hold general features and should move
less, so layer group l trains at lr_l = lr_top / 2.6^(L − l) (ULMFiT) — or lr_top · ξ^(L − l)
with a decay ξ per layer (the textbook; ξ = 1/2.6 is the same thing) — each on ULMFiT's slanted
triangular schedule (a short linear rise over 10% of the steps, a long linear fall to 1/32 of
the peak). `kbert.train.DiscriminativeOptimizer` gives every group its own AdamW. The groups
above the last block (final LayerNorm, pooler, head) share the top rate, as ULMFiT's classifier
layer does. ULMFiT's 2.6 was chosen for a 3-layer LSTM; for BERT-style encoders the usual
layer-wise decay is ξ ≈ 0.9 per block (a second row).

Two regularisers pull the weights toward the pretrained point instead: L2-SP (Li et al. 2018),
λ/2 · ||w − w₀||², and EWC (Kirkpatrick et al. 2017), λ/2 · Σ F_i (w_i − w₀,i)², whose diagonal
Fisher F is estimated on the pretraining objective (here lab01's causal LM on the task's text;
MiniLM-L6 ships no pretraining head, so it has no EWC row).

What it should show: the table of per-group rates and the schedule; on TREC-6, whether these
help over plain full fine-tuning with warmup + linear decay. Report what you see: with a few
thousand examples and 3 epochs the differences may be within the seed spread.

    python labs/lab05_discriminative_lr.py
    python labs/lab05_discriminative_lr.py --starts minilm_l6 --factor 2.6 --seeds 3
"""

from kbert.startup import quiet_tensorflow  # noqa: E402

quiet_tensorflow()

from kbert.cli.adaptation_lab import comparison_main  # noqa: E402
from kbert.models import SequenceClassifier  # noqa: E402
from kbert.train import layerwise_learning_rates, slanted_triangular  # noqa: E402
from kbert.train.adaptation_recipes import DEFAULT_LEARNING_RATES, depth_groups  # noqa: E402


# %% The comparison: how fast each layer moves, and how far from the pretrained weights.
def variants(args):
    return [
        ("full", "full", {}),
        ("discriminative_lr", "discriminative_lr", {"factor": args.factor}),
        ("layerwise_decay", "discriminative_lr", {"decay": args.decay}),
        ("l2_sp", "l2_sp", {"strength": args.strength}),
        ("ewc", "ewc", {"strength": args.strength}),
    ]


# %% The per-group peak rates and the slanted triangular schedule.
def describe_rates(start, data, args):
    encoder, _ = start.load()
    classifier = SequenceClassifier(encoder, len(data["train"].label_names), pooling=start.pooling)
    top = DEFAULT_LEARNING_RATES["discriminative_lr"]
    depths = depth_groups(classifier)
    order = list(dict.fromkeys(depths.values()))
    by_factor = layerwise_learning_rates(order, top, factor=args.factor)
    by_decay = layerwise_learning_rates(order, top, decay=args.decay)
    lines = [
        f"{start.name}: peak learning rate per layer group: lr_top {top:g} / "
        f"{args.factor}^(L − l) | lr_top · {args.decay}^(L − l)"
    ]
    lines += [
        f"  {name:>12}: {by_factor[depth]:.3g} | {by_decay[depth]:.3g}"
        for name, depth in depths.items()
    ]
    steps = 100
    curve = [float(slanted_triangular(step, 1.0, steps)) for step in (0, 5, 10, 25, 50, 75, 99)]
    lines.append(
        "  slanted triangular, share of the peak at 0/5/10/25/50/75/99% of the run: "
        + " ".join(f"{value:.3f}" for value in curve)
    )
    return "\n".join(lines)


def add_arguments(parser):
    parser.add_argument("--factor", type=float, default=2.6, help="lr ratio between groups")
    parser.add_argument("--decay", type=float, default=0.9, help="the textbook's ξ per layer")
    parser.add_argument("--strength", type=float, default=0.01, help="L2-SP and EWC λ")


def main():
    comparison_main(
        __doc__,
        variants,
        "runs/lab05_discriminative_lr",
        before=describe_rates,
        add_arguments=add_arguments,
    )


if __name__ == "__main__":
    main()
