"""SemCor 3.0 read from its original tagfiles, as the same `WsdCorpus` the Raganato reader gives.

SemCor (Miller et al., 1993) is the Brown-corpus subset whose content words are tagged with
WordNet senses; SemCor 3.0 maps them to WordNet 3.0 (R. Mihalcea). Its 352 documents sit in
`brown1/tagfiles/`, `brown2/tagfiles/` (all content words tagged) and `brownv/tagfiles/` (only
verbs tagged). A tagfile is SGML-like, one token per line, attribute values mostly unquoted:

    <contextfile concordance=brown>
    <context filename=br-a01 paras=yes>
    <p pnum=1>
    <s snum=1>
    <wf cmd=ignore pos=DT>The</wf>
    <wf cmd=done pos=NNP lemma=group wnsn=1 lexsn=1:03:00::>Fulton_County_Grand_Jury</wf>
    <wf cmd=done pos=NN lemma=year wnsn=2;1 lexsn=1:28:02::;1:28:01::>year</wf>
    <punc>.</punc>
    </s>
    </p>
    </context>
    </contextfile>

How each part is read (every variant found in the 352 files is listed):

- Encoding: the files are plain ASCII; they are decoded as strict UTF-8, so garbage bytes are
  an error naming `file:line` rather than silently mis-decoded text.
- Structure lines `<contextfile …>`, `<context …>`, `<p …>` and their closing tags only frame
  the text (paragraphs are not kept). `<s snum=N>` … `</s>` is one `WsdSentence`, id
  `<file>.s<NNN>` ("br-a01.s001"; file names are unique across the three parts, checked).
  Blank lines are skipped; any other line is an error.
- Tokens: every `<wf …>word</wf>` and `<punc>mark</punc>` is a word of the sentence, in order,
  punctuation included as context. A multiword's underscores become single spaces
  ("Fulton_County_Grand_Jury" → "Fulton County Grand Jury", "took_place" → "took place"); stray
  leading, trailing or doubled underscores are dropped (brownv's br-a06 has "_to" → "to").
  Attribute values may be double-quoted (`sep="-"`, three times) or empty (`rdf=`, once).
- Lemmas: the `lemma=` attribute (lowercase, underscores kept: "take_place"), else the word
  lowercased with spaces as underscores; a punctuation mark is its own lemma.
- A word is sense-tagged when it has `lexsn=` (234,136 words). It must also have `lemma=` and
  `wnsn=`, with as many `;`-separated `wnsn` values (non-negative integers) as `lexsn` values,
  each lexsn `ss_type:lex_filenum:lex_id:head_word:head_id` with `ss_type` 1-5, a head only on
  a satellite (5), e.g. "5:00:00:past:00". Its sense keys are `lemma%lexsn`, in file order.
- `wnsn=0` marks a sense that has no WordNet 3.0 counterpart: that key is dropped, the others
  keep their order (`wnsn=0;1 lexsn=1:22:00::;1:04:00::` keeps the second key only). None of
  the 8,148 `wnsn=0` keys is a WordNet 3.0 key. A word whose every wnsn is 0 ("unmapped",
  8,100 words) is context only: its lemma is kept, it yields no instance.
- Every other tagged word is one `WsdInstance`, id `<sentence id>.t<NNN>` (numbered within the
  sentence from t000, like Raganato's), lemma as in the file, pos from the keys' ss_type
  (1 NOUN, 2 VERB, 3 and 5 ADJ, 4 ADV). Keys of one word that disagree in this pos are an
  error (it never happens in SemCor 3.0: "heavy" with a 5 and a 3 key is ADJ). The word's tag in
  `WsdSentence.pos` is the instance's pos, as in the Raganato files, so "Fulton County Grand
  Jury" (pos=NNP, lemma "group", key group%1:03:00::) is NOUN there.
- Adjective markers in a satellite's head word are removed from the key: SemCor writes
  `one%5:00:01:single(a):00` (621 kept keys with "(a)", "(p)" or "(ip)"), as does WordNet's own
  `cntlist.rev`, while the Raganato gold keys and `kbert.data.wordnet` spell the head word
  without marker (`one%5:00:01:single:00`); the stripped form matches both. `semcor_counts`
  reports how many keys were changed ("head_markers_stripped").
- Other attributes do not change what is read: `cmd=` (done, ignore, tag, verify_tag: a word is
  tagged when it has `lexsn=`, whatever its cmd); `ot=` (notag, idiom, complexprep, metaphor,
  foreignword, nonceword, on untagged words: context only); `rdf=` (the token as the annotators
  redefined it: "employees" for "employes", "cut_corners" for a split multiword); `pn=` (person,
  group, location, other: a proper name, whose lemma and key are already the class, "group");
  `dc=-N` (a particle of a discontinuous multiword tagged N words earlier, "cut … corners":
  context only); `sep=`. A `lemma=` without `lexsn=` (not in SemCor 3.0) is only a lemma.
- Tags in `WsdSentence.pos` are universal (UD) tags mapped from the Penn tags (`_PENN_TO_UPOS`):
  NN NNS → NOUN, NNP NNPS → PROPN, VB VBD VBG VBN VBP VBZ → VERB, MD → AUX, JJ JJR JJS → ADJ,
  RB RBR RBS WRB → ADV, IN RP → ADP, DT PDT WDT → DET, PRP PRP$ WP WP$ EX → PRON, CC → CCONJ,
  CD → NUM, TO POS → PART, UH → INTJ, FW LS → X, punctuation → PUNCT. The old Brown-style tags
  of a few words (PP, PR → PRON; NP, NPS → PROPN) are mapped too, and of a double tag
  ("NN|SYM", "MD|VB") the first counts. Another tag is an error. (Raganato's files use the
  12-tag set of Petrov et al. instead: "." for punctuation, NOUN for proper nouns, PRT, CONJ;
  kbert reads only the instance pos, which is the same in both.)

Counts (`semcor_counts`): 352 documents, 37,176 sentences, 676,546 `<wf>`, 102,041 `<punc>`,
234,136 tagged words, 8,100 unmapped, 226,036 instances (Raganato et al. report 226,036 sense
annotations for their SemCor) with 226,695 keys.
"""

import re
from pathlib import Path

from kbert.data.data_dir import data_dir as find_data_dir
from kbert.data.data_dir import locate
from kbert.data.raganato import WsdCorpus, WsdInstance, WsdSentence

SEMCOR_PARTS = ("brown1", "brown2", "brownv")
_URL = "http://web.eecs.umich.edu/~mihalcea/downloads/semcor/semcor3.0.tar.gz"
_README = "semcor3.0/README.semcor3.0"
_COUNT_NAMES = (
    "documents",
    "sentences",
    "wf",
    "punc",
    "tagged",
    "unmapped",
    "instances",
    "gold_keys",
    "head_markers_stripped",
)

_PENN_TO_UPOS = {
    "NN": "NOUN",
    "NNS": "NOUN",
    "NNP": "PROPN",
    "NNPS": "PROPN",
    "VB": "VERB",
    "VBD": "VERB",
    "VBG": "VERB",
    "VBN": "VERB",
    "VBP": "VERB",
    "VBZ": "VERB",
    "MD": "AUX",
    "JJ": "ADJ",
    "JJR": "ADJ",
    "JJS": "ADJ",
    "RB": "ADV",
    "RBR": "ADV",
    "RBS": "ADV",
    "WRB": "ADV",
    "IN": "ADP",
    "RP": "ADP",
    "DT": "DET",
    "PDT": "DET",
    "WDT": "DET",
    "PRP": "PRON",
    "PRP$": "PRON",
    "WP": "PRON",
    "WP$": "PRON",
    "EX": "PRON",
    "CC": "CCONJ",
    "CD": "NUM",
    "TO": "PART",
    "POS": "PART",
    "UH": "INTJ",
    "FW": "X",
    "LS": "X",
    "SYM": "SYM",
    # Punctuation tags (SemCor writes punctuation as <punc>, never as a tagged <wf>).
    ",": "PUNCT",
    ".": "PUNCT",
    ":": "PUNCT",
    "``": "PUNCT",
    "''": "PUNCT",
    "-LRB-": "PUNCT",
    "-RRB-": "PUNCT",
    "#": "PUNCT",
    "$": "SYM",
    # Brown-style tags left on a few words of SemCor 3.0.
    "PP": "PRON",
    "PR": "PRON",
    "NP": "PROPN",
    "NPS": "PROPN",
}
_SS_TYPE_TO_UPOS = {"1": "NOUN", "2": "VERB", "3": "ADJ", "4": "ADV", "5": "ADJ"}

# A value may be empty: brown2's br-e30 has `rdf= pos=NN`.
_WF = re.compile(r'<wf((?: [a-z_]+=(?:"[^"]*"|[^ >"]*))*)>([^<>]*)</wf>')
_ATTRIBUTE = re.compile(r' ([a-z_]+)=(?:"([^"]*)"|([^ >"]*))')
_PUNC = re.compile(r"<punc>([^<>]+)</punc>")
_SENTENCE = re.compile(r"<s snum=(\d+)>")
_FRAME = re.compile(r"</?(?:contextfile|context|p)(?: [^<>]*)?>")
_LEXSN = re.compile(r"[1-4]:\d\d:\d\d::|5:\d\d:\d\d:[^:;\s]+:\d\d")
_WNSN = re.compile(r"\d+")
_MARKER = re.compile(r"\((?:a|p|ip)\)(?=:\d\d$)")


def _zero_counts():
    return dict.fromkeys(_COUNT_NAMES, 0)


def _tagfiles(path, parts):
    """Returns `[(part, file path)]` in part order, files sorted by name, names checked unique."""
    root = Path(path)
    if not root.is_dir():
        raise ValueError(
            f"SemCor folder {str(root)!r} does not exist or is not a folder; "
            "expected the semcor3.0/ folder holding brown1/, brown2/, brownv/"
        )
    parts = (parts,) if isinstance(parts, str) else tuple(parts)
    if not parts or len(set(parts)) != len(parts) or not set(parts) <= set(SEMCOR_PARTS):
        raise ValueError(f"parts must be distinct names among {SEMCOR_PARTS}; received {parts!r}")
    files, seen = [], {}
    for part in parts:
        folder = root / part / "tagfiles"
        if not folder.is_dir():
            raise ValueError(
                f"SemCor part folder {str(folder)!r} is missing; expected "
                f"<semcor3.0>/{part}/tagfiles/ holding the tagfiles (br-a01, ...)"
            )
        names = sorted(
            file.name
            for file in folder.iterdir()
            if file.is_file() and not file.name.startswith(".")
        )
        if not names:
            raise ValueError(
                f"SemCor part folder {str(folder)!r} holds no tagfile; expected "
                "files such as br-a01"
            )
        for name in names:
            if name in seen:
                raise ValueError(
                    f"tagfile name {name!r} is in both {str(seen[name])!r} and "
                    f"{str(folder)!r}; expected unique document names across parts "
                    "(they become sentence ids)"
                )
            seen[name] = folder
            files.append((part, folder / name))
    return files


def _decode(file):
    data = file.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise ValueError(
            f"{file}:{line}: expected UTF-8 (ASCII) text, as in SemCor 3.0; found "
            f"byte {data[error.start : error.start + 1]!r}, not valid UTF-8"
        ) from None


def _surface(text, where):
    word = " ".join(piece for piece in text.split("_") if piece)
    if not word:
        raise ValueError(f"{where}: expected a word between <wf …> and </wf>; found {text!r}")
    return word


def _penn_pos(tag, where):
    upos = _PENN_TO_UPOS.get(tag.split("|", 1)[0])
    if upos is None:
        raise ValueError(
            f"{where}: expected a Penn Treebank tag among "
            f"{sorted(_PENN_TO_UPOS)} (or 'A|B', read as A); found pos={tag!r}"
        )
    return upos


def _sense_keys(attributes, where, counts):
    """Returns `(lemma, universal pos, keys)` of a tagged <wf>; keys empty when all wnsn are 0."""
    lemma, wnsn = attributes.get("lemma"), attributes.get("wnsn")
    if not lemma or wnsn is None:
        raise ValueError(
            f"{where}: expected a <wf> with lexsn= to have a lemma= and a wnsn= as "
            f"well; found attributes {attributes}"
        )
    numbers, lexsns = wnsn.split(";"), attributes["lexsn"].split(";")
    if len(numbers) != len(lexsns):
        raise ValueError(
            f"{where}: expected as many ';'-separated wnsn as lexsn values; found "
            f"wnsn={wnsn} ({len(numbers)}) and lexsn={attributes['lexsn']} "
            f"({len(lexsns)})"
        )
    keys, pos = [], set()
    for number, lexsn in zip(numbers, lexsns, strict=True):
        if not _WNSN.fullmatch(number):
            raise ValueError(
                f"{where}: expected wnsn values that are non-negative integers; found wnsn={wnsn}"
            )
        if not _LEXSN.fullmatch(lexsn):
            raise ValueError(
                f"{where}: expected each lexsn as ss_type:lex_filenum:lex_id:"
                f"head_word:head_id (e.g. 1:09:00:: or 5:00:00:past:00); found "
                f"{lexsn!r}"
            )
        if number == "0":
            continue
        if "(" in lexsn:
            lexsn = _MARKER.sub("", lexsn)
            counts["head_markers_stripped"] += 1
        keys.append(f"{lemma}%{lexsn}")
        pos.add(_SS_TYPE_TO_UPOS[lexsn[0]])
    if len(pos) > 1:
        raise ValueError(
            f"{where}: expected the sense keys of one word to share a part of "
            f"speech; found {keys} ({sorted(pos)})"
        )
    return lemma, pos.pop() if pos else None, tuple(keys)


def _read_tagfile(file, counts):
    """Yields `(sentence id, words, lemmas, tags, [(word index, lemma, pos, keys)])` of a file.

    Updates `counts` (all but "documents") as it goes.
    """
    document = file.name
    sentence = None  # (id, words, lemmas, tags, instances, opening line) while inside <s>
    ids = set()
    lines = _decode(file).split("\n")
    if lines[-1] == "":  # the newline that ends the last line
        lines.pop()
    number = 0
    for number, line in enumerate(lines, start=1):
        line = line.strip()
        if line.startswith("<wf"):
            match = _WF.fullmatch(line)
            if match is None:
                raise ValueError(
                    f"{file}:{number}: expected `<wf name=value …>word</wf>`; found {line[:80]!r}"
                )
            if sentence is None:
                raise ValueError(
                    f"{file}:{number}: expected <wf> inside <s snum=…> … </s>; "
                    f"found it outside a sentence"
                )
            where = f"{file}:{number}"
            attributes = {
                name: quoted or value for name, quoted, value in _ATTRIBUTE.findall(match.group(1))
            }
            counts["wf"] += 1
            word = _surface(match.group(2), where)
            if "pos" not in attributes:
                raise ValueError(
                    f"{where}: expected a pos= attribute on every <wf>; found "
                    f"attributes {sorted(attributes)}"
                )
            pos = _penn_pos(attributes["pos"], where)
            lemma = attributes.get("lemma") or word.lower().replace(" ", "_")
            if "lexsn" in attributes:
                counts["tagged"] += 1
                lemma, sense_pos, keys = _sense_keys(attributes, where, counts)
                if keys:
                    pos = sense_pos
                    sentence[4].append((len(sentence[1]), lemma, pos, keys))
                    counts["instances"] += 1
                    counts["gold_keys"] += len(keys)
                else:
                    counts["unmapped"] += 1
            elif "wnsn" in attributes:
                raise ValueError(
                    f"{where}: expected as many ';'-separated wnsn as lexsn values; "
                    f"found wnsn={attributes['wnsn']} and no lexsn="
                )
            sentence[1].append(word)
            sentence[2].append(lemma)
            sentence[3].append(pos)
        elif line.startswith("<punc>"):
            match = _PUNC.fullmatch(line)
            if match is None:
                raise ValueError(
                    f"{file}:{number}: expected `<punc>mark</punc>`; found {line[:80]!r}"
                )
            if sentence is None:
                raise ValueError(
                    f"{file}:{number}: expected <punc> inside <s snum=…> … </s>; "
                    "found it outside a sentence"
                )
            counts["punc"] += 1
            sentence[1].append(match.group(1))
            sentence[2].append(match.group(1))
            sentence[3].append("PUNCT")
        elif line.startswith("<s "):
            match = _SENTENCE.fullmatch(line)
            if match is None:
                raise ValueError(f"{file}:{number}: expected `<s snum=N>`; found {line[:80]!r}")
            if sentence is not None:
                raise ValueError(
                    f"{file}:{number}: expected </s> before a new <s>; the <s> of "
                    f"line {sentence[5]} is not closed"
                )
            sentence_id = f"{document}.s{int(match.group(1)):03d}"
            if sentence_id in ids:
                raise ValueError(
                    f"{file}:{number}: expected unique sentence numbers in a file; "
                    f"snum={match.group(1)} appears twice"
                )
            ids.add(sentence_id)
            sentence = (sentence_id, [], [], [], [], number)
        elif line == "</s>":
            if sentence is None:
                raise ValueError(f"{file}:{number}: found </s> with no open <s snum=…>")
            counts["sentences"] += 1
            yield sentence[:5]
            sentence = None
        elif line and not _FRAME.fullmatch(line):
            raise ValueError(
                f"{file}:{number}: expected a tagfile line (<contextfile>, "
                "<context>, <p>, <s>, <wf …>word</wf>, <punc>mark</punc> or a "
                f"closing tag); found {line[:80]!r}"
            )
        elif sentence is not None and line:
            raise ValueError(
                f"{file}:{number}: expected </s> before {line[:40]!r}; the <s> of "
                f"line {sentence[5]} is not closed"
            )
    if sentence is not None:
        raise ValueError(
            f"{file}:{number}: expected </s> before the end of the file; the <s> of "
            f"line {sentence[5]} is not closed"
        )


def _check_max_sentences(max_sentences):
    if max_sentences is not None and (
        isinstance(max_sentences, bool) or not isinstance(max_sentences, int) or max_sentences < 1
    ):
        raise ValueError(
            f"max_sentences must be a positive int or None; received {max_sentences!r}"
        )


def read_semcor(path, parts=SEMCOR_PARTS, max_sentences=None):
    """Reads SemCor 3.0's tagfiles into a `WsdCorpus` (sentences, instances, gold keys).

    The corpus has the structure `read_raganato` gives, so whatever takes a Raganato corpus
    takes this one. See the module docstring for how each variant of the format is read.

    Args:
        path: str or Path. The `semcor3.0/` folder, holding `brown1/`, `brown2/`, `brownv/`.
        parts: str or tuple of str, default ("brown1", "brown2", "brownv"). The parts to read,
            in this order; each part's files are read in sorted name order.
        max_sentences: int, default None. Stop after this many sentences (for a quick look);
            None reads everything.

    Returns:
        A `WsdCorpus` named "semcor" whose `source` is `path`. Sentence ids are
        "<file>.s<NNN>" ("br-a01.s001"), instance ids "<sentence id>.t<NNN>".

    Raises:
        ValueError: a missing folder, part folder or empty part, an unknown part name, a file
            name in two parts, a bad `max_sentences`, or malformed content (named `file:line`,
            with what was expected): an unknown line, a token outside `<s>`, an unclosed `<s>`,
            a wnsn/lexsn count mismatch, a malformed lexsn, an unknown Penn tag, bytes that are
            not UTF-8.

    Example:
    >>> corpus = read_semcor("../shared/data/semcor3.0", max_sentences=1)  # doctest: +SKIP
    >>> corpus.sentences[0].words[:3]  # doctest: +SKIP
    ('The', 'Fulton County Grand Jury', 'said')
    >>> corpus.instances[0]  # doctest: +SKIP
    WsdInstance(id='br-a01.s001.t000', sentence_index=0, word_index=1, lemma='group', \
pos='NOUN', gold_keys=('group%1:03:00::',))
    """
    _check_max_sentences(max_sentences)
    sentences, instances, counts = [], [], _zero_counts()
    for _, file in _tagfiles(path, parts):
        for sentence_id, words, lemmas, tags, tagged in _read_tagfile(file, counts):
            sentence_index = len(sentences)
            sentences.append(WsdSentence(sentence_id, tuple(words), tuple(lemmas), tuple(tags)))
            instances.extend(
                WsdInstance(
                    f"{sentence_id}.t{number:03d}", sentence_index, word_index, lemma, pos, keys
                )
                for number, (word_index, lemma, pos, keys) in enumerate(tagged)
            )
            if max_sentences is not None and len(sentences) >= max_sentences:
                return WsdCorpus("semcor", tuple(sentences), tuple(instances), str(path))
    return WsdCorpus("semcor", tuple(sentences), tuple(instances), str(path))


def semcor_counts(path, parts=SEMCOR_PARTS):
    """Counts SemCor 3.0's documents, sentences, tokens, tagged words and instances.

    Reads (and so checks) every file, as `read_semcor` does, without building the corpus.

    Args:
        path: str or Path. The `semcor3.0/` folder.
        parts: str or tuple of str, default ("brown1", "brown2", "brownv").

    Returns:
        A dict `{part: counts, ..., "total": counts}`, parts in the given order, each `counts` a
        dict of ints: "documents" (files), "sentences", "wf" and "punc" (tokens), "tagged"
        (`<wf>` with `lexsn=`), "unmapped" (tagged, every wnsn 0), "instances" (tagged minus
        unmapped), "gold_keys" (keys of the instances, wnsn-0 keys dropped),
        "head_markers_stripped" (of those keys, how many lost an "(a)"/"(p)"/"(ip)" marker).

    Raises:
        ValueError: as `read_semcor`.

    Example:
    >>> semcor_counts("../shared/data/semcor3.0")["total"]["instances"]  # doctest: +SKIP
    226036
    """
    result = {}
    total = _zero_counts()
    for part, file in _tagfiles(path, parts):
        counts = result.setdefault(part, _zero_counts())
        counts["documents"] += 1
        for _ in _read_tagfile(file, counts):
            pass
    for counts in result.values():
        for name, value in counts.items():
            total[name] += value
    result["total"] = total
    return result


def load_semcor(data_dir=None, download=True, **kwargs):
    """Loads SemCor 3.0 from the data directory, or downloads the public original.

    Looks for `<data_dir>/semcor3.0/README.semcor3.0` and reads its folder; without it,
    downloads `semcor3.0.tar.gz` from Rada Mihalcea's page (it holds a `semcor3.0/` folder).

    Args:
        data_dir: str or Path, default None (`KBERT_DATA_DIR`, then ../shared/data).
        download: bool, default True. False reads the data directory only.
        **kwargs: passed to `read_semcor` (`parts`, `max_sentences`).

    Returns:
        A `WsdCorpus`, as `read_semcor` returns.

    Raises:
        ValueError: SemCor neither local nor downloadable (nor local, with `download=False`),
            or anything `read_semcor` raises.

    Example:
    >>> corpus = load_semcor(download=False)  # doctest: +SKIP
    >>> len(corpus.sentences), len(corpus.instances)  # doctest: +SKIP
    (37176, 226036)
    """
    root = find_data_dir(data_dir)
    try:
        readme = locate(_README, _URL if download else None, data_dir, extract_member=_README)
    except ValueError:
        if download:
            raise
        raise ValueError(
            f"SemCor 3.0 not found: expected {_README} under data directory "
            f"{str(root)!r} (the semcor3.0/ folder holding brown1/, brown2/, "
            f"brownv/); download=False, so {_URL} was not fetched"
        ) from None
    return read_semcor(readme.parent, **kwargs)
