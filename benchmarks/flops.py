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


def encoder_training_flops(config, batch_size, sequence_length):
    """Model FLOPs of one training step (forward + backward = 3 × forward), as in PaLM's MFU.

    Counts the matmuls: the blocks' projections (2 FLOPs per weight per token) and attention's
    two (seq × seq) products. Embedding lookups, norms and softmax are not counted.
    """
    h, f, n = config.hidden_dim, config.intermediate_dim, config.num_layers
    tokens = batch_size * sequence_length
    weights_per_block = 4 * h * h + 2 * h * f
    forward = 2 * weights_per_block * tokens * n
    forward += 2 * 2 * batch_size * sequence_length * sequence_length * h * n  # QK^T and PV
    forward += 2 * h * h * batch_size  # pooler
    return 3 * forward
