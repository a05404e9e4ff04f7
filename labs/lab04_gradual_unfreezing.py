"""Lab 4: gradual unfreezing and chain-thaw — when each layer starts to train.

Reproduces hands-on #4 of the NAACL 2019 tutorial "Transfer Learning in NLP" (§4.2.B, "how and
when to update"): ULMFiT's gradual unfreezing (Howard & Ruder 2018) trains the head first and
unfreezes one more layer group from the top every k steps, so the randomly initialised head
does not send large gradients through pretrained layers it would damage; DeepMoji's chain-thaw
(Felbo et al. 2017) trains the head alone, then each group alone, then everything. Compared on
TREC-6 with full fine-tuning from the start and with freezing all but the top 2 blocks.

Both are Keras callbacks (`kbert.train.GradualUnfreezing`, `ChainThaw`) acting on the layer
groups the encoder names (embeddings, block_0 … block_N, pooler, head). Here the stages are
spaced so every group trains for at least the second half of the run (ULMFiT unfreezes one per
epoch; with 3 epochs, one every k steps); the pooler is left out when the head reads [CLS] or
the last token directly (alone, it would get no gradient). The lab prints the schedule it used.

What it should show: on a well-pretrained model with a short run gradual unfreezing is close to
full fine-tuning (its benefit in ULMFiT was stability on small data with an LSTM); freezing all
but the top blocks is cheaper and loses a little.

    python labs/lab04_gradual_unfreezing.py
    python labs/lab04_gradual_unfreezing.py --starts minilm_l6 --seeds 3
"""

from kbert.startup import quiet_tensorflow  # noqa: E402

quiet_tensorflow()

from kbert.cli.adaptation_lab import comparison_main  # noqa: E402
from kbert.models import SequenceClassifier  # noqa: E402
from kbert.train import ChainThaw, GradualUnfreezing, layer_groups  # noqa: E402
from kbert.train.adaptation_recipes import schedule_groups, schedule_spacing  # noqa: E402

# %% The comparison: when each layer group starts to train.
VARIANTS = [
    ("full", "full", {}),
    ("top_2", "top_2", {}),
    ("gradual_unfreezing", "gradual_unfreezing", {}),
    ("chain_thaw", "chain_thaw", {}),
]


# %% The schedules, as the callbacks will run them.
def describe_schedules(start, data, args):
    encoder, preprocessor = start.load()
    classifier = SequenceClassifier(encoder, len(data["train"].label_names), pooling=start.pooling)
    lines = [f"{start.name}: layer groups bottom to top: {list(layer_groups(classifier))}"]
    for callback_class in (GradualUnfreezing, ChainThaw):
        groups = schedule_groups(classifier, callback_class, start.pooling)
        stages = len(groups) + (callback_class is ChainThaw)
        steps, every = schedule_spacing(
            preprocessor, data["train"], args.batch_size, args.epochs, stages
        )
        for start_step, trainable in callback_class(groups, every=every).plan(classifier):
            lines.append(
                f"  {callback_class.__name__} from step {start_step:>4} of {steps}: "
                f"trains {trainable}"
            )
    return "\n".join(lines)


def main():
    comparison_main(__doc__, VARIANTS, "runs/lab04_gradual_unfreezing", before=describe_schedules)


if __name__ == "__main__":
    main()
