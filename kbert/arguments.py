"""Argument types and flags shared by the labs, benchmarks and CLI: one place for "must be …" checks.

Each factory returns a callable for `argparse`'s `type=`, so a bad value is refused when the
arguments are parsed, before any work, with a message that names the flag, what was expected
and what was received.
"""

import argparse

from kbert.cli.choices import PRETRAINING_RECIPE


def comma_separated(kind=int, minimum=None, strictly_greater=False):
    """An `argparse` type for a comma-separated list such as "100,500" or "1e-4,3e-4".

    Args:
        kind: int or float, default int. Each value's type.
        minimum: number or None. The smallest value allowed.
        strictly_greater: bool, default False. Values must exceed `minimum`, not just reach it.

    Returns:
        callable `text → list`, raising `argparse.ArgumentTypeError` for an empty list, a value
        that is not a `kind`, or one below the minimum.

    Example:
    >>> comma_separated(int, minimum=1)("100, 500")
    [100, 500]
    >>> comma_separated(float, minimum=0, strictly_greater=True)("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be comma-separated numbers > 0; received '0'
    """
    noun = "integers" if kind is int else "numbers"
    bound = "" if minimum is None else f" {'>' if strictly_greater else '>='} {minimum:g}"

    def parse(text):
        try:
            values = [kind(value) for value in str(text).split(",") if value.strip()]
        except ValueError:
            values = []
        below = minimum is not None and any(
            value <= minimum if strictly_greater else value < minimum for value in values
        )
        if not values or below:
            raise argparse.ArgumentTypeError(
                f"must be comma-separated {noun}{bound}; received {text!r}"
            )
        return values

    return parse


def add_recipe_arguments(parser):
    """The flags of the CPU-hour recipe, with its values as defaults
    (`kbert.models.pretraining_models.RECIPE`, each choice with its source); `kbert pretrain`
    and lab01 share them."""
    recipe = PRETRAINING_RECIPE
    parser.add_argument(
        "--layer-norm",
        choices=("auto", "pre", "post"),
        default=recipe["layer_norm"],
        help="layer norm before (pre, the recipe's) or after (post) each sublayer; auto = each "
        "objective's source: pre for causal (GPT-2), post for masked and electra (BERT)",
    )
    add_dropout_arguments(parser)
    parser.add_argument(
        "--mask-rate",
        type=float,
        default=None,
        help="masked and electra: share of tokens masked and predicted (BERT: 0.15); default "
        f"{recipe['masked_mask_rate']} for masked, {recipe['electra_mask_rate']} for electra",
    )
    parser.add_argument(
        "--generator-width-factor",
        type=int,
        default=recipe["generator_width_factor"],
        help="electra: the generator is this many times narrower than the discriminator",
    )
    parser.add_argument(
        "--discriminator-weight",
        type=float,
        default=recipe["discriminator_weight"],
        help="electra: λ, the weight of the replaced-token loss beside the generator's MLM loss",
    )
    parser.add_argument(
        "--tie-embeddings",
        action=argparse.BooleanOptionalAction,
        default=recipe["tie_embeddings"],
        help="electra: the generator reads the discriminator's embedding tables (ELECTRA's)",
    )


def add_dropout_arguments(parser):
    """`--dropout` (while pretraining) and `--fine-tuning-dropout` (what the saved model carries
    into fine-tuning), at the CPU-hour recipe's values: none while pretraining on a small budget
    (Cramming; T5.1.1), BERT's 0.1 for fine-tuning."""
    parser.add_argument(
        "--dropout", type=float, default=PRETRAINING_RECIPE["dropout"], help="while pretraining"
    )
    parser.add_argument(
        "--fine-tuning-dropout",
        type=float,
        default=PRETRAINING_RECIPE["fine_tuning_dropout"],
        help="the dropout the saved model carries into fine-tuning",
    )
