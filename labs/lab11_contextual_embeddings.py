"""Lab 11: what is in a contextual representation: word senses, anisotropy, probes, pictures.

Reproduces J&M §11.3 (contextual embeddings; word sense disambiguation by the nearest sense
embedding, §11.3.1; similarity and anisotropy, §11.3.2) and the NAACL 2019 tutorial's §3 ("What
is in a representation?": visualisation, probes, layer-wise analysis) with the pretrained
MiniLM-L6 (a 6-layer uncased BERT):

1. WSD, the Raganato et al. (2017) framework, trained on SemCor 3.0 (J&M §11.3.1): a sense
   embedding is the average contextual vector (mean of the last 4 layers, subwords averaged) of
   its 226,036 SemCor occurrences, from one encoder pass per sentence (sentences sorted by
   length, cached on disk; the pass's time is in the record); a test word takes the candidate WordNet sense
   whose embedding is nearest by cosine, and WordNet's first sense (MFS) only when no sense of
   its lemma was seen. Then full coverage (Loureiro & Jorge 2019, LMMS): every WordNet sense of
   the test lemmas gets a vector from its gloss (synset lemmas + definition + examples, mean of
   the subword vectors) and/or from its WordNet neighbours (synset, hypernyms, lexicographer
   class). Every variant is scored in z-scored space (J&M §11.3.2: the few rogue dimensions of
   part 2 otherwise dominate the cosine), with one not-z-scored row to show the difference; the
   gloss part's weight (0.5, 0.75, 1) and the variant reported in the JSON's "wsd_f1" are chosen
   on SemEval-2007, the framework's usual development set. Scored with the framework's F1 on all
   five sets, on ALL without SemEval-2007 (the four sets the choice never saw; the number the lab
   leads with) and on ALL (the field's convention, which includes SemEval-2007), next to the MFS
   baseline. Without SemCor in the data directory the sense embeddings come from Senseval-2 + -3
   and the test sets are the other three.
2. Anisotropy per layer: the expected cosine of two random words from different sentences
   (Ethayarajh 2019), the share of it that the top 3 "rogue" dimensions carry (Timkey & van
   Schijndel 2021), both before and after z-scoring each dimension; and a word-in-context check:
   do two occurrences of a lemma with the same WordNet sense have a higher cosine than two with
   different senses (AUC), raw and z-scored.
3. Probes: a linear classifier per layer on frozen word vectors (first subword) for POS and NER
   tags of CoNLL-2003, against the same architecture with random weights (the control); at 3
   seeds (fresh probes and a fresh random control each), with the seed-paired difference per
   layer (`kbert.metrics.seed_comparison`).
4. Figures (PNG, under the run directory): a polysemous word's vectors coloured by sense (PCA and
   t-SNE), an attention grid (layers x heads) for one sentence, anisotropy per layer before and
   after z-scoring, probe accuracy per layer against the control.

What the sources claim: contextual vectors are anisotropic, a few rogue dimensions carrying
most of the expected cosine of random words (Ethayarajh 2019; Timkey & van Schijndel 2021), and
z-scoring removes it; contextual vectors separate word senses (WSD above WordNet's first
sense); POS and NER are linearly decodable from the hidden layers far above a random-weight
control. What the record found with MiniLM-L6 is rendered from it at
docs/results.md#lab11_contextual_embeddings. `--max-train-sentences 2000` takes a quick look.

    python labs/lab11_contextual_embeddings.py --record docs/results/lab11_contextual_embeddings.json
    python labs/lab11_contextual_embeddings.py --max-train-sentences 2000 --probe-train-sentences 500
"""

import argparse
import dataclasses
import json
import time
from collections import Counter, defaultdict
from pathlib import Path

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import keras
import numpy as np

from kbert.analysis.anisotropy import (
    ZScorer,
    layer_anisotropy,
    word_in_context_similarity,
)
from kbert.analysis.attention import sentence_attention
from kbert.analysis.contextual_embeddings import contextual_embeddings
from kbert.analysis.figures import (
    attention_grid_png,
    layer_curves_png,
    sense_projection_png,
)
from kbert.analysis.probing import (
    layerwise_probe_accuracy,
    majority_accuracy,
    random_encoder_like,
)
from kbert.analysis.projection import pca_2d, tsne_2d
from kbert.analysis.sense_training import (
    corpus_sense_embeddings,
    gloss_sense_embeddings,
)
from kbert.analysis.wsd import (
    COVERAGE_SOURCES,
    NearestSenseWSD,
    SenseEmbeddings,
    concatenate_sense_embeddings,
    fill_sense_embeddings,
    mfs_predictions,
    propagate_sense_embeddings,
    unit_rows,
)
from kbert.analysis.wsd_scoring import HELD_OUT_PREFIX, score_sets, set_name
from kbert.checkpoints import load_pretrained
from kbert.data.conll2003 import CONLL2003_TAGS, read_conll2003
from kbert.data.data_dir import data_dir
from kbert.data.raganato import WSD_EVALUATION_SETS, load_wsd_set, wsd_scores
from kbert.data.semcor import load_semcor
from kbert.data.wordnet import load_wordnet
from kbert.metrics.seed_comparison import mean_sd, paired_difference
from kbert.run_records import add_record_argument, write_run_record
from kbert.text import BertPreprocessor

ATTENTION_SENTENCE = "The fishermen sat on the bank of the river and watched the boats."
SHORT_SET_NAMES = {
    "senseval2": "SE2",
    "senseval3": "SE3",
    "semeval2007": "SE07",
    "semeval2013": "SE13",
    "semeval2015": "SE15",
}


def embed(encoder, tokenizer, sentences, args, layers="all", pooling="mean"):
    return contextual_embeddings(
        encoder,
        tokenizer,
        sentences,
        layers=layers,
        subword_pooling=pooling,
        batch_size=args.batch_size,
        cache_dir=args.run_dir / "cache",
        progress=args.verbose,
    )


def instance_vectors(embeddings, corpus):
    """The vector of every instance of a WSD corpus, in the order of `corpus.instances`."""
    return np.stack(
        [
            embeddings.word(instance.sentence_index, instance.word_index)
            for instance in corpus.instances
        ]
    )


# %% 1. Word sense disambiguation by the nearest sense embedding, against WordNet's first sense.
def set_label(name, train_sets):
    """A set's column in the printed table: ALL and ALL minus a set say what they leave out."""
    left_out = [SHORT_SET_NAMES[train_set] for train_set in train_sets]
    if name.startswith(HELD_OUT_PREFIX):
        left_out.append(SHORT_SET_NAMES[name.removeprefix(HELD_OUT_PREFIX)])
    elif name != "ALL":
        return name
    return "-".join(["ALL", *left_out])


def print_reported(results, best, development, labels):
    """The reported variant's F1, led by the sets its choice never saw (ALL without the
    development set), with ALL beside it as the field reports it."""
    every = results["ALL"]
    on_all = f"{labels['ALL']} {every[best]:.2f} (MFS {every['mfs_f1']:.2f})"
    held_out = HELD_OUT_PREFIX + development
    if held_out not in results:
        print(f"* reported variant: best F1 on {development}; F1 on {on_all}")
        return
    print(
        f"* reported variant: best F1 on {development} (the development set). Not used for the "
        f"choice: F1 {results[held_out][best]:.2f} on {labels[held_out]} (ALL without "
        f"{development}; MFS {results[held_out]['mfs_f1']:.2f}); the field's convention, "
        f"{development} included: {on_all}"
    )


def training_corpus(everything, args):
    """SemCor 3.0 (the framework's training corpus), or Senseval-2 + -3 taken out of ALL."""
    if args.train_corpus != "senseval":
        try:  # "auto" uses SemCor only when the data directory has it; "semcor" may download it
            semcor = load_semcor(
                args.data_dir,
                download=args.train_corpus == "semcor",
                max_sentences=args.max_train_sentences,
            )
            return semcor, ()
        except ValueError:
            if args.train_corpus == "semcor":
                raise
    train_sets = ("senseval2", "senseval3")
    train = everything.without_sets(
        [name for name in WSD_EVALUATION_SETS if name not in train_sets]
    )
    return dataclasses.replace(train, name="senseval2+senseval3"), train_sets


def wsd_variants(senses, glosses, wordnet, keys, gloss_weight):
    """The sense inventories compared, as `{name: (senses, repeat)}`: the corpus alone, then full
    coverage by glosses, by WordNet neighbours (LMMS-1024), and by both (LMMS-2048), the gloss
    part weighted by `gloss_weight`; `repeat` is how many unit copies of a test vector query the
    (concatenated) sense vectors."""
    with_glosses, _ = fill_sense_embeddings(senses, glosses)
    propagated, sources = propagate_sense_embeddings(senses, wordnet, keys)
    weights = (1.0, gloss_weight)
    return {
        "corpus": (senses, 1),
        "corpus+glosses": (concatenate_sense_embeddings(with_glosses, glosses, weights=weights), 2),
        "corpus+neighbours": (propagated, 1),
        "corpus+neighbours+glosses": (
            concatenate_sense_embeddings(propagated, glosses, weights=weights),
            2,
        ),
    }, sources


def standardized(senses, zscorer):
    return SenseEmbeddings(senses.keys, zscorer.transform(senses.matrix), senses.counts)


def wsd_section(encoder, tokenizer, wordnet, args):
    everything = load_wsd_set("ALL", args.data_dir)
    all_layers = instance_vectors(
        embed(encoder, tokenizer, [s.words for s in everything.sentences], args), everything
    )  # (instances, layers, dim)
    last4 = all_layers[:, -4:].mean(axis=1)
    train, train_sets = training_corpus(everything, args)
    test_rows = [
        i for i, instance in enumerate(everything.instances) if set_name(instance) not in train_sets
    ]

    # The sense embeddings: one encoder pass over each training sentence, sentences by length,
    # and each dimension's mean and deviation over the training occurrences (for z-scoring).
    start = time.perf_counter()
    raw_senses, zscorer = corpus_sense_embeddings(
        encoder,
        tokenizer,
        train,
        inventory=wordnet,
        batch_size=args.batch_size,
        cache_dir=args.run_dir / "cache",
        progress=args.verbose,
        return_zscorer=True,
    )
    train_seconds = time.perf_counter() - start
    # Full coverage: every WordNet sense of every test lemma gets a gloss vector.
    keys = sorted(
        {
            key
            for i in test_rows
            for key in wordnet.senses(everything.instances[i].lemma, everything.instances[i].pos)
        }
    )
    start = time.perf_counter()
    raw_glosses = gloss_sense_embeddings(
        encoder,
        tokenizer,
        wordnet,
        keys,
        batch_size=args.batch_size,
        cache_dir=args.run_dir / "cache",
    )
    gloss_seconds = time.perf_counter() - start
    # J&M §11.3.2: z-score each dimension (glosses with their own statistics: a gloss vector is a
    # mean over a whole definition, not one word in context).
    senses = standardized(raw_senses, zscorer)
    glosses = standardized(raw_glosses, ZScorer().fit(raw_glosses.matrix))
    lemmas = [everything.instances[i].lemma for i in test_rows]
    tags = [everything.instances[i].pos for i in test_rows]
    queries = {
        "raw": unit_rows(last4[test_rows]),
        "z": unit_rows(zscorer.transform(last4[test_rows])),
    }
    inventories = {"corpus, not z-scored": (raw_senses, 1, "raw")}
    for weight in args.gloss_weights:
        variants, sources = wsd_variants(senses, glosses, wordnet, keys, weight)
        for name, (inventory, repeat) in variants.items():
            shown = name if "glosses" not in name else f"{name} x{weight:g}"
            inventories.setdefault(shown, (inventory, repeat, "z"))
    predictions = {}
    for name, (inventory, repeat, space) in inventories.items():
        query = np.concatenate([queries[space]] * repeat, axis=1)
        predictions[name] = NearestSenseWSD(inventory, wordnet).predict(query, lemmas, tags)
    mfs = mfs_predictions(everything, wordnet)
    test_sets = [name for name in WSD_EVALUATION_SETS if name not in train_sets]
    # The reported variant (and gloss weight) is chosen on SemEval-2007, the framework's usual
    # development set; ties go to the simpler variant (fewer parts, then the lower weight). ALL
    # includes SemEval-2007 (the field reports it so); ALL without it is what the choice never saw.
    development = "semeval2007" if "semeval2007" in test_sets else "ALL"
    held_out = [] if development == "ALL" else [HELD_OUT_PREFIX + development]
    results = score_sets(
        everything.instances, test_rows, predictions, mfs, test_sets + held_out + ["ALL"]
    )
    chosen = [name for name in inventories if name != "corpus, not z-scored"]
    best = max(chosen, key=lambda name: (results[development][name], -chosen.index(name)))

    label = "ALL" if not train_sets else "ALL minus SE2, SE3"
    covered = Counter(sources.values())
    print(
        f"\nWSD: sense embeddings from {train.name} ({len(train.sentences):,} sentences, "
        f"{len(train.instances):,} instances, {len(raw_senses):,} senses; {train_seconds:.0f} s)"
        f"; {len(keys):,} WordNet senses of the test lemmas, glosses embedded in "
        f"{gloss_seconds:.0f} s; neighbours: "
        + ", ".join(f"{covered[source]:,} {source}" for source in COVERAGE_SOURCES)
    )
    sets = list(results)
    labels = {name: set_label(name, train_sets) for name in sets}
    shown_sets = [labels[name] for name in sets]
    print(
        "F1 (framework scorer) per set; 'corpus' falls back to MFS where no sense of a lemma "
        "was seen; xW = weight of the gloss part"
    )
    print(f"{'variant':<34}" + "".join(f"{name[:17]:>18}" for name in shown_sets))
    print(f"{'(instances)':<34}" + "".join(f"{results[name]['instances']:>18}" for name in sets))
    for variant in inventories:
        mark = " *" if variant == best else ""
        print(
            f"{variant + mark:<34}" + "".join(f"{results[name][variant]:>18.2f}" for name in sets)
        )
    print(
        f"{'MFS (WordNet first sense)':<34}"
        + "".join(f"{results[name]['mfs_f1']:>18.2f}" for name in sets)
    )
    print(
        f"{'corpus covers (% of instances)':<34}"
        + "".join(f"{results[name]['corpus_nearest_pct']:>18.1f}" for name in sets)
    )
    print_reported(results, best, development, labels)
    summary = {
        "variant": best,
        "development_set": development,
        "train_corpus": train.name,
        "train_sentences": len(train.sentences),
        "train_instances": len(train.instances),
        "sense_embeddings": len(raw_senses),
        "test_lemma_senses": len(keys),
        "coverage": {source: covered[source] for source in COVERAGE_SOURCES},
        "gloss_weights": list(args.gloss_weights),
        "train_seconds": round(train_seconds, 1),
        "gloss_seconds": round(gloss_seconds, 1),
        "sets": results,
    }
    if train_sets:  # the same on each single layer (training vectors of every layer exist)
        train_rows = [i for i in range(len(everything.instances)) if i not in set(test_rows)]
        train_keys = [everything.instances[i].gold_keys for i in train_rows]
        gold = {
            everything.instances[i].id: set(everything.instances[i].gold_keys) for i in test_rows
        }
        by_layer = []
        for layer in range(all_layers.shape[1]):
            layer_model = NearestSenseWSD(
                SenseEmbeddings.fit(all_layers[train_rows, layer], train_keys, inventory=wordnet),
                wordnet,
            )
            layer_predictions = layer_model.predict(all_layers[test_rows, layer], lemmas, tags)
            ours = {
                everything.instances[i].id: p.key
                for i, p in zip(test_rows, layer_predictions, strict=True)
                if p.key
            }
            by_layer.append(round(wsd_scores(ours, gold)["f1"], 2))
        summary["corpus_f1_by_layer"] = by_layer
        print(
            f"{label}, corpus variant one layer at a time: "
            + "  ".join(f"L{layer} {f1:.2f}" for layer, f1 in enumerate(by_layer))
        )
    return summary, everything, all_layers


# %% 2. Anisotropy per layer, and what z-scoring does to it and to word-in-context similarity.
def anisotropy_section(encoder, tokenizer, wsd_corpus, wsd_vectors, args):
    sentences = [
        s.words
        for s in read_conll2003(
            "validation", args.data_dir, max_sentences=args.anisotropy_sentences
        )
    ]
    embeddings = embed(encoder, tokenizer, sentences, args)
    per_layer = layer_anisotropy(
        embeddings.vectors, groups=embeddings.sentence_index, num_pairs=args.pairs, seed=args.seed
    )
    # Word in context: pairs of occurrences of one lemma, same sense or not (gold WordNet keys).
    lemma_ids = _ids([f"{i.lemma}/{i.pos}" for i in wsd_corpus.instances])
    sense_ids = _ids([min(i.gold_keys) for i in wsd_corpus.instances])
    for layer, row in enumerate(per_layer):
        raw = wsd_vectors[:, layer]
        row["wic_auc"] = word_in_context_similarity(raw, lemma_ids, sense_ids, seed=args.seed)[
            "auc"
        ]
        standardized = ZScorer().fit(embeddings.vectors[:, layer]).transform(raw)
        row["wic_auc_z"] = word_in_context_similarity(
            standardized, lemma_ids, sense_ids, seed=args.seed
        )["auc"]
    print(
        f"\nAnisotropy ({len(embeddings)} words of {len(sentences)} CoNLL-2003 sentences; "
        f"word in context: {len(wsd_corpus.instances)} WSD instances)"
    )
    print(
        f"{'layer':<7}{'E[cos]':>8}{'z-scored':>10}{'top-3 dims share':>18}{'z-scored':>10}"
        f"{'WiC AUC':>9}{'z-scored':>10}"
    )
    for layer, row in enumerate(per_layer):
        print(
            f"{layer:<7}{row['expected_cosine']:>8.3f}{row['expected_cosine_z']:>10.3f}"
            f"{row['rogue_share']:>18.3f}{row['rogue_share_z']:>10.3f}"
            f"{row['wic_auc']:>9.3f}{row['wic_auc_z']:>10.3f}"
        )
    return per_layer


# %% 3. Linear probes per layer for POS and NER, against a randomly initialised control.
# Each seed trains fresh probes on the pretrained encoder's words and draws a fresh random
# encoder to probe: mean ± sd per layer, and the seed-paired difference (pretrained − random).
def probe_features(model, tokenizer, train, test, args):
    return {
        split: embed(model, tokenizer, [s.words for s in sentences], args, pooling="first").vectors
        for split, sentences in (("train", train), ("test", test))
    }


def probe_runs(features, train, test, tasks, seed):
    """`{task: per-layer test accuracy %}` of one seed's probes on `features`."""
    runs = {}
    for task, (names, field) in tasks.items():
        index = {tag: i for i, tag in enumerate(names)}

        def labels(sentences, field=field, index=index):
            return np.array([index[tag] for s in sentences for tag in getattr(s, field)])

        accuracy = layerwise_probe_accuracy(
            features["train"], labels(train), features["test"], labels(test), len(names), seed=seed
        )
        runs[task] = [round(100 * a, 2) for a in accuracy]
    return runs


def probe_summary(runs, tasks):
    """Per task and start: the per-layer mean and sd over seeds (`<task>_<start>`,
    `<task>_<start>_sd`), the runs, and per layer the seed-paired pretrained − random
    difference in points (`<task>_difference`)."""
    results = {}
    for task in tasks:
        for name in ("pretrained", "random"):
            seeds = [run[task] for run in runs[name]]
            per_layer = [mean_sd(values) for values in zip(*seeds, strict=True)]
            results[f"{task}_{name}"] = [round(mean, 2) for mean, _ in per_layer]
            results[f"{task}_{name}_sd"] = [
                None if sd is None else round(sd, 2) for _, sd in per_layer
            ]
            results[f"{task}_{name}_runs"] = seeds
        results[f"{task}_difference"] = [
            paired_difference(list(pretrained), list(random))
            for pretrained, random in zip(
                zip(*results[f"{task}_pretrained_runs"], strict=True),
                zip(*results[f"{task}_random_runs"], strict=True),
                strict=True,
            )
        ]
    return results


def probing_section(encoder, tokenizer, args):
    train = read_conll2003("train", args.data_dir, max_sentences=args.probe_train_sentences)
    test = read_conll2003("test", args.data_dir, max_sentences=args.probe_test_sentences)
    pos_names = sorted({tag for s in train + test for tag in s.pos_tags})
    tasks = {"pos": (pos_names, "pos_tags"), "ner": (list(CONLL2003_TAGS), "tags")}
    start = time.perf_counter()
    pretrained = probe_features(encoder, tokenizer, train, test, args)
    seeds = range(args.seed, args.seed + args.probe_seeds)
    runs = {"pretrained": [], "random": []}
    for seed in seeds:
        runs["pretrained"].append(probe_runs(pretrained, train, test, tasks, seed))
        control = random_encoder_like(encoder, seed=seed)
        random = probe_features(control, tokenizer, train, test, args)
        runs["random"].append(probe_runs(random, train, test, tasks, seed))
        del control, random
    if args.verbose:
        print(f"probes, {len(seeds)} seed(s): {time.perf_counter() - start:.1f} s")
    results = probe_summary(runs, tasks)
    for task, (names, field) in tasks.items():
        index = {tag: i for i, tag in enumerate(names)}
        train_ids, test_ids = (
            [index[tag] for s in sentences for tag in getattr(s, field)]
            for sentences in (train, test)
        )
        results[f"{task}_majority"] = round(100 * majority_accuracy(train_ids, test_ids), 2)
    results["seeds"] = len(seeds)
    words = (sum(len(s.words) for s in train), sum(len(s.words) for s in test))
    print(
        f"\nLinear probes, test accuracy % per layer (CoNLL-2003: {words[0]} train words, "
        f"{words[1]} test words; first subword), mean over {len(seeds)} seed(s); the last row "
        "of each task is pretrained − random, paired by seed"
    )
    layers = len(results["pos_pretrained"])
    print(f"{'probe':<16}" + "".join(f"{f'L{i}':>8}" for i in range(layers)) + f"{'majority':>10}")
    for task in tasks:
        for name in ("pretrained", "random"):
            values = results[f"{task}_{name}"]
            print(
                f"{task + ' ' + name:<16}"
                + "".join(f"{v:>8.2f}" for v in values)
                + f"{results[f'{task}_majority']:>10.2f}"
            )
        differences = results[f"{task}_difference"]
        print(
            f"{task + ' difference':<16}"
            + "".join(f"{d['mean']:>+8.2f}" for d in differences)
            + "  ("
            + ", ".join(sorted({d["verdict"] for d in differences}))
            + ")"
        )
    return results


# %% 4. Pictures.
def polysemous_lemma(corpus, min_per_sense=4):
    """The lemma with the most instances over at least 3 senses of `min_per_sense` or more."""
    by_lemma = defaultdict(lambda: defaultdict(list))
    for row, instance in enumerate(corpus.instances):
        by_lemma[(instance.lemma, instance.pos)][min(instance.gold_keys)].append(row)
    best = None
    for lemma, senses in by_lemma.items():
        kept = {key: rows for key, rows in senses.items() if len(rows) >= min_per_sense}
        count = sum(len(rows) for rows in kept.values())
        if len(kept) >= 3 and (best is None or count > best[0]):
            best = (count, lemma, kept)
    return best


def figures(encoder, tokenizer, wordnet, corpus, wsd_vectors, anisotropy, probes, args):
    paths = []
    chosen = polysemous_lemma(corpus)
    if chosen is not None:
        _, (lemma, pos), senses = chosen
        rows = [row for key_rows in senses.values() for row in key_rows]
        labels = [key for key, key_rows in senses.items() for _ in key_rows]
        vectors = wsd_vectors[rows][:, -4:].mean(axis=1)
        names = {key: f"{key.split('%')[1]}: {wordnet.gloss(key)[:40]}" for key in senses}
        points, _ = pca_2d(vectors)
        paths.append(
            sense_projection_png(
                points,
                labels,
                args.run_dir / "senses_pca.png",
                title=f'"{lemma}" ({pos}) by WordNet sense, PCA',
                label_names=names,
            )
        )
        points = tsne_2d(vectors, perplexity=min(30.0, (len(rows) - 1) / 3), seed=args.seed)
        paths.append(
            sense_projection_png(
                points,
                labels,
                args.run_dir / "senses_tsne.png",
                title=f'"{lemma}" ({pos}) by WordNet sense, t-SNE',
                label_names=names,
            )
        )
    preprocessor = BertPreprocessor(tokenizer, sequence_length=64)
    maps, tokens = sentence_attention(encoder, preprocessor, tokenizer, ATTENTION_SENTENCE)
    paths.append(
        attention_grid_png(
            maps,
            tokens,
            args.run_dir / "attention.png",
            title="MiniLM-L6 attention, layers x heads",
        )
    )
    curves = {
        "expected cosine": [row["expected_cosine"] for row in anisotropy],
        "expected cosine, z-scored": [row["expected_cosine_z"] for row in anisotropy],
        "top-3 dims share": [row["rogue_share"] for row in anisotropy],
        "top-3 dims share, z-scored": [row["rogue_share_z"] for row in anisotropy],
    }
    paths.append(
        layer_curves_png(
            curves,
            args.run_dir / "anisotropy.png",
            title="Anisotropy per layer (CoNLL-2003 words)",
            ylabel="cosine / share",
        )
    )
    curves = {
        f"{task.upper()} {name}": probes[f"{task}_{name}"]
        for task in ("pos", "ner")
        for name in ("pretrained", "random")
    }
    styles = {name: {"linestyle": "--"} for name in curves if name.endswith("random")}
    paths.append(
        layer_curves_png(
            curves,
            args.run_dir / "probes.png",
            styles=styles,
            title="Linear probes per layer vs a random-weight control",
            ylabel="test accuracy (%)",
        )
    )
    print("\nFigures:\n" + "\n".join(f"  {path}" for path in paths))
    return paths


def _ids(values):
    index = {}
    return np.array([index.setdefault(value, len(index)) for value in values])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="minilm_l6")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument(
        "--wordnet-dir",
        default=None,
        help="WordNet 3.0 folder (default: KBERT_WORDNET_DIR or Debian's "
        "/usr/share/wordnet from the wordnet-base package)",
    )
    parser.add_argument(
        "--train-corpus",
        choices=["auto", "semcor", "senseval"],
        default="auto",
        help="WSD training data: SemCor 3.0 if the data directory has it, else "
        "Senseval-2 + Senseval-3 (auto); SemCor, downloading it if needed "
        "(semcor); Senseval-2 + Senseval-3 (senseval)",
    )
    parser.add_argument(
        "--gloss-weights",
        type=float,
        nargs="+",
        default=[0.5, 0.75, 1.0],
        help="weights of the gloss part tried (the reported one is chosen on SemEval-2007)",
    )
    parser.add_argument(
        "--max-train-sentences",
        type=int,
        default=None,
        help="read only this many SemCor sentences (a quick look; default: all 37,176)",
    )
    parser.add_argument("--run-dir", default="runs/lab11_contextual_embeddings")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--anisotropy-sentences", type=int, default=1000)
    parser.add_argument("--pairs", type=int, default=20000, help="random word pairs per layer")
    parser.add_argument("--probe-train-sentences", type=int, default=3000)
    parser.add_argument("--probe-test-sentences", type=int, default=1000)
    parser.add_argument(
        "--probe-seeds",
        type=int,
        default=3,
        help="probe seeds (seed, seed + 1, ...): fresh probes and a fresh random control each",
    )
    parser.add_argument("--seed", type=int, default=0)
    add_record_argument(parser)  # also pins the files the run reads
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    args.run_dir = Path(args.run_dir)
    args.run_dir.mkdir(parents=True, exist_ok=True)
    args.data_dir = data_dir(args.data_dir)
    keras.utils.set_random_seed(args.seed)
    start = time.perf_counter()

    # %% The pretrained encoder, its tokenizer and the WordNet 3.0 sense inventory.
    encoder, tokenizer = load_pretrained(args.model)
    wordnet = load_wordnet(args.wordnet_dir)
    wsd, corpus, wsd_vectors = wsd_section(encoder, tokenizer, wordnet, args)
    anisotropy = anisotropy_section(encoder, tokenizer, corpus, wsd_vectors, args)
    probes = probing_section(encoder, tokenizer, args)
    figures(encoder, tokenizer, wordnet, corpus, wsd_vectors, anisotropy, probes, args)
    summary = {
        "wsd_f1": {name: row[wsd["variant"]] for name, row in wsd["sets"].items()},
        "mfs_f1": {name: row["mfs_f1"] for name, row in wsd["sets"].items()},
        "wsd": wsd,
        "expected_cosine": [round(row["expected_cosine"], 4) for row in anisotropy],
        "expected_cosine_z": [round(row["expected_cosine_z"], 4) for row in anisotropy],
        "rogue_share": [round(row["rogue_share"], 4) for row in anisotropy],
        "wic_auc": [round(row["wic_auc"], 4) for row in anisotropy],
        "wic_auc_z": [round(row["wic_auc_z"], 4) for row in anisotropy],
        "probes": probes,
        "seconds": round(time.perf_counter() - start, 1),
    }
    (args.run_dir / "results.json").write_text(json.dumps(summary, indent=2))
    if args.record:
        write_run_record(args.record, summary, summary["seconds"])
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
