"""Lab 3: adapters — train a few small modules inside a frozen pretrained transformer.

Reproduces hands-on #3 of the NAACL 2019 tutorial "Transfer Learning in NLP" (adapters with
freezing) after Houlsby et al. 2019: a bottleneck Dense → GELU → Dense with a skip connection,
inserted after the attention and the feed-forward sublayer of every block and initialised near
the identity; only the adapters, the LayerNorms and the head train. Compared on TREC-6 with full
fine-tuning, feature extraction (frozen encoder, linear head) and Pfeiffer et al.'s placement
(after the feed-forward only).

Then the point of adapters: the task lives in a small file apart from the base. The lab trains
TREC-6 adapters (and head; the LayerNorms stay the base's, so nothing else changes), saves only
them, loads them into a fresh copy of the base and checks the logits match, then trains a
second task's adapters (SST-2) on the same base and switches back to TREC-6's.

What it should show: adapters (bottleneck 32) train a few % of the weights (the tutorial: ~25%
of its small model, which has large LayerNorm and head shares) and land near full fine-tuning
on MiniLM-L6 (Houlsby: within 0.4% on GLUE at 3.6%), clearly above feature extraction; the
adapter file is a small fraction of the model's.

    python labs/lab03_adapters.py                          # lab01's model and MiniLM-L6
    python labs/lab03_adapters.py --starts minilm_l6 --seeds 3
"""

import tempfile
from pathlib import Path

from kbert.startup import quiet_tensorflow  # noqa: E402

quiet_tensorflow()

import numpy as np  # noqa: E402

from kbert.cli.adaptation_lab import comparison_main  # noqa: E402
from kbert.data import load_classification_task  # noqa: E402
from kbert.data.classification_dataset import classification_dataset  # noqa: E402
from kbert.models import (  # noqa: E402
    SequenceClassifier,
    adapter_trainable_setup,
    add_adapters,
    load_adapters,
    save_adapters,
    set_active_adapter,
)
from kbert.train import fine_tune_classifier  # noqa: E402


# %% The comparison: which weights train.
def variants(args):
    return [
        ("full", "full", {}),
        ("feature_extraction", "feature_extraction", {}),
        ("adapters", "adapters", {"bottleneck_dim": args.bottleneck_dim, "placement": "houlsby"}),
        (
            "adapters_pfeiffer",
            "adapters",
            {"bottleneck_dim": args.bottleneck_dim, "placement": "pfeiffer"},
        ),
    ]


# %% Adapters apart from the base: save, reload into a fresh base, a second task beside.
def adapters_apart_from_the_base(start, data, args):
    encoder, preprocessor = start.load()
    add_adapters(encoder, bottleneck_dim=args.bottleneck_dim, name="trec")
    classifier = SequenceClassifier(encoder, len(data["train"].label_names), pooling=start.pooling)
    # The LayerNorms are the base's: a task that should live in its adapter file (and share
    # the base with other tasks) trains only its adapters and its head.
    adapter_trainable_setup(classifier, train_layer_norms=False)
    fine_tune_classifier(
        classifier,
        preprocessor,
        data["train"],
        epochs=1,
        learning_rate=1e-3,
        seed=args.seeds - 1,
        verbose=0,
    )
    test = classification_dataset(preprocessor, data["test"].texts, batch_size=64)
    logits = classifier.predict(test, verbose=0)

    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "trec_adapters.npz"
        save_adapters(encoder, path, "trec")
        adapter_bytes = path.stat().st_size
        fresh, _ = start.load()
        add_adapters(fresh, bottleneck_dim=args.bottleneck_dim, name="trec")
        load_adapters(fresh, path, "trec")
    # The head is the task's too: copy it (it is as small as the adapters).
    reloaded = SequenceClassifier(fresh, len(data["train"].label_names), pooling=start.pooling)
    for mine, theirs in zip(reloaded.head_layers(), classifier.head_layers(), strict=True):
        mine.set_weights(theirs.get_weights())
    reloaded_logits = reloaded.predict(test, verbose=0)

    # A second task on the same base: SST-2 adapters, switched by name.
    sst2 = load_classification_task("sst2", "train", data_dir=args.data_dir, max_examples=512)
    add_adapters(fresh, bottleneck_dim=args.bottleneck_dim, name="sst2")
    sentiment = SequenceClassifier(fresh, 2, pooling=start.pooling)
    adapter_trainable_setup(sentiment, train_layer_norms=False)
    fine_tune_classifier(sentiment, preprocessor, sst2, epochs=1, learning_rate=1e-3, verbose=0)
    set_active_adapter(fresh, "trec")
    reloaded.compile()  # rebuild predict's graph for the switched adapter set
    after_switch = reloaded.predict(test, verbose=0)
    base_bytes = sum(int(np.prod(v.shape)) * 4 for v in encoder.weights)
    return {
        "start": start.name,
        "adapter_file_kb": round(adapter_bytes / 1024, 1),
        "base_model_mb": round(base_bytes / 2**20, 1),
        "max_abs_logit_diff_reloaded": float(np.max(np.abs(reloaded_logits - logits))),
        "max_abs_logit_diff_after_second_task": float(np.max(np.abs(after_switch - logits))),
    }


def print_demo(starts, data, args):
    for start in starts:
        demo = adapters_apart_from_the_base(start, data, args)
        print(
            f"{demo['start']}: TREC-6 adapters file {demo['adapter_file_kb']} KB vs base "
            f"{demo['base_model_mb']} MB; reloaded into a fresh base, max |Δ logit| "
            f"{demo['max_abs_logit_diff_reloaded']:.2e}; after adding and training SST-2 "
            f"adapters and switching back, {demo['max_abs_logit_diff_after_second_task']:.2e}"
        )


def main():
    comparison_main(
        __doc__,
        variants,
        "runs/lab03_adapters",
        after=print_demo,
        add_arguments=lambda parser: parser.add_argument(
            "--bottleneck-dim", type=int, default=32, help="the tutorial's 32"
        ),
    )


if __name__ == "__main__":
    main()
