import numpy as np
import pytest

from kbert.text.token_perturbation import TokenPerturbation

SPECIALS = (2, 3)  # [CLS], [SEP]
MASK = 4


def _batch(rows=200, length=12):
    ids = np.random.default_rng(7).integers(10, 100, size=(rows, length)).astype("int32")
    ids[:, 0], ids[:, -3] = 2, 3
    ids[:, -2:] = 0  # padding
    return ids, (ids != 0).astype("int32")


def test_rates_of_zero_keep_the_ids_and_rate_one_masks_every_real_wordpiece():
    ids, mask = _batch()
    kept = TokenPerturbation(MASK, [50], SPECIALS, mask_rate=0.0, replace_rate=0.0)(ids, mask)
    np.testing.assert_array_equal(kept, ids)
    masked = TokenPerturbation(MASK, [50], SPECIALS, mask_rate=1.0, replace_rate=0.0)(ids, mask)
    open_positions = (mask == 1) & ~np.isin(ids, SPECIALS)
    assert np.all(masked[open_positions] == MASK)
    np.testing.assert_array_equal(masked[~open_positions], ids[~open_positions])
    replaced = TokenPerturbation(MASK, [7, 8], SPECIALS, mask_rate=0, replace_rate=1)(ids, mask)
    assert set(np.unique(replaced[open_positions])) == {7, 8}
    np.testing.assert_array_equal(replaced[~open_positions], ids[~open_positions])


def test_the_shares_changed_follow_the_rates_within_a_stated_tolerance():
    ids, mask = _batch(rows=2000)
    out = TokenPerturbation(MASK, [1000], SPECIALS, mask_rate=0.2, replace_rate=0.3)(ids, mask)
    open_positions = (mask == 1) & ~np.isin(ids, SPECIALS)
    # 18,000 open positions: a binomial share's sd is under 0.004; allow 0.02.
    assert abs(np.mean(out[open_positions] == MASK) - 0.2) < 0.02
    assert abs(np.mean(out[open_positions] == 1000) - 0.3) < 0.02


def test_the_same_seed_gives_the_same_copy_and_the_input_is_not_changed():
    ids, mask = _batch()
    before = ids.copy()
    perturb = TokenPerturbation(MASK, range(10, 20), SPECIALS)
    first, again, other = perturb(ids, mask, 3), perturb(ids, mask, 3), perturb(ids, mask, 4)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    np.testing.assert_array_equal(ids, before)
    assert first.dtype == np.int32 and first.shape == ids.shape


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"mask_rate": 1.5}, "mask_rate must be a number in"),
        ({"replace_rate": -0.1}, "replace_rate must be a number in"),
        ({"mask_rate": 0.6, "replace_rate": 0.6}, "mask_rate \\+ replace_rate must be <= 1"),
        ({"replacement_ids": []}, "replacement_ids must hold at least one id"),
    ],
)
def test_bad_settings_are_refused_by_name(changes, message):
    arguments = {"mask_token_id": MASK, "replacement_ids": [50], **changes}
    with pytest.raises(ValueError, match=message):
        TokenPerturbation(**arguments)


def test_mismatched_shapes_are_refused():
    ids, mask = _batch(rows=2)
    with pytest.raises(ValueError, match="padding_mask the same shape"):
        TokenPerturbation(MASK, [50])(ids, mask[:, :-1])
