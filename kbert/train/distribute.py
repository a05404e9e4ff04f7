"""Scale-out on TensorFlow's existing engine: `tf.distribute` strategies chosen by name."""

import json
import os

import tensorflow as tf

STRATEGIES = ("default", "mirrored", "multi_worker")


def split_cpu(num_devices):
    """Makes the CPU appear as `num_devices` logical devices (to try MirroredStrategy on CPU).

    Must run before TensorFlow initializes its devices (before the first op).
    """
    if num_devices < 1:
        raise ValueError(f"num_devices must be >= 1; received {num_devices}")
    cpu = tf.config.list_physical_devices("CPU")[0]
    try:
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(num_devices)]
        )
    except RuntimeError as error:
        raise ValueError(
            f"split_cpu() must be called before TensorFlow runs its first op ({error})"
        ) from None


def make_strategy(name="default"):
    """Returns a `tf.distribute.Strategy` by name.

    Args:
        name: str, default "default". "default" (one device), "mirrored" (synchronous data
            parallelism over this machine's GPUs, or its logical CPUs), "multi_worker"
            (MultiWorkerMirroredStrategy over the cluster described by the `TF_CONFIG`
            environment variable).

    Returns:
        A strategy: build and compile the model under `strategy.scope()`; `model.fit` then
        splits each global batch across replicas and all-reduces gradients.

    Example:
    >>> strategy = make_strategy("default")
    >>> with strategy.scope():
    ...     pass  # build and compile here
    """
    if name not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}; received {name!r}")
    if name == "default":
        return tf.distribute.get_strategy()
    if name == "mirrored":
        gpus = tf.config.list_logical_devices("GPU")
        devices = [d.name for d in (gpus or tf.config.list_logical_devices("CPU"))]
        return tf.distribute.MirroredStrategy(devices=devices)
    raw = os.environ.get("TF_CONFIG")
    if not raw:
        raise ValueError(
            "strategy 'multi_worker' needs the TF_CONFIG environment variable "
            '(e.g. {"cluster": {"worker": ["host1:port", "host2:port"]}, '
            '"task": {"type": "worker", "index": 0}})'
        )
    try:
        config = json.loads(raw)
        workers = config["cluster"]["worker"]
        index = config["task"]["index"]
    except (json.JSONDecodeError, KeyError, TypeError) as error:
        raise ValueError(
            f"TF_CONFIG is not a valid cluster description ({error!r}); received {raw[:200]!r}"
        ) from None
    if not 0 <= index < len(workers):
        raise ValueError(f"TF_CONFIG task index {index} is outside the {len(workers)} workers")
    return _MultiWorkerMirroredStrategy()


class _MultiWorkerMirroredStrategy(tf.distribute.MultiWorkerMirroredStrategy):
    """MultiWorkerMirroredStrategy whose `reduce` accepts nested structures.

    Keras 3's `fit` reduces a whole `(x, y)` batch in one call before training (to build the
    model symbolically), and the collective strategy's `reduce` takes one tensor at a time, so
    `fit` fails with dict inputs (keras-team/keras#20329, #20585, open at the time of writing).
    Reducing each tensor on its own is what MirroredStrategy already does. Keras then reduces
    scalar logs (the loss) with `axis=0`, which a scalar does not have; for per-replica scalars
    the mean over replicas is `axis=None`.
    """

    def reduce(self, reduce_op, value, axis):
        parent = super()

        def reduce_one(v):
            local = self.experimental_local_results(v)[0]
            if (
                axis is not None
                and getattr(local, "shape", None) is not None
                and local.shape.rank == 0
            ):
                return parent.reduce(reduce_op, v, None)
            return parent.reduce(reduce_op, v, axis)

        return tf.nest.map_structure(reduce_one, value)
