"""All-words word-sense disambiguation: Raganato et al. (2017)'s unified evaluation framework.

Five English all-words test sets (Senseval-2, Senseval-3, SemEval-2007, -2013, -2015) with
WordNet 3.0 gold sense keys, their concatenation "ALL", and the SemCor training corpus in the
same format, plus the framework's scorer (its `Scorer.java`) as `wsd_scores`.
"""

import dataclasses
import xml.etree.ElementTree as ElementTree

from kbert.data.data_dir import locate

WSD_EVALUATION_SETS = ("senseval2", "senseval3", "semeval2007", "semeval2013", "semeval2015")
_NAMES = WSD_EVALUATION_SETS + ("ALL", "semcor")
_URL = "http://lcl.uniroma1.it/wsdeval/data/WSD_Evaluation_Framework.zip"


def _member(name):
    """Returns the archive path of a set, without the `.data.xml` / `.gold.key.txt` suffix."""
    if name == "semcor":
        return "WSD_Evaluation_Framework/Training_Corpora/SemCor/semcor"
    return f"WSD_Evaluation_Framework/Evaluation_Datasets/{name}/{name}"


@dataclasses.dataclass(frozen=True)
class WsdSentence:
    """One sentence: its surface words with their lemmas and universal POS tags.

    Args:
        id: str. The sentence id, e.g. "d000.s000".
        words: tuple of str. Surface words as in the corpus; a multiword such as
            "change-ringing" or "New York" is one word.
        lemmas: tuple of str, one per word.
        pos: tuple of str, one universal tag per word ("NOUN", "VERB", "ADJ", "ADV", "DET", ...).

    Example:
    >>> sentence = WsdSentence("d000.s000", ("The", "art"), ("the", "art"), ("DET", "NOUN"))
    >>> sentence.words[1], sentence.pos[1]
    ('art', 'NOUN')
    """

    id: str
    words: tuple
    lemmas: tuple
    pos: tuple


@dataclasses.dataclass(frozen=True)
class WsdInstance:
    """One word to disambiguate, with its gold sense keys.

    Args:
        id: str. The instance id, the key of the gold file, e.g. "d000.s000.t000".
        sentence_index: int. Index of its sentence in `WsdCorpus.sentences`.
        word_index: int. Index of the word in that sentence's `words`.
        lemma: str.
        pos: str. "NOUN", "VERB", "ADJ" or "ADV".
        gold_keys: tuple of str. WordNet sense keys; any one of them counts as correct.

    Example:
    >>> instance = WsdInstance("d000.s000.t000", 0, 1, "art", "NOUN", ("art%1:09:00::",))
    >>> instance.gold_keys[0]
    'art%1:09:00::'
    """

    id: str
    sentence_index: int
    word_index: int
    lemma: str
    pos: str
    gold_keys: tuple


@dataclasses.dataclass(frozen=True)
class WsdCorpus:
    """A sense-annotated corpus: sentences, and the instances to disambiguate in them.

    Args:
        name: str. E.g. "senseval2", "ALL".
        sentences: tuple of `WsdSentence`.
        instances: tuple of `WsdInstance`, in corpus order.
        source: str. The XML file the corpus was read from.

    Example:
    >>> sentence = WsdSentence("d0.s0", ("art",), ("art",), ("NOUN",))
    >>> instance = WsdInstance("d0.s0.t0", 0, 0, "art", "NOUN", ("art%1:09:00::",))
    >>> WsdCorpus("toy", (sentence,), (instance,), "toy.data.xml").gold()
    {'d0.s0.t0': {'art%1:09:00::'}}
    """

    name: str
    sentences: tuple
    instances: tuple
    source: str

    def gold(self):
        """Returns the gold answers as the scorer takes them.

        Returns:
            A dict `{instance id: set of sense keys}`, in corpus order.
        """
        return {instance.id: set(instance.gold_keys) for instance in self.instances}

    def without_sets(self, names):
        """Returns the corpus without the instances of some sets, e.g. ALL minus training sets.

        An instance belongs to set `name` when its id starts with `name.`, as ALL's ids do
        ("senseval2.d000.s000.t000"). Sentences left with no instance are dropped, and the
        kept instances' `sentence_index` re-counted.

        Args:
            names: str or iterable of str. Set names, e.g. ("senseval2", "senseval3").

        Returns:
            A new `WsdCorpus`, named e.g. "ALL-without-senseval2+senseval3".

        Raises:
            ValueError: a name that starts no instance id (a typo would otherwise remove
                nothing).

        Example:
        >>> load_wsd_set("ALL").without_sets(["semeval2007"])  # doctest: +SKIP
        """
        names = (names,) if isinstance(names, str) else tuple(names)
        present = {instance.id.split(".", 1)[0] for instance in self.instances}
        for name in names:
            if name not in present:
                raise ValueError(
                    f"no instance id of corpus {self.name!r} starts with "
                    f"{name + '.'!r}; expected set names among {sorted(present)}"
                )
        prefixes = tuple(f"{name}." for name in names)
        kept = [instance for instance in self.instances if not instance.id.startswith(prefixes)]
        old_indices = sorted({instance.sentence_index for instance in kept})
        new_index = {old: new for new, old in enumerate(old_indices)}
        instances = tuple(
            dataclasses.replace(instance, sentence_index=new_index[instance.sentence_index])
            for instance in kept
        )
        sentences = tuple(self.sentences[old] for old in old_indices)
        return WsdCorpus(
            f"{self.name}-without-{'+'.join(names)}", sentences, instances, self.source
        )


def _read_gold(path):
    """Returns `{instance id: tuple of keys}` from a `.gold.key.txt` file."""
    gold = {}
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) < 2:
                raise ValueError(
                    f"{path}:{number}: expected `instance_id key [key ...]`; found "
                    f"{line.strip()[:80]!r}"
                )
            if fields[0] in gold:
                raise ValueError(
                    f"{path}:{number}: instance {fields[0]!r} appears twice; "
                    "expected one line per instance"
                )
            gold[fields[0]] = tuple(fields[1:])
    return gold


def _attribute(element, name, path, where):
    value = element.get(name)
    if value is None:
        raise ValueError(
            f"{path}: {where}: <{element.tag}> has no {name!r} attribute; expected "
            "id, lemma and pos on every <instance>"
        )
    return value


def read_raganato(xml_path, gold_path, name=None):
    """Reads a corpus in the Raganato et al. (2017) format, with its gold keys.

    The XML is `<corpus><text id><sentence id>` holding `<wf lemma pos>word</wf>` (context)
    and `<instance id lemma pos>word</instance>` (to disambiguate); the gold file has one line
    `instance_id key [key ...]` per instance.

    Args:
        xml_path: str or Path. The `.data.xml` file.
        gold_path: str or Path. The `.gold.key.txt` file.
        name: str, default None. The corpus name; None takes the XML file's name without
            `.data.xml`.

    Returns:
        A `WsdCorpus`.

    Raises:
        ValueError: malformed XML (naming the file), an element other than <wf>/<instance> in
            a sentence, an instance without id/lemma/pos, a duplicate id, or an instance with no
            gold line or a gold line with no instance (naming the file and the id).

    Example:
    >>> corpus = read_raganato("../shared/data/wsd_raganato2017/senseval2/senseval2.data.xml",
    ...                        "../shared/data/wsd_raganato2017/senseval2/senseval2.gold.key.txt"
    ...                        )  # doctest: +SKIP
    >>> len(corpus.sentences), len(corpus.instances)  # doctest: +SKIP
    (242, 2282)
    """
    gold = _read_gold(gold_path)
    if name is None:
        name = str(xml_path).replace("\\", "/").rsplit("/", 1)[-1].removesuffix(".data.xml")
    sentences, instances, seen = [], [], set()
    try:
        # iterparse, clearing each finished sentence: SemCor's XML is tens of megabytes.
        for _, element in ElementTree.iterparse(str(xml_path), events=("end",)):
            if element.tag != "sentence":
                continue
            sentence_id = element.get("id", f"#{len(sentences)}")
            words, lemmas, tags = [], [], []
            for word_index, token in enumerate(element):
                where = f"sentence {sentence_id!r}"
                if token.tag == "instance":
                    id_ = _attribute(token, "id", xml_path, where)
                    lemma = _attribute(token, "lemma", xml_path, f"instance {id_!r}")
                    pos = _attribute(token, "pos", xml_path, f"instance {id_!r}")
                    if id_ in seen:
                        raise ValueError(
                            f"{xml_path}: instance {id_!r} appears twice; expected "
                            "unique instance ids"
                        )
                    if id_ not in gold:
                        raise ValueError(
                            f"{gold_path}: has no line for instance {id_!r} of "
                            f"{xml_path}; expected one per instance"
                        )
                    seen.add(id_)
                    instances.append(
                        WsdInstance(id_, len(sentences), word_index, lemma, pos, gold[id_])
                    )
                elif token.tag != "wf":
                    raise ValueError(
                        f"{xml_path}: {where}: expected <wf> or <instance> "
                        f"elements; found <{token.tag}>"
                    )
                words.append(token.text or "")
                lemmas.append(token.get("lemma", ""))
                tags.append(token.get("pos", ""))
            sentences.append(WsdSentence(sentence_id, tuple(words), tuple(lemmas), tuple(tags)))
            element.clear()
    except ElementTree.ParseError as error:
        raise ValueError(
            f"{xml_path}: expected well-formed XML in the Raganato format; found "
            f"malformed XML ({error})"
        ) from None
    extra = [id_ for id_ in gold if id_ not in seen]
    if extra:
        raise ValueError(
            f"{gold_path}: {len(extra)} gold line(s) name no instance of "
            f"{xml_path}, e.g. {extra[0]!r}; expected one line per instance"
        )
    return WsdCorpus(name, tuple(sentences), tuple(instances), str(xml_path))


def load_wsd_set(name, data_dir=None, download=True):
    """Loads one set of the evaluation framework, from the data directory or the web.

    Looks for `<data_dir>/wsd_raganato2017/<name>/<name>.data.xml` and `.gold.key.txt`;
    without them, downloads the framework's zip (Evaluation_Datasets/ and
    Training_Corpora/SemCor/ inside). ALL's instance ids start with the set name
    ("senseval2.d000.s000.t000"); see `WsdCorpus.without_sets`.

    Args:
        name: str. One of `WSD_EVALUATION_SETS`, "ALL" (their concatenation) or "semcor" (the
            training corpus; not in the course data, so put it under
            `wsd_raganato2017/semcor/` or let it download).
        data_dir: str or Path, default None (`KBERT_DATA_DIR`, then ../shared/data).
        download: bool, default True. Download the framework when the files are not local;
            False reads the data directory only (to ask "is SemCor here?" without fetching).

    Returns:
        A `WsdCorpus`.

    Raises:
        ValueError: an unknown name, or files neither local nor downloadable (nor local, with
            `download=False`).

    Example:
    >>> corpus = load_wsd_set("semeval2007")  # doctest: +SKIP
    >>> len(corpus.instances), corpus.instances[0].id  # doctest: +SKIP
    (455, 'd000.s000.t000')
    """
    if name not in _NAMES:
        raise ValueError(f"WSD set must be one of {_NAMES}; received {name!r}")
    paths = [
        locate(
            f"wsd_raganato2017/{name}/{name}{suffix}",
            _URL if download else None,
            data_dir,
            extract_member=_member(name) + suffix,
        )
        for suffix in (".data.xml", ".gold.key.txt")
    ]
    return read_raganato(*paths, name=name)


def wsd_scores(predictions, gold):
    """Scores sense predictions as the framework's Scorer.java does.

    Each answered instance adds to `ok` the share of its predicted keys that are gold keys and
    to `notok` the rest (one right key of two predicted: 0.5 and 0.5). Precision is
    ok / (ok + notok), over answered instances; recall is ok / (number of gold instances), so
    unanswered instances cost recall only; F1 is their harmonic mean.

    Args:
        predictions: dict `{instance id: key, list of keys, or None}`. None, an empty list or
            a missing id is an unanswered instance; repeated keys count once.
        gold: dict `{instance id: set of keys}`, e.g. `WsdCorpus.gold()`.

    Returns:
        A dict with "precision", "recall" and "f1" (floats in [0, 100], unrounded),
        "answered" and "total" (ints).

    Raises:
        ValueError: empty `gold`, or prediction ids not in `gold` (up to 5 named).

    Example:
    >>> gold = {"t1": {"bank%1:17:01::"}, "t2": {"bank%1:14:00::"}, "t3": {"art%1:09:00::"}}
    >>> scores = wsd_scores({"t1": "bank%1:17:01::", "t2": ["bank%1:14:00::",
    ...                      "bank%1:17:01::"]}, gold)
    >>> scores["precision"], scores["recall"], scores["answered"], scores["total"]
    (75.0, 50.0, 2, 3)
    """
    if not gold:
        raise ValueError("gold is empty; expected at least one instance id with its keys")
    unknown = [id_ for id_ in predictions if id_ not in gold]
    if unknown:
        raise ValueError(
            f"{len(unknown)} prediction id(s) are not in gold, e.g. {unknown[:5]}; "
            "expected ids of the gold instances"
        )
    ok = notok = 0.0
    answered = 0
    for id_, answer in predictions.items():
        if answer is None:
            continue
        keys = [answer] if isinstance(answer, str) else list(dict.fromkeys(answer))
        if not keys:
            continue
        gold_keys = gold[id_]
        gold_keys = {gold_keys} if isinstance(gold_keys, str) else set(gold_keys)
        answered += 1
        right = sum(key in gold_keys for key in keys)
        ok += right / len(keys)
        notok += (len(keys) - right) / len(keys)
    precision = 100 * ok / (ok + notok) if answered else 0.0
    recall = 100 * ok / len(gold)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "answered": answered,
        "total": len(gold),
    }
