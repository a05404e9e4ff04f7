"""`auto` dtype: mixed bfloat16 only where the CPU (or GPU) computes bfloat16 and a timed probe
shows it faster."""

import json

import pytest

from kbert.train.precision import (
    MIN_SPEEDUP,
    cpu_has_bfloat16,
    machine_key,
    measure_inference_speed,
    measure_training_speed,
    measured_speeds,
    resolve_dtype,
)

AVX512_BF16 = "processor\t: 0\nmodel name\t: Test CPU\nflags\t\t: fpu avx2 avx512f avx512_bf16\n"
AVX2 = "processor\t: 0\nmodel name\t: Old CPU\nflags\t\t: fpu sse2 avx2 fma\n"


class Probe:
    """Stub probe: returns `speeds` and counts its calls."""

    def __init__(self, float32, bfloat16):
        self.speeds, self.calls = {"float32": float32, "mixed_bfloat16": bfloat16}, 0

    def __call__(self):
        self.calls += 1
        return self.speeds


@pytest.fixture
def cpus(tmp_path):
    with_bf16, without = tmp_path / "bf16", tmp_path / "avx2"
    with_bf16.write_text(AVX512_BF16)
    without.write_text(AVX2)
    return with_bf16, without


def test_auto_needs_the_flags_and_a_measured_gain(cpus, tmp_path):
    with_bf16, without = cpus
    assert cpu_has_bfloat16(with_bf16) and not cpu_has_bfloat16(without)
    assert not cpu_has_bfloat16(tmp_path / "missing")
    faster, slower = Probe(100.0, 150.0), Probe(100.0, 100.0 * MIN_SPEEDUP * 0.99)
    assert resolve_dtype("auto", with_bf16, faster, tmp_path / "a.json") == "mixed_bfloat16"
    assert resolve_dtype("auto", with_bf16, slower, tmp_path / "b.json") == "float32"
    never = Probe(1.0, 1000.0)
    assert resolve_dtype("auto", without, never, tmp_path / "c.json") == "float32"
    assert never.calls == 0  # an AVX2-only CPU is not probed: it emulates bfloat16
    assert resolve_dtype("float32", with_bf16, faster) == "float32"
    assert resolve_dtype("mixed_bfloat16", without, faster) == "mixed_bfloat16"
    with pytest.raises(ValueError, match=r"dtype must be one of \('auto', 'float32', "):
        resolve_dtype("float16")


def test_the_probe_runs_once_per_machine_and_survives_a_broken_cache(cpus, tmp_path):
    with_bf16, without = cpus
    cache, probe = tmp_path / "kbert" / "precision.json", Probe(100.0, 140.0)
    for _ in range(3):
        assert resolve_dtype("auto", with_bf16, probe, cache) == "mixed_bfloat16"
    assert probe.calls == 1
    stored = json.loads(cache.read_text())
    assert stored == {
        f"training | {machine_key(with_bf16)}": {"float32": 100.0, "mixed_bfloat16": 140.0}
    }
    assert "Test CPU | avx512_bf16 |" in machine_key(with_bf16)
    assert machine_key(with_bf16) != machine_key(without)
    cache.write_text("{not json")
    assert measured_speeds(with_bf16, probe, cache)["mixed_bfloat16"] == 140.0
    assert probe.calls == 2 and json.loads(cache.read_text())
    unwritable = tmp_path / "file"
    unwritable.write_text("")
    assert measured_speeds(with_bf16, probe, unwritable / "precision.json")["float32"] == 100.0


def test_training_and_inference_are_measured_and_kept_apart(cpus, tmp_path):
    """An export asks about inference: its own probe and its own cache entry."""
    with_bf16, _ = cpus
    cache, training, inference = tmp_path / "p.json", Probe(100.0, 150.0), Probe(100.0, 95.0)
    assert resolve_dtype("auto", with_bf16, training, cache) == "mixed_bfloat16"
    assert resolve_dtype("auto", with_bf16, inference, cache, task="inference") == "float32"
    assert (training.calls, inference.calls) == (1, 1)
    assert len(json.loads(cache.read_text())) == 2
    with pytest.raises(ValueError, match=r"task must be one of \['inference', 'training'\]"):
        measured_speeds(with_bf16, inference, cache, task="serving")


@pytest.mark.parametrize("measure", [measure_training_speed, measure_inference_speed])
def test_the_probes_time_both_policies(measure):
    speeds = measure(steps=1, batch_size=2, sequence_length=16)
    assert set(speeds) == {"float32", "mixed_bfloat16"}
    assert all(value > 0 for value in speeds.values())
