"""Every adaptation method on TREC-6, from lab01's tutorial-style model and from MiniLM-L6.

The NAACL 2019 tutorial compares ways to adapt a pretrained transformer on TREC-6 (hands-on
#2–#6): full fine-tuning, adapters (~25% of its small model trainable, "similar to full
fine-tuning"), gradual unfreezing, discriminative learning rates, and multitask training with
an auxiliary LM loss ("improving over single-task"); the textbook adds LoRA, prefix and prompt
tuning and distillation; Houlsby et al. report GLUE within 0.4% of full fine-tuning at 3.6% of
the parameters (their paper's figures: not-measured). This runs every method of labs 3–6,
lab16_peft and lab17_distillation (`kbert.train.adaptation_recipes`) with 3 seeds from both
starting points, and prints one table: method, trainable parameters (count and %), TREC-6
test accuracy (TREC_10, 500 questions) as mean ± sd over seeds, and training seconds per run.

Defaults (the record's wall time: docs/results.md#adaptation): 1,000 training questions (a seeded slice of
TREC-6 train after holding out 10% for validation), 3 epochs, batch 32, length 64. EWC runs
where the checkpoint's pretraining head can be rebuilt (lab01's causal LM: a tied decoder);
MiniLM-L6 ships no MLM head, so its EWC row is absent. The ensemble row is one ensemble of the
3 seeds' fully fine-tuned models (no sd); the distillation rows report the student's size as a
share of the teacher's under "trainable".

    python benchmarks/adaptation.py                        # everything (resumes if interrupted)
    python benchmarks/adaptation.py --starts minilm_l6 --methods full,adapters,lora --seeds 1

Progress goes to stderr; each run's result is appended to `<run-dir>/results.jsonl` as soon as
it exists (a rerun skips those). Each start's seeds run in child processes of their own
(`--no-process-per-seed` keeps one process): TensorFlow holds about 0.5 GB of every MiniLM-L6
`fit` until its process ends, and 72 runs outgrow this machine's 24 GB. The last line of stdout is JSON mapping each `start/method`
to `trainable_pct`, `acc_mean`, `acc_sd`, `train_s`.
"""

import sys
import time

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

from kbert.train.adaptation_comparison import (
    compare_and_print,
    comparison_parser,
    selected_variants,
    starting_points,
    trec_data,
)

# (label, method, options): every method the labs compare, in the table's order.
VARIANTS = [
    ("full", "full", {}),
    ("feature_extraction", "feature_extraction", {}),
    ("top_2", "top_2", {}),
    ("adapters", "adapters", {"bottleneck_dim": 32, "placement": "houlsby"}),
    ("adapters_pfeiffer", "adapters", {"bottleneck_dim": 32, "placement": "pfeiffer"}),
    ("gradual_unfreezing", "gradual_unfreezing", {}),
    ("chain_thaw", "chain_thaw", {}),
    ("discriminative_lr", "discriminative_lr", {"factor": 2.6}),
    ("layerwise_decay_0.9", "discriminative_lr", {"decay": 0.9}),
    ("l2_sp", "l2_sp", {"strength": 0.01}),
    ("ewc", "ewc", {"strength": 0.01}),
    ("multitask", "multitask", {"language_model_weight": 0.5}),
    ("sequential", "sequential", {"intermediate_task": "sst2"}),
    ("lora", "lora", {"rank": 8, "alpha": 16}),
    ("prefix_tuning", "prefix_tuning", {"prefix_length": 10}),
    ("prompt_tuning", "prompt_tuning", {"prompt_tokens": 20}),
    ("distillation", "distillation", {"temperature": 2.0, "soft_weight": 0.5}),
    ("ensemble", "ensemble", {}),
]


def main():
    start = time.perf_counter()
    parser = comparison_parser(
        __doc__.split("\n\n")[0], seeds=3, run_dir="runs/adaptation", process_per_seed=True
    )
    args = parser.parse_args()
    variants = selected_variants(parser, args, VARIANTS)
    compare_and_print(variants, starting_points(parser, args), trec_data(args), args)
    print(f"{time.perf_counter() - start:.0f} s this call", file=sys.stderr)


if __name__ == "__main__":
    main()
