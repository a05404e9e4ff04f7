"""Lab 15: parameter-efficient fine-tuning: LoRA, prefix tuning and prompt tuning on TREC-6.

Reproduces the textbook's §20.14 comparison of ways to adapt a frozen pretrained encoder by
training a few new weights beside it — each a wrapper around a block's sublayer, not a flag
inside the block:

- LoRA (Hu et al. 2021): the query and value projections W get a trainable low-rank update
  (α/r)·A·B (rank 8, α 16); B starts at zero, so training starts from the pretrained model,
  and after training the update merges into W for export at no inference cost;
- prefix tuning (Li & Liang 2021): 10 trainable key/value vectors prepended in every layer's
  attention;
- prompt tuning (Lester et al. 2021): 20 trainable input embeddings in front of the text.

Compared with full fine-tuning (the head trains in every row). The lab ends by merging a
trained LoRA model and checking the merged model computes the same logits.

What it should show: LoRA near full fine-tuning on MiniLM-L6 with well under 1% of the weights
training; prefix and prompt tuning lower at this size and budget (Lester et al. found prompt
tuning matches fine-tuning only for models of billions of parameters).

    python labs/lab15_peft.py
    python labs/lab15_peft.py --starts minilm_l6 --seeds 3
"""

from kbert.startup import quiet_tensorflow  # noqa: E402

quiet_tensorflow()

import numpy as np  # noqa: E402

from kbert.cli.adaptation_lab import comparison_main  # noqa: E402
from kbert.data.classification_dataset import classification_dataset  # noqa: E402
from kbert.models import SequenceClassifier, add_lora, merge_lora  # noqa: E402
from kbert.train import fine_tune_classifier  # noqa: E402

# %% The comparison.
VARIANTS = [
    ("full", "full", {}),
    ("lora", "lora", {"rank": 8, "alpha": 16}),
    ("prefix_tuning", "prefix_tuning", {"prefix_length": 10}),
    ("prompt_tuning", "prompt_tuning", {"prompt_tokens": 20}),
]


# %% LoRA merged into the kernels: the same model with no adapter cost.
def merged_lora_matches(start, data, args):
    encoder, preprocessor = start.load()
    add_lora(encoder, rank=8, alpha=16)
    classifier = SequenceClassifier(encoder, len(data["train"].label_names), pooling=start.pooling)
    fine_tune_classifier(
        classifier, preprocessor, data["train"], epochs=1, learning_rate=1e-3, verbose=0
    )
    test = classification_dataset(preprocessor, data["test"].texts, batch_size=64)
    before = classifier.predict(test, verbose=0)
    with_lora = classifier.count_params()
    merge_lora(encoder)
    classifier.compile()  # rebuild predict's graph on the merged layers
    after = classifier.predict(test, verbose=0)
    return {
        "start": start.name,
        "params_with_lora": with_lora,
        "params_merged": classifier.count_params(),
        "max_abs_logit_diff": float(np.max(np.abs(after - before))),
        "same_predictions": float(np.mean(after.argmax(-1) == before.argmax(-1))),
    }


def print_merged(starts, data, args):
    for start in starts:
        merged = merged_lora_matches(start, data, args)
        print(
            f"{merged['start']}: LoRA merged into W: {merged['params_with_lora']:,} → "
            f"{merged['params_merged']:,} parameters, max |Δ logit| "
            f"{merged['max_abs_logit_diff']:.2e}, same prediction on "
            f"{100 * merged['same_predictions']:.1f}% of the test set"
        )


def main():
    comparison_main(__doc__, VARIANTS, "runs/lab15_peft", after=print_merged)


if __name__ == "__main__":
    main()
