"""FLOP counts and this machine's measured matmul peak, shared by the speed benchmarks."""

import time

import tensorflow as tf


def measure_matmul_peak(dtype="float32", size=2048, seconds=2.0):
    """Returns the best GFLOP/s of a square matmul on this machine (a roofline for MFU).

    Both TensorFlow paths are tried, oneDNN (graph mode) and XLA, and the better one counts: on
    CPUs with AVX-512 BF16 only oneDNN reaches the bfloat16 peak.
    """
    a = tf.random.normal((size, size), dtype=tf.float32)
    a = tf.cast(a, dtype)
    b = tf.cast(tf.random.normal((size, size)), dtype)

    best = 0.0
    for jit_compile in (False, True):
        step = tf.function(tf.matmul, jit_compile=jit_compile)
        step(a, b).numpy()
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            start = time.perf_counter()
            step(a, b).numpy()
            elapsed = time.perf_counter() - start
            best = max(best, 2 * size**3 / elapsed / 1e9)
    return best


def encoder_training_flops(config, lengths):
    """Useful model FLOPs of one training step (forward + backward = 3 × forward), as PaLM's MFU.

    Counts the matmuls a batch needs: the blocks' projections (2 FLOPs per weight per real token)
    and attention's two (length × length) products per sequence. Padded positions add nothing, so
    an implementation that computes them gets a lower MFU. Embedding lookups, norms and softmax
    are not counted.

    Args:
        config: an `EncoderConfig`.
        lengths: sequence of int, the real length of each sequence in the batch.
    """
    h, f, n = config.hidden_dim, config.intermediate_dim, config.num_layers
    tokens = sum(lengths)
    weights_per_block = 4 * h * h + 2 * h * f
    forward = 2 * weights_per_block * tokens * n
    forward += 2 * 2 * sum(length * length for length in lengths) * h * n  # QK^T and PV
    forward += 2 * h * h * len(lengths)  # pooler
    return 3 * forward
