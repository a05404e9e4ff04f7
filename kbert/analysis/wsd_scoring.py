"""Scoring WSD predictions per evaluation set of Raganato et al.'s unified framework: each set,
ALL (their concatenation, the field's headline) and ALL without one set (the development set a
variant was chosen on), each pooled by instance as the framework's scorer does.

An ALL instance names its set in its id ("senseval2.d000.s000.t000"). A set's row holds its
instance count, the F1 of WordNet's first sense (MFS), each variant's F1 and the share of
instances the "corpus" variant answered from a sense seen in training.
"""

from collections import Counter

from kbert.data.raganato import wsd_scores

# "ALL_minus_semeval2007": ALL without the development set's instances, scored as ALL is.
HELD_OUT_PREFIX = "ALL_minus_"


def set_name(instance):
    """The evaluation set of an ALL instance: its id's first part ("senseval2.d000.s000.t000")."""
    return instance.id.split(".")[0]


def set_rows(instances, rows, name):
    """The rows of `rows` that set `name` scores: all of them for "ALL", all but those of <set>
    for "ALL_minus_<set>", and a single set's own otherwise."""
    if name == "ALL":
        return list(rows)
    if name.startswith(HELD_OUT_PREFIX):
        left_out = name.removeprefix(HELD_OUT_PREFIX)
        return [i for i in rows if set_name(instances[i]) != left_out]
    return [i for i in rows if set_name(instances[i]) == name]


def score_set(instances, rows, predictions, mfs, position):
    """One set's row of the WSD table: its instances, the MFS F1, each variant's F1 and the % of
    instances the corpus variant answered from a seen sense. The framework's scorer pools the
    rows, so a union of sets (ALL, ALL minus a set) is weighted by instances, not by set.

    `predictions` maps a variant to its predictions in test-row order; `position` maps a row of
    `instances` to its place in that order; `mfs` is `{instance id: WordNet's first sense}`."""
    gold = {instances[i].id: set(instances[i].gold_keys) for i in rows}
    row = {
        "instances": len(rows),
        "mfs_f1": round(wsd_scores({k: mfs[k] for k in gold if mfs.get(k)}, gold)["f1"], 2),
    }
    for variant, chosen in predictions.items():
        ours = {
            instances[i].id: chosen[position[i]].key
            for i in rows
            if chosen[position[i]].key is not None
        }
        row[variant] = round(wsd_scores(ours, gold)["f1"], 2)
    nearest = Counter(predictions["corpus"][position[i]].source for i in rows)["nearest"]
    row["corpus_nearest_pct"] = round(100 * nearest / len(rows), 1)
    return row


def score_sets(instances, test_rows, predictions, mfs, names):
    """`{set name: score_set's row}` for each of `names` (see `set_rows`), over the test rows."""
    position = {row: n for n, row in enumerate(test_rows)}
    return {
        name: score_set(instances, set_rows(instances, test_rows, name), predictions, mfs, position)
        for name in names
    }
