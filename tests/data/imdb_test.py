import json
import random

import pytest

from kbert.data import read_imdb


def _write(root, split, rows):
    (root / "imdb").mkdir(exist_ok=True)
    lines = [row if isinstance(row, str) else json.dumps(row, ensure_ascii=False) for row in rows]
    (root / "imdb" / f"{split}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_reads_jsonl_and_replaces_html_line_breaks(tmp_path):
    _write(
        tmp_path,
        "train",
        [
            {"text": "Great.<br /><br />Loved it. ", "label": 1, "rating": 10, "id": 3},
            {"text": "Dull \u0085 and long<br />", "label": 0, "rating": 2, "id": 7},
            {"text": "No id or rating here.", "label": 0},
        ],
    )
    texts, labels = read_imdb("train", data_dir=tmp_path)
    # U+0085 is inside a review, not a line break (str.splitlines would split there).
    assert texts == ["Great. Loved it.", "Dull \u0085 and long", "No id or rating here."]
    assert labels == [1, 0, 0]
    assert read_imdb("train", data_dir=tmp_path, max_examples=2)[1] == [1, 0]


def test_bad_lines_name_the_file_and_line(tmp_path):
    good = {"text": "Fine film.", "label": 1, "rating": 8, "id": 1}
    bad_rows = {
        '{"text": "cut off': "expected one JSON object per line",
        '["a list"]': "expected an object with a non-empty str 'text'",
        json.dumps({"label": 1}): "non-empty str 'text'",
        json.dumps({"text": "x", "label": "pos"}): "an int 'label' 0 or 1",
        json.dumps({"text": "x", "label": 1.0}): "an int 'label' 0 or 1",
        json.dumps({"text": "x", "label": 1, "rating": 3}): "7-10 for label 1",
        json.dumps({"text": "x", "label": 0, "id": "7"}): "an int 'id'",
    }
    for bad, message in bad_rows.items():
        _write(tmp_path, "test", [good, bad])
        with pytest.raises(ValueError, match=rf"test\.jsonl:2: .*{message}"):
            read_imdb("test", data_dir=tmp_path)
    _write(tmp_path, "test", [good, '{"broken'])
    assert read_imdb("test", data_dir=tmp_path, max_examples=1)[1] == [1]  # stops before line 2


def test_arguments_are_checked(tmp_path):
    with pytest.raises(ValueError, match="IMDb split must be 'train' or 'test'; received 'dev'"):
        read_imdb("dev", data_dir=tmp_path)
    with pytest.raises(ValueError, match="max_examples must be a positive int or None; received 0"):
        read_imdb("train", data_dir=tmp_path, max_examples=0)


def test_download_fallback_reads_review_folders_in_the_local_files_order(tmp_path, monkeypatch):
    """Without imdb/*.jsonl, the Stanford archive's aclImdb/{split}/{pos,neg}/ files are read."""
    import keras

    extracted = tmp_path / "cache" / "aclImdb_v1_extracted"
    expected = {}
    for label, folder, ids in ((1, "pos", (0, 5, 12)), (0, "neg", (3, 4))):
        (extracted / "aclImdb" / "test" / folder).mkdir(parents=True)
        for review_id in ids:
            rating = 9 if label else 2
            text = f"review {review_id}<br /><br />{folder}"
            (extracted / "aclImdb" / "test" / folder / f"{review_id}_{rating}.txt").write_text(text)
            expected[(label, review_id)] = f"review {review_id} {folder}"
    (extracted / "aclImdb" / "test" / "urls_pos.txt").write_text("not a review")
    monkeypatch.setattr(keras.utils, "get_file", lambda *args, **kwargs: str(extracted))
    monkeypatch.setenv("KBERT_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "data").mkdir()
    texts, labels = read_imdb("test", data_dir=tmp_path / "data")
    order = sorted(expected)
    random.Random(0).shuffle(order)  # how imdb/*.jsonl was shuffled (see its SOURCE.md)
    assert texts == [expected[key] for key in order] and labels == [key[0] for key in order]
    assert read_imdb("test", data_dir=tmp_path / "data", max_examples=2)[0] == texts[:2]


@pytest.mark.slow
def test_real_files_have_the_documented_counts(data_root):
    for split in ("test", "train"):
        texts, labels = read_imdb(split, data_dir=data_root)
        assert len(texts) == 25000 and sum(labels) == 12500
        assert not any("<br />" in text for text in texts)
    assert texts[0].startswith("Theodore Rex is possibly the greatest cinematic experience")
    assert 400 < sum(read_imdb("train", data_dir=data_root, max_examples=1000)[1]) < 600
