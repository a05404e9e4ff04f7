"""TensorFlow imported once, quietly: kbert's output, not TensorFlow's start-up lines.

TensorFlow's C++ runtime writes its start-up notes (oneDNN, missing CUDA drivers, cuInit) through
absl before its logging is configured, so `TF_CPP_MIN_LOG_LEVEL` cannot hide them. The command
line and the demo call `quiet_tensorflow()` (the labs and benchmarks `import kbert.quiet` first,
which calls it) before anything imports TensorFlow: it sets
the log level, imports TensorFlow and initializes its devices with the process's stderr sent to
a temporary file, then writes back every line that is not one of those known notes, so a real
warning or error still reaches the user.
"""

import io
import os
import re
import sys
import tempfile

# Lines TensorFlow prints on every start on a machine without a GPU.
STARTUP_NOISE = re.compile(
    r"All log messages before absl::InitializeLog|oneDNN custom operations are on|"
    r"cudart_stub\.cc|Could not find cuda drivers|cuda_platform\.cc|failed call to cuInit|"
    r"computation_placer|TF-TRT Warning|This TensorFlow binary is optimized|"
    r"To enable the following instructions|Unable to register cu(DNN|FFT|BLAS) factory|"
    r"oneDNN supports DT_INT64 only"
)


def quiet_tensorflow(log_level="2"):
    """Imports TensorFlow with its start-up notes filtered out of stderr; returns the module.

    Args:
        log_level: str, default "2". `TF_CPP_MIN_LOG_LEVEL` when the environment sets none
            (2: warnings and errors only).

    Example:
    >>> tf = quiet_tensorflow()  # doctest: +SKIP
    """
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", str(log_level))
    if "tensorflow" in sys.modules:
        return sys.modules["tensorflow"]
    try:
        descriptor = sys.stderr.fileno()
    except (AttributeError, io.UnsupportedOperation, ValueError):
        descriptor = None  # stderr is not a file (a captured stream): nothing to filter
    if descriptor is None:
        import tensorflow as tf

        return tf
    sys.stderr.flush()
    saved = os.dup(descriptor)
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), descriptor)
        try:
            import tensorflow as tf

            tf.config.list_physical_devices()
        finally:
            sys.stderr.flush()
            os.dup2(saved, descriptor)
            os.close(saved)
            captured.seek(0)
            for line in captured.read().decode("utf-8", "replace").splitlines():
                if line.strip() and not STARTUP_NOISE.search(line):
                    print(line, file=sys.stderr)
    return tf
