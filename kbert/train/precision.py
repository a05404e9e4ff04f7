"""Which dtype policy trains fastest here: mixed bfloat16 only where the hardware computes it.

Mixed bfloat16 halves the bytes a matmul moves, but only hardware with bfloat16 arithmetic gains
from it: CPUs with AVX-512 BF16 or AMX (measured on the course machines: ~870 vs ~450 GFLOP/s
float32), and GPUs of compute capability 8.0 or later. An AVX2-only CPU emulates it and trains
slower than in float32, so there `auto` means float32.
"""

from pathlib import Path

DTYPES = ("auto", "float32", "mixed_bfloat16")
BF16_CPU_FLAGS = ("avx512_bf16", "amx_bf16")


def cpu_has_bfloat16(cpuinfo="/proc/cpuinfo"):
    """Whether the CPU computes bfloat16 natively (a flag of `BF16_CPU_FLAGS` in `cpuinfo`)."""
    try:
        text = Path(cpuinfo).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    flags = set()
    for line in text.splitlines():
        if line.startswith("flags"):
            flags.update(line.split(":", 1)[-1].split())
    return any(flag in flags for flag in BF16_CPU_FLAGS)


def resolve_dtype(dtype="auto", cpuinfo="/proc/cpuinfo"):
    """The dtype policy to train with: `dtype` itself, or for "auto" the fastest here.

    Args:
        dtype: str, default "auto". One of `DTYPES`.
        cpuinfo: str, default "/proc/cpuinfo". Where the CPU flags are read (tests pass a file).

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
    return "mixed_bfloat16" if cpu_has_bfloat16(cpuinfo) else "float32"
