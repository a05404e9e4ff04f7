import json

import pytest

from kbert.checkpoints import minilm_l6_dir, trained_pooling


def _checkpoint(tmp_path, **modes):
    (tmp_path / "1_Pooling").mkdir()
    flags = {
        "pooling_mode_cls_token": False,
        "pooling_mode_mean_tokens": False,
        "pooling_mode_max_tokens": False,
        "pooling_mode_mean_sqrt_len_tokens": False,
        **modes,
    }
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps(flags))
    return tmp_path


@pytest.mark.parametrize(
    "key, pooling",
    [
        ("pooling_mode_mean_tokens", "mean"),
        ("pooling_mode_cls_token", "cls"),
        ("pooling_mode_max_tokens", "max"),
    ],
)
def test_the_pooling_a_sentence_transformers_checkpoint_names_is_read(tmp_path, key, pooling):
    assert trained_pooling(_checkpoint(tmp_path, **{key: True})) == pooling


def test_without_a_pooling_file_the_default_and_a_causal_model_its_last_token(tmp_path):
    assert trained_pooling(tmp_path) == "cls"
    assert trained_pooling(tmp_path, default="mean") == "mean"
    assert trained_pooling(_checkpoint(tmp_path, pooling_mode_mean_tokens=True), causal=True) == (
        "last"
    )


def test_a_pooling_kbert_has_no_head_for_is_refused_by_file(tmp_path):
    path = _checkpoint(tmp_path, pooling_mode_mean_sqrt_len_tokens=True)
    with pytest.raises(ValueError, match=r"1_Pooling/config.json: names the pooling .*sqrt"):
        trained_pooling(path)
    (tmp_path / "1_Pooling" / "config.json").write_text("{broken")
    with pytest.raises(ValueError, match="cannot be read as JSON"):
        trained_pooling(tmp_path)


@pytest.mark.skipif(minilm_l6_dir() is None, reason="MiniLM-L6 is not installed")
def test_minilm_l6_was_trained_to_be_read_by_its_mean():
    assert trained_pooling("minilm_l6") == "mean"
