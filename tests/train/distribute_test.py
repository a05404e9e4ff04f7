"""Scale-out: replicas end identical and match one worker with the same global batch."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kbert.train.distribute import make_strategy

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "train" / "distributed_run.py"


def test_strategy_names_and_tf_config_errors(monkeypatch):
    with pytest.raises(ValueError, match="strategy must be one of"):
        make_strategy("parameter_server")
    monkeypatch.delenv("TF_CONFIG", raising=False)
    with pytest.raises(ValueError, match="needs the TF_CONFIG environment variable"):
        make_strategy("multi_worker")
    monkeypatch.setenv("TF_CONFIG", "{not json")
    with pytest.raises(ValueError, match="TF_CONFIG is not a valid cluster description"):
        make_strategy("multi_worker")
    monkeypatch.setenv(
        "TF_CONFIG",
        json.dumps(
            {"cluster": {"worker": ["localhost:1"]}, "task": {"type": "worker", "index": 3}}
        ),
    )
    with pytest.raises(ValueError, match="task index 3 is outside the 1 workers"):
        make_strategy("multi_worker")
    assert make_strategy("default").num_replicas_in_sync == 1


def _run(out, strategy, extra_env=None, cpu_devices=1, wait=True):
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(extra_env or {})}
    command = [
        sys.executable,
        str(SCRIPT),
        "--strategy",
        strategy,
        "--cpu-devices",
        str(cpu_devices),
        "--out",
        str(out),
    ]
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    return process.communicate(timeout=300) if wait else process


def _load(path):
    data = np.load(path)
    weights = [
        data[k]
        for k in sorted((k for k in data.files if k.startswith("w")), key=lambda k: int(k[1:]))
    ]
    return int(data["replicas"]), data["losses"], weights


def _free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("localhost", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


@pytest.fixture(scope="module")
def single_worker(tmp_path_factory):
    out = tmp_path_factory.mktemp("single") / "run.npz"
    output, _ = _run(out, "default")
    assert out.exists(), output[-3000:]
    return _load(out)


@pytest.mark.slow
def test_mirrored_on_two_cpu_devices_matches_one_device(tmp_path, single_worker):
    out = tmp_path / "mirrored.npz"
    output, _ = _run(out, "mirrored", cpu_devices=2)
    assert out.exists(), output[-3000:]
    replicas, losses, weights = _load(out)
    assert replicas == 2
    np.testing.assert_allclose(losses, single_worker[1], rtol=1e-5)
    for ours, reference in zip(weights, single_worker[2], strict=True):
        np.testing.assert_allclose(ours, reference, atol=1e-5)


@pytest.mark.slow
def test_two_workers_on_loopback_end_identical_and_match_one_worker(tmp_path, single_worker):
    ports = _free_ports(2)
    cluster = {"worker": [f"localhost:{port}" for port in ports]}
    processes = []
    for index in range(2):
        tf_config = json.dumps({"cluster": cluster, "task": {"type": "worker", "index": index}})
        processes.append(
            _run(
                tmp_path / f"worker{index}.npz",
                "multi_worker",
                {"TF_CONFIG": tf_config},
                wait=False,
            )
        )
    outputs = [process.communicate(timeout=300)[0] for process in processes]
    for index, output in enumerate(outputs):
        assert (tmp_path / f"worker{index}.npz").exists(), output[-3000:]
    first, second = (_load(tmp_path / f"worker{index}.npz") for index in range(2))
    assert first[0] == 2
    for a, b in zip(first[2], second[2], strict=True):
        np.testing.assert_array_equal(a, b)  # replicas hold the same weights
    np.testing.assert_allclose(first[1], single_worker[1], rtol=1e-5)
    for ours, reference in zip(first[2], single_worker[2], strict=True):
        np.testing.assert_allclose(ours, reference, atol=1e-5)
