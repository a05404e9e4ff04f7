"""Which dtype policy trains fastest here: mixed bfloat16 only where it is measured faster.

Mixed bfloat16 halves the bytes a matmul moves, but only hardware with bfloat16 arithmetic gains
from it: CPUs with AVX-512 BF16 or AMX, and GPUs of compute capability 8.0 or later. An AVX2-only
CPU emulates it and trains slower than in float32, so there `auto` means float32 without a
measurement. A CPU that has the instructions still gains only if its matmuls are a large enough
part of a step (the casts, the float32 softmax and the optimizer do not speed up), so `auto` times
a short training step of a small transformer in both policies once per machine
(`measure_training_speed`, about ten seconds; `measure_inference_speed` for an export) and keeps bfloat16 only when it is at least
`MIN_SPEEDUP` times faster. The measurement is cached in `$KBERT_CACHE_DIR/precision.json`
(default `~/.cache/kbert`), keyed by the CPU model, its flags, the thread count and the
TensorFlow version.
"""

import json
import os
import time
import warnings
from pathlib import Path

from kbert.run_records import cpu_description

DTYPES = ("auto", "float32", "mixed_bfloat16")
BF16_CPU_FLAGS = ("avx512_bf16", "amx_bf16")
# bfloat16 must beat float32 by this much in the probe: the probe's own noise is a few percent.
MIN_SPEEDUP = 1.05


def cpu_has_bfloat16(cpuinfo="/proc/cpuinfo"):
    """Whether the CPU computes bfloat16 natively (a flag of `BF16_CPU_FLAGS` in `cpuinfo`)."""
    return any(flag in cpu_description(cpuinfo)[1] for flag in BF16_CPU_FLAGS)


def resolve_dtype(dtype="auto", cpuinfo="/proc/cpuinfo", probe=None, cache=None, task="training"):
    """The dtype policy to train with: `dtype` itself, or for "auto" the fastest here.

    Args:
        dtype: str, default "auto". One of `DTYPES`.
        cpuinfo: str, default "/proc/cpuinfo". Where the CPU flags are read (tests pass a file).
        probe: callable or None. Returns `{policy: tokens per second}` for "float32" and
            "mixed_bfloat16"; None times `PROBES[task]` (tests pass a stub).
        cache: path or None. Where measurements are kept; None: `default_cache_path()`.
        task: "training" (default) or "inference" (an exported model serving): which step
            the probe times.

    Returns:
        "mixed_bfloat16" or "float32".

    Raises:
        ValueError: an unknown dtype.

    Example:
    >>> resolve_dtype("float32")
    'float32'
    """
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}; received {dtype!r}")
    if dtype != "auto":
        return dtype
    import tensorflow as tf

    for gpu in tf.config.list_physical_devices("GPU"):
        capability = tf.config.experimental.get_device_details(gpu).get("compute_capability")
        if capability and capability[0] >= 8:
            return "mixed_bfloat16"
    if not cpu_has_bfloat16(cpuinfo):
        return "float32"
    speeds = measured_speeds(cpuinfo, probe, cache, task)
    return "mixed_bfloat16" if bfloat16_speedup(speeds) >= MIN_SPEEDUP else "float32"


def bfloat16_speedup(speeds):
    """Mixed bfloat16's tokens/s over float32's in a `measured_speeds` dict."""
    return speeds["mixed_bfloat16"] / speeds["float32"]


def default_cache_path():
    """`$KBERT_CACHE_DIR/precision.json` (default `~/.cache/kbert/precision.json`)."""
    return Path(os.environ.get("KBERT_CACHE_DIR", Path.home() / ".cache" / "kbert")) / (
        "precision.json"
    )


def machine_key(cpuinfo="/proc/cpuinfo"):
    """What a probe's result holds for: CPU model, its bfloat16 flags, threads, TensorFlow."""
    import tensorflow as tf

    model, flags = cpu_description(cpuinfo)
    bf16 = "+".join(sorted(flag for flag in BF16_CPU_FLAGS if flag in flags)) or "no-bf16"
    threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{model} | {bf16} | {threads} threads | tensorflow {tf.__version__}"


def measured_speeds(cpuinfo="/proc/cpuinfo", probe=None, cache=None, task="training"):
    """`{policy: tokens per second}` of `task`'s probe on this machine, measured once and cached.

    A cache that cannot be read or written is not an error: the probe runs again next time.
    """
    if task not in PROBES:
        raise ValueError(f"task must be one of {sorted(PROBES)}; received {task!r}")
    path = Path(cache) if cache is not None else default_cache_path()
    key = f"{task} | {machine_key(cpuinfo)}"
    try:
        known = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    if not isinstance(known, dict):
        known = {}
    if isinstance(known.get(key), dict) and {"float32", "mixed_bfloat16"} <= set(known[key]):
        return known[key]
    speeds = (probe or PROBES[task])()
    known[key] = {policy: float(speeds[policy]) for policy in ("float32", "mixed_bfloat16")}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
        partial.write_text(json.dumps(known, indent=1, sort_keys=True), encoding="utf-8")
        partial.replace(path)  # whole or not at all, if two processes probe at once
    except OSError:
        pass
    return known[key]


def _probe_model(policy, sequence_length):
    """The probes' model: two blocks of width 256 (4 heads, feed-forward 1,024), mean-pooled
    into two logits: the kinds of ops a fine-tuning, pretraining or serving step runs."""
    import keras

    from kbert.models.encoder import Encoder
    from kbert.models.encoder_config import EncoderConfig

    keras.backend.clear_session()
    config = EncoderConfig(
        vocabulary_size=1000,
        num_layers=2,
        hidden_dim=256,
        num_heads=4,
        intermediate_dim=1024,
        max_sequence_length=sequence_length,
    )
    encoder = Encoder(config, dtype=policy)
    pooled = keras.layers.GlobalAveragePooling1D(dtype=policy)(
        encoder(encoder.input)["sequence_output"]
    )
    return keras.Model(encoder.input, keras.layers.Dense(2, dtype="float32")(pooled))


def _probe_batch(batch_size, sequence_length):
    import numpy as np

    rng = np.random.default_rng(0)
    ids = rng.integers(5, 1000, (batch_size, sequence_length)).astype("int32")
    x = {"token_ids": ids, "padding_mask": np.ones_like(ids), "segment_ids": np.zeros_like(ids)}
    return x, rng.integers(0, 2, batch_size).astype("int32")


def _timed(run, steps):
    for _ in range(2):  # the trace, then one warm step
        run()
    start = time.perf_counter()
    for _ in range(steps):
        run()
    return time.perf_counter() - start


def measure_training_speed(steps=4, batch_size=16, sequence_length=128):
    """Tokens/s of the probe model's training step (AdamW) in each policy."""
    import keras

    from kbert.train.fused_adamw import FusedAdamW

    x, y = _probe_batch(batch_size, sequence_length)
    speeds = {}
    for policy in ("float32", "mixed_bfloat16"):
        model = _probe_model(policy, sequence_length)
        model.compile(
            optimizer=FusedAdamW(1e-4),
            loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # the unused pooler has no gradient
            seconds = _timed(lambda model=model: model.train_on_batch(x, y), steps)
        speeds[policy] = batch_size * sequence_length * steps / seconds
    keras.backend.clear_session()
    return speeds


def measure_inference_speed(steps=8, batch_size=16, sequence_length=128):
    """Tokens/s of the probe model's forward pass (a compiled function) in each policy."""
    import keras
    import tensorflow as tf

    x, _ = _probe_batch(batch_size, sequence_length)
    speeds = {}
    for policy in ("float32", "mixed_bfloat16"):
        model = _probe_model(policy, sequence_length)
        forward = tf.function(lambda inputs, model=model: model(inputs, training=False))
        seconds = _timed(lambda forward=forward: forward(x).numpy(), steps)
        speeds[policy] = batch_size * sequence_length * steps / seconds
    keras.backend.clear_session()
    return speeds


PROBES = {"training": measure_training_speed, "inference": measure_inference_speed}
