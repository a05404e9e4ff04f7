"""The record families of `benchmarks.reports`, found by name: which module renders which record.

Each public module of the package claims the record names in its `STEMS`; a record named
`<stem>_<anything>` (another run of the same program) belongs to the longest stem it extends.
"""

import importlib
import pkgutil

from benchmarks import reports


def families(package=reports):
    """Every family module of `package` (`benchmarks.reports`), by each record name it claims.

    Raises:
        ValueError: when two modules claim the same name.
    """
    claimed = {}
    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for stem in module.STEMS:
            if stem in claimed:
                raise ValueError(
                    f"record name {stem!r} is claimed by {claimed[stem].__name__} and "
                    f"{module.__name__}"
                )
            claimed[stem] = module
    return claimed


FAMILIES = families()
RENDERERS = {stem: module.render for stem, module in FAMILIES.items() if hasattr(module, "render")}
HEADLINES = {
    stem: module.headline for stem, module in FAMILIES.items() if hasattr(module, "headline")
}
# Records that hold part of one program's run at its defaults, split over runs (`--studies`,
# `--starts`): summarised beside the program's own record, unlike other variants.
SUMMARY_PARTS = {
    stem for module in FAMILIES.values() for stem in getattr(module, "SUMMARY_PARTS", ())
}


def base_name(table, stem):
    """The name in `table` that record `stem` is a run of (itself, or the longest it extends)."""
    if stem in table:
        return stem
    bases = [name for name in table if stem.startswith(name + "_")]
    return max(bases, key=len) if bases else None


def for_record(table, stem):
    """The entry for a record named `stem`: its own, or that of the longest name it extends.

    `transfer_pre_ln` is a `transfer` record (another run of the same program, kept beside
    the first), `lab01_pretraining_pre_ln_masked` a `lab01_pretraining` one.
    """
    base = base_name(table, stem)
    return None if base is None else table[base]
