"""`kbert` as a Unix tool, each case in a fresh process (issue #40): options and texts in any
order, empty input, SIGTERM and SIGINT cleanup, abandoned partial directories, and a correct
run whose output holds no library warning and whose progress bars know their totals."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kbert.cli.main import build_parser
from kbert.partial_directories import OWNER_FILE
from tests.cli.toy_sentiment import finetune_arguments, sentiment_rows, write_tsv

ROOT = Path(__file__).resolve().parents[2]


def _kbert(*arguments, **options):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TF_CPP_MIN_LOG_LEVEL": "2"}
    return subprocess.run(
        [sys.executable, "-m", "kbert.cli.main", *arguments],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        **options,
    )


def _finetune_arguments(root, model, train, *extra):
    return finetune_arguments(root / "run", model, train, train, *extra)


@pytest.fixture(scope="module")
def finished(tmp_path_factory, tiny_model):
    """A run fine-tuned by a fresh `kbert finetune` with progress bars: (root, its output)."""
    root = tmp_path_factory.mktemp("unix")
    model = tiny_model
    train = write_tsv(root / "train.tsv", sentiment_rows(24))
    result = _kbert(*_finetune_arguments(root, model, train, "--epochs", "2", "--verbose", "1"))
    assert result.returncode == 0, result.stderr[-3000:]
    return root, model, train, result


def test_a_correct_run_prints_no_library_warning_and_every_bar_knows_its_total(finished):
    *_, result = finished
    # No "`shuffle=True` was passed", no "Gradients do not exist for variables ['pooler/...']",
    # no "Your input ran out of data": nothing on stderr but, on some machines, TensorFlow's
    # own C++ log lines (I0000 00:00:... file.cc:N]), which kbert filters at start-up only.
    python_lines = [
        line for line in result.stderr.splitlines() if not re.match(r"[IWE]\d{4} ", line)
    ]
    assert python_lines == [], result.stderr[-3000:]
    plain = re.sub(r"\x1b\[[0-9;]*m", "", result.stdout)  # without the bars' colours
    bars = [re.match(r"\s*(\d+)/(\w+) ", line) for line in re.split(r"[\r\n]", plain)]
    bars = [bar.groups() for bar in bars if bar]
    assert bars and all(total == "6" for _, total in bars), bars  # 24 examples / 4, each epoch
    assert "Unknown" not in result.stdout
    assert "Epoch 1/2" in result.stdout and "Epoch 2/2" in result.stdout


def test_options_and_texts_come_in_any_order(finished):
    root, *_ = finished
    run = str(root / "run")
    texts = ["the movie was good", "the plot was bad"]
    result = _kbert("predict", run, "--long-inputs", "head_tail", texts[0], texts[1])
    assert result.returncode == 0, result.stderr[-3000:]
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["text"] for line in lines] == texts


@pytest.mark.parametrize(
    "argv, expected",
    [
        (
            ["predict", "--long-inputs", "head", "r", "a", "--max-windows", "2", "b"],
            {"run_dir": "r", "texts": ["a", "b"], "long_inputs": "head", "max_windows": 2},
        ),
        (
            ["predict", "r", "a", "--pair", "x", "b", "--pair", "y"],
            {"run_dir": "r", "texts": ["a", "b"], "pair": ["x", "y"]},
        ),
        (
            ["predict", "--context", "c", "r", "q1", "q2"],
            {"run_dir": "r", "texts": ["q1", "q2"], "context": ["c"]},
        ),
        (["evaluate", "--split", "validation", "r"], {"run_dir": "r", "split": "validation"}),
        (["export", "--name", "n", "r", "--version", "3"], {"run_dir": "r", "version": 3}),
    ],
)
def test_every_command_reads_its_arguments_intermixed(argv, expected):
    args = build_parser().parse_args(argv)
    assert {key: getattr(args, key) for key in expected} == expected


def test_a_filter_given_no_lines_prints_nothing_and_succeeds(finished, tmp_path):
    root, *_ = finished
    result = _kbert("predict", str(root / "run"), "--input", "-", stdin=subprocess.DEVNULL)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    (tmp_path / "empty.txt").write_text("")
    result = _kbert("predict", str(root / "run"), "--input", str(tmp_path / "empty.txt"))
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_a_reader_that_stops_early_stops_predict_quietly(finished, tmp_path):
    root, *_ = finished
    (tmp_path / "many.txt").write_text("the movie was good\n" * 50)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TF_CPP_MIN_LOG_LEVEL": "2"}
    command = [sys.executable, "-m", "kbert.cli.main", "predict", str(root / "run")]
    process = subprocess.Popen(
        [*command, "--input", str(tmp_path / "many.txt"), "--batch-lines", "1"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert json.loads(process.stdout.readline())["text"] == "the movie was good"
    process.stdout.close()  # as `kbert predict ... | head -1` does
    stderr = process.stderr.read()
    assert process.wait(timeout=120) == 128 + signal.SIGPIPE, stderr[-3000:]
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr[-3000:]


def _snapshot(folder):
    return {
        path.relative_to(folder): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


@pytest.mark.slow
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_overwrite_removes_its_partial_run_and_keeps_the_previous_one(
    finished, tmp_path, stop
):
    root, model, _, _ = finished
    shutil.copytree(root / "run", tmp_path / "run")
    before = _snapshot(tmp_path / "run")
    train = write_tsv(tmp_path / "train.tsv", sentiment_rows(400))
    arguments = _finetune_arguments(tmp_path, model, train, "--overwrite", "--epochs", "200")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TF_CPP_MIN_LOG_LEVEL": "3"}
    process = subprocess.Popen(
        [sys.executable, "-m", "kbert.cli.main", *arguments, "--verbose", "2"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    # Stopped while training: the partial run holds its first TensorBoard events by then.
    while not list(tmp_path.glob(".run.partial-*/tensorboard/train/*")):
        assert process.poll() is None and time.monotonic() < deadline, process.stderr.read()
        time.sleep(0.2)
    time.sleep(1.0)
    os.kill(process.pid, stop)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 128 + stop, stderr[-3000:]
    assert f"kbert finetune: stopped by {stop.name}" in stderr and "Traceback" not in stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == ["run", "train.tsv"]
    assert _snapshot(tmp_path / "run") == before


def _dead_pid():
    process = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        text=True,
        capture_output=True,
        check=True,
    )
    return int(process.stdout)


HOLDER = """
import sys, time
from kbert.partial_directories import claim
claim(sys.argv[1])
print("held", flush=True)
time.sleep(600)
"""


def test_finetune_removes_the_partial_runs_of_dead_processes_and_keeps_live_ones(
    finished, tmp_path
):
    root, model, train, _ = finished
    dead_pid = _dead_pid()
    dead = tmp_path / f".run.partial-{dead_pid}-abcd1234"
    (dead / "tensorboard").mkdir(parents=True)
    (dead / "model.keras").write_bytes(b"half a model")
    (dead / OWNER_FILE).write_text(json.dumps({"pid": dead_pid, "host": os.uname().nodename}))
    older = tmp_path / ".run.partial-q7x_k2mz"  # kbert's name before owners were recorded
    older.mkdir()
    live = tmp_path / f".run.partial-{os.getpid()}-live0001"
    live.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(live)], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline() == "held\n"
        result = _kbert(
            *_finetune_arguments(tmp_path, model, train, "--epochs", "1", "--verbose", "0")
        )
        assert result.returncode == 0, result.stderr[-3000:]
        assert f"removed unfinished {dead}: process {dead_pid}" in result.stderr
        assert f"removed unfinished {older}: an earlier kbert" in result.stderr
        assert f"kept unfinished {live}: its process still writes it" in result.stderr
        assert not dead.exists() and not older.exists() and live.is_dir()
        assert not (tmp_path / "run" / OWNER_FILE).exists()
        assert (tmp_path / "run" / "model.keras").is_file()
    finally:
        holder.kill()
        holder.wait(timeout=30)
