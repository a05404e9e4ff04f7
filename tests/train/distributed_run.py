"""A few training steps of a tiny encoder under a strategy; writes losses and weights.

Run as a script (a fresh process per strategy, since device setup must come first):
    python tests/train/distributed_run.py --strategy mirrored --cpu-devices 2 --out run.npz
"""

import argparse
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--strategy", default="default")
    parser.add_argument("--cpu-devices", type=int, default=1)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--global-batch", type=int, default=8)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    from kbert.train.distribute import make_strategy, split_cpu

    if args.cpu_devices > 1:
        split_cpu(args.cpu_devices)
    import keras
    import numpy as np
    import tensorflow as tf

    from kbert.models import Encoder

    strategy = make_strategy(args.strategy)
    rng = np.random.default_rng(0)
    n = args.steps * args.global_batch
    ids = rng.integers(5, 50, (n, 8)).astype("int32")
    x = {"token_ids": ids, "segment_ids": np.zeros_like(ids), "padding_mask": np.ones_like(ids)}
    y = rng.integers(0, 3, n).astype("int32")
    options = tf.data.Options()
    # Every worker reads the same stream and takes its part of each global batch.
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(args.global_batch)
    dataset = dataset.with_options(options)

    keras.utils.set_random_seed(0)  # identical initial weights in every process
    with strategy.scope():
        encoder = Encoder.from_preset("tiny", dropout=0.0, attention_dropout=0.0)
        logits = keras.layers.Dense(3)(encoder.output["pooled_output"])
        model = keras.Model(encoder.inputs, logits)
        model.compile(
            optimizer=keras.optimizers.SGD(0.5),
            loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        )
    losses = []

    class RecordLoss(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            losses.append(float(logs["loss"]))  # running mean over the epoch so far

    model.fit(dataset, epochs=1, verbose=0, callbacks=[RecordLoss()])
    weights = {
        f"w{i}": keras.ops.convert_to_numpy(w) for i, w in enumerate(model.trainable_weights)
    }
    replicas = strategy.num_replicas_in_sync
    np.savez(args.out, losses=np.array(losses), replicas=replicas, **weights)


if __name__ == "__main__":
    main()
