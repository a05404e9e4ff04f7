"""Perturbing packed inputs for consistency training: token masking and random replacement.

UDA (Xie et al. 2019, "Unsupervised Data Augmentation for Consistency Training") asks a model
to predict the same class for an unlabelled text and a perturbed copy of it. Its text
perturbations are back-translation and TF-IDF word replacement; here the perturbations act on
the packed wordpiece ids, so they need no other model and keep every row's length (the copy
lines up with the original position by position):

- masking: a share `mask_rate` of the real wordpieces becomes `[MASK]` (BERT's corruption);
- replacement: a share `replace_rate` becomes a wordpiece drawn *uniformly* from
  `replacement_ids` (UDA weights its draws by TF-IDF, keeping a text's keywords more often;
  the uniform draw is the simpler, harsher noise).

Special tokens (`[CLS]`, `[SEP]`, …) and padding are never touched. The function is NumPy,
seeded and deterministic: the same `seed` gives the same copy.
"""

import dataclasses
import numbers

import numpy as np


def _check_rate(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be a number in [0, 1]; received {value!r}")
    return float(value)


@dataclasses.dataclass(frozen=True)
class TokenPerturbation:
    """Perturbs packed `token_ids`: some wordpieces masked, some replaced (a callable).

    Each real, unprotected position independently draws one uniform number `u`: `u <
    mask_rate` masks it, `mask_rate <= u < mask_rate + replace_rate` replaces it with a
    uniform draw from `replacement_ids`, anything else keeps it. Settings are checked on
    construction; a bad one raises a `ValueError` naming it.

    Args:
        mask_token_id: int. The id of `[MASK]`.
        replacement_ids: sequence of int, non-empty when `replace_rate > 0`. Ids to draw
            replacements from (whole words of the vocabulary, say). Kept as a tuple.
        protected_ids: sequence of int, default (). Ids never changed (the special tokens).
        mask_rate: float in [0, 1], default 0.1.
        replace_rate: float in [0, 1], default 0.1. `mask_rate + replace_rate` must be <= 1.

    Example:
    >>> ids = np.array([[2, 10, 11, 12, 3, 0]])
    >>> perturb = TokenPerturbation(4, [20], protected_ids=[2, 3], mask_rate=1.0,
    ...                             replace_rate=0.0)
    >>> perturb(ids, ids != 0).tolist()
    [[2, 4, 4, 4, 3, 0]]
    """

    mask_token_id: int
    replacement_ids: tuple
    protected_ids: tuple = ()
    mask_rate: float = 0.1
    replace_rate: float = 0.1

    def __post_init__(self):
        mask_rate = _check_rate("mask_rate", self.mask_rate)
        replace_rate = _check_rate("replace_rate", self.replace_rate)
        if mask_rate + replace_rate > 1.0:
            raise ValueError(
                "mask_rate + replace_rate must be <= 1 (each position is changed once at most); "
                f"received {mask_rate} + {replace_rate}"
            )
        replacement_ids = tuple(int(i) for i in self.replacement_ids)
        if replace_rate > 0 and not replacement_ids:
            raise ValueError("replacement_ids must hold at least one id when replace_rate > 0")
        object.__setattr__(self, "mask_rate", mask_rate)
        object.__setattr__(self, "replace_rate", replace_rate)
        object.__setattr__(self, "replacement_ids", replacement_ids)
        object.__setattr__(self, "protected_ids", tuple(int(i) for i in self.protected_ids))

    def __call__(self, token_ids, padding_mask, seed=0):
        """A perturbed copy of `token_ids`.

        Args:
            token_ids: int array `(batch, sequence)`. Packed ids (`BertPreprocessor`'s output).
            padding_mask: array of the same shape; 0 (or False) at padding.
            seed: int or `np.random.Generator`, default 0. The same seed, the same copy.

        Returns:
            int32 array like `token_ids`, a new array (the input is not changed).
        """
        token_ids = np.asarray(token_ids)
        padding_mask = np.asarray(padding_mask)
        if token_ids.ndim != 2 or padding_mask.shape != token_ids.shape:
            raise ValueError(
                f"token_ids must be (batch, sequence) and padding_mask the same shape; "
                f"received {token_ids.shape} and {padding_mask.shape}"
            )
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        open_positions = padding_mask.astype(bool) & ~np.isin(token_ids, self.protected_ids)
        draws = rng.random(token_ids.shape)  # (batch, sequence)
        masked = open_positions & (draws < self.mask_rate)
        replaced = open_positions & (draws >= self.mask_rate)
        replaced &= draws < self.mask_rate + self.replace_rate
        perturbed = token_ids.astype("int32", copy=True)
        perturbed[masked] = self.mask_token_id
        if self.replacement_ids:
            choices = np.asarray(self.replacement_ids, dtype="int32")
            picks = rng.integers(0, choices.size, size=token_ids.shape)  # (batch, sequence)
            perturbed[replaced] = choices[picks[replaced]]
        return perturbed
