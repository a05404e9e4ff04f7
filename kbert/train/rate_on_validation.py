"""Each arm's peak rate chosen on validation at the first seed, then every other seed at it.

A lab that compares arms (a method against its baseline) must not train both at a rate chosen
for something else: the rate that suits plain fine-tuning on one task and size need not suit an
arm with an extra loss, or another size. Choosing each arm's rate over every seed costs
`rates × seeds` runs; here the first seed runs at every rate, validation picks one, and that
run is kept as the first seed's, so an arm costs `rates + seeds − 1` runs. Test scores of the
rates not chosen are recorded beside (a reader sees what validation passed over) and never
read to choose.

    runs, choice = rate_then_seeds([1e-4, 3e-4, 1e-3], [0, 1, 2], train, "val_accuracy")
    choice["chosen"]  # the rate every run in `runs` trained at
"""


def rates_around(rate):
    """`[rate / 3, rate, rate × 3]`, rounded to 10 decimals: the rates a lab tries around a rate
    chosen elsewhere (the grid's full fine-tuning rate) when its own arms may want another.

        >>> rates_around(3e-4)
        [0.0001, 0.0003, 0.0009]
    """
    return [round(rate * factor, 10) for factor in (1 / 3, 1, 3)]


def rate_then_seeds(rates, seeds, train, validation_key, shown=("test_accuracy",)):
    """Runs `train(rate, seed)` at every rate for the first seed, chooses the rate with the
    highest `run[validation_key]` (the first listed on a tie), then the other seeds at it.

    Args:
        rates: list of float. Peak rates, at least one; with one, no choice is made.
        seeds: list of int. The seeds, in order; the first is the one the rates are tried at.
        train: callable `(rate, seed) -> dict`, one run holding `validation_key`.
        validation_key: str. The validation score the choice maximises.
        shown: names of other scores each tried rate's row keeps (test scores, for the reader).

    Returns:
        `(runs, choice)`: `runs`, one per seed in `seeds`' order, all at the chosen rate (the
        first is the chosen rate's first-seed run); `choice` with `chosen` (the rate),
        `chosen_on` (`validation_key`) and `tried`: per rate, its first-seed
        `validation_key` and `shown` scores ([] with one rate).

    Raises:
        ValueError: `rates` or `seeds` is empty, or a run lacks `validation_key`.
    """
    if not rates or not seeds:
        raise ValueError(f"rates and seeds must each hold one at least; received {rates}, {seeds}")
    if len(rates) == 1:
        choice = {"chosen": rates[0], "chosen_on": validation_key, "tried": []}
        return [train(rates[0], seed) for seed in seeds], choice
    tried = [train(rate, seeds[0]) for rate in rates]
    missing = [rate for rate, run in zip(rates, tried, strict=True) if validation_key not in run]
    if missing:
        raise ValueError(f"the runs at {missing} hold no {validation_key!r} to choose a rate by")
    best = max(range(len(rates)), key=lambda index: tried[index][validation_key])
    rows = [
        {
            "learning_rate": rate,
            validation_key: run[validation_key],
            **{key: run[key] for key in shown if key in run},
        }
        for rate, run in zip(rates, tried, strict=True)
    ]
    runs = [tried[best]] + [train(rates[best], seed) for seed in seeds[1:]]
    return runs, {"chosen": rates[best], "chosen_on": validation_key, "tried": rows}
