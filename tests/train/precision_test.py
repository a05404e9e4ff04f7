"""`auto` dtype: mixed bfloat16 only where the CPU (or GPU) computes bfloat16."""

import pytest

from kbert.train.precision import cpu_has_bfloat16, resolve_dtype

AVX512_BF16 = "processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16 avx512_vnni\n"
AVX2 = "processor\t: 0\nflags\t\t: fpu sse2 avx2 fma\n"


def test_auto_follows_the_cpu_flags(tmp_path):
    with_bf16, without = tmp_path / "bf16", tmp_path / "avx2"
    with_bf16.write_text(AVX512_BF16)
    without.write_text(AVX2)
    assert cpu_has_bfloat16(with_bf16) and not cpu_has_bfloat16(without)
    assert not cpu_has_bfloat16(tmp_path / "missing")
    assert resolve_dtype("auto", cpuinfo=with_bf16) == "mixed_bfloat16"
    assert resolve_dtype("auto", cpuinfo=without) == "float32"
    assert resolve_dtype("float32", cpuinfo=with_bf16) == "float32"
    assert resolve_dtype("mixed_bfloat16", cpuinfo=without) == "mixed_bfloat16"
    with pytest.raises(ValueError, match=r"dtype must be one of \('auto', 'float32', "):
        resolve_dtype("float16")
