"""quiet_tensorflow: TensorFlow's start-up notes are dropped, anything else written is kept."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FAKE_TENSORFLOW = textwrap.dedent("""
    import os
    os.write(2, b"WARNING: All log messages before absl::InitializeLog() is called are written to STDERR\\n")
    os.write(2, b"I0000 cudart_stub.cc:31] Could not find cuda drivers on your machine\\n")
    os.write(2, b"a real warning from the import\\n")

    class config:
        @staticmethod
        def list_physical_devices():
            os.write(2, b"E0000 cuda_platform.cc:52] failed call to cuInit: UNKNOWN ERROR\\n")
            return []
""")


def _run(code, tmp_path, fake):
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(([str(tmp_path)] if fake else []) + [str(ROOT)]),
    }
    env.pop("TF_CPP_MIN_LOG_LEVEL", None)
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )


def test_start_up_notes_are_dropped_and_other_lines_kept(tmp_path):
    (tmp_path / "tensorflow").mkdir()
    (tmp_path / "tensorflow" / "__init__.py").write_text(FAKE_TENSORFLOW)
    code = (
        "import os, sys\n"
        "from kbert.startup import quiet_tensorflow\n"
        "quiet_tensorflow()\n"
        "print('after', file=sys.stderr)\n"
        "print(os.environ['TF_CPP_MIN_LOG_LEVEL'])\n"
    )
    result = _run(code, tmp_path, fake=True)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == ["a real warning from the import", "after"]
    assert result.stdout.strip() == "2"


def test_the_real_tensorflow_starts_silently(tmp_path):
    code = (
        "from kbert.startup import quiet_tensorflow\n"
        "tf = quiet_tensorflow()\n"
        "print(int(tf.constant(2) + 1))\n"
    )
    result = _run(code, tmp_path, fake=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "3"
    assert result.stderr.strip() == "", result.stderr[-2000:]
