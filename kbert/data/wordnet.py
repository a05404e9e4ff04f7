"""WordNet 3.0 as a sense inventory: sense keys, sense order (first = most frequent), glosses.

Read straight from the database files of Princeton WordNet 3.0 (`data.*`, `index.*`), as
Debian's `wordnet-base` installs them under /usr/share/wordnet. That package has no
`index.sense`, so every sense key is built from the `data.*` lines (format: WordNet's
`wndb(5WN)` and `senseidx(5WN)` manual pages).
"""

import os
import re
from pathlib import Path

ENV_VAR = "KBERT_WORDNET_DIR"
DEFAULT_WORDNET_DIR = "/usr/share/wordnet"
# Universal tags (the Raganato corpora's) and WordNet's own letters, to the data-file letter.
_POS = {"NOUN": "n", "VERB": "v", "ADJ": "a", "ADV": "r", "n": "n", "v": "v", "a": "a", "r": "r"}
_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
_SS_TYPE = {"n": 1, "v": 2, "a": 3, "r": 4, "s": 5}
_UNIVERSAL = {"1": "NOUN", "2": "VERB", "3": "ADJ", "4": "ADV", "5": "ADJ"}
# Hypernym and instance-hypernym pointer symbols (wndb(5WN)); nouns and verbs have them.
_HYPERNYM_POINTERS = ("@", "@i")
# Lexicographer file names by number (lexnames(5WN)): a coarse semantic class of every synset.
LEXNAMES = (
    "adj.all",
    "adj.pert",
    "adv.all",
    "noun.Tops",
    "noun.act",
    "noun.animal",
    "noun.artifact",
    "noun.attribute",
    "noun.body",
    "noun.cognition",
    "noun.communication",
    "noun.event",
    "noun.feeling",
    "noun.food",
    "noun.group",
    "noun.location",
    "noun.motive",
    "noun.object",
    "noun.person",
    "noun.phenomenon",
    "noun.plant",
    "noun.possession",
    "noun.process",
    "noun.quantity",
    "noun.relation",
    "noun.shape",
    "noun.state",
    "noun.substance",
    "noun.time",
    "verb.body",
    "verb.change",
    "verb.cognition",
    "verb.communication",
    "verb.competition",
    "verb.consumption",
    "verb.contact",
    "verb.creation",
    "verb.emotion",
    "verb.motion",
    "verb.perception",
    "verb.possession",
    "verb.social",
    "verb.stative",
    "verb.weather",
    "adj.ppl",
)
# Syntactic markers on adjectives in data.adj: "galore(ip)", "used_to(p)", "elect(a)".
_MARKER = re.compile(r"\((?:a|p|ip)\)$")
_CACHE = {}


def wordnet_dir(path=None):
    """Returns the folder holding the WordNet 3.0 database files.

    The order is: the `path` argument, the `KBERT_WORDNET_DIR` environment variable, then
    /usr/share/wordnet (Debian's `wordnet-base`).

    Args:
        path: str or Path, default None. A folder holding `data.noun`, `index.noun`, ...

    Returns:
        A `Path`.

    Raises:
        ValueError: the chosen folder does not hold `data.noun` and `index.noun`.

    Example:
    >>> wordnet_dir()  # doctest: +SKIP
    PosixPath('/usr/share/wordnet')
    """
    if path is not None:
        where = f"the path argument {str(path)!r}"
    elif os.environ.get(ENV_VAR):
        path, where = os.environ[ENV_VAR], f"{ENV_VAR}={os.environ[ENV_VAR]!r}"
    else:
        path, where = DEFAULT_WORDNET_DIR, f"the default {DEFAULT_WORDNET_DIR!r}"
    path = Path(path).expanduser()
    if not ((path / "data.noun").is_file() and (path / "index.noun").is_file()):
        raise ValueError(
            f"no WordNet 3.0 database at {where}: expected a folder holding data.noun and "
            f"index.noun; install it with `apt-get install wordnet-base` (it goes to "
            f"{DEFAULT_WORDNET_DIR}), or pass that folder as `path` or set {ENV_VAR}"
        )
    return path


def load_wordnet(path=None):
    """Returns the parsed WordNet, read once per folder and then cached.

    Args:
        path: str or Path, default None. See `wordnet_dir`.

    Returns:
        A `WordNet`.

    Example:
    >>> wordnet = load_wordnet()  # doctest: +SKIP
    >>> wordnet.most_frequent_sense("bank", "NOUN")  # doctest: +SKIP
    'bank%1:17:01::'
    """
    folder = wordnet_dir(path).resolve()
    if folder not in _CACHE:
        _CACHE[folder] = WordNet(folder)
    return _CACHE[folder]


def _file_pos(pos):
    if pos not in _POS:
        raise ValueError(f"part of speech must be one of {tuple(_POS)}; received {pos!r}")
    return _POS[pos]


def _lemma(word):
    """Returns a data-file word as sense keys spell it: lowercased, without a marker."""
    return (_MARKER.sub("", word) if word.endswith(")") else word).lower()


def _read_synsets(path):
    """Returns `{offset: (lex_filenum, ss_type, words, head_offset, gloss, hypernyms)}`.

    `words` is a list of `(lemma, lex_id)`, the lemma lowercased and without its adjective
    marker; `head_offset` is the `&` pointer's target for a satellite (`ss_type` "s"), else None;
    `hypernyms` the offsets that the synset's `@` and `@i` pointers name (same file).
    """
    synsets = {}
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if line.startswith("  "):  # the license header
                continue
            head, _, gloss = line.partition("|")  # "|" occurs in no word or pointer
            fields = head.split()
            try:
                offset, lex_filenum, ss_type = int(fields[0]), int(fields[1]), fields[2]
                w_cnt = int(fields[3], 16)
                words = [
                    (_lemma(fields[4 + 2 * i]), int(fields[5 + 2 * i], 16)) for i in range(w_cnt)
                ]
                p_cnt = int(fields[4 + 2 * w_cnt])
                pointers = fields[5 + 2 * w_cnt : 5 + 2 * w_cnt + 4 * p_cnt]
                if len(pointers) != 4 * p_cnt or ss_type not in _SS_TYPE or not words:
                    raise ValueError
                head_offset = None
                if ss_type == "s":
                    head_offset = next(
                        int(pointers[j + 1])
                        for j in range(0, len(pointers), 4)
                        if pointers[j] == "&"
                    )
                hypernyms = tuple(
                    int(pointers[j + 1])
                    for j in range(0, len(pointers), 4)
                    if pointers[j] in _HYPERNYM_POINTERS
                )
                if not 0 <= lex_filenum < len(LEXNAMES):
                    raise ValueError
            except (IndexError, ValueError, StopIteration):
                raise ValueError(
                    f"{path}:{number}: expected a WordNet data line `offset lex_filenum ss_type "
                    f"w_cnt word lex_id ... p_cnt ptr... | gloss` (lex_filenum in [0, "
                    f"{len(LEXNAMES)}), a satellite with an `&` pointer to its head); found "
                    f"{line[:80]!r}"
                ) from None
            synsets[offset] = (lex_filenum, ss_type, words, head_offset, gloss.strip(), hypernyms)
    return synsets


class WordNet:
    """The WordNet 3.0 sense inventory: sense keys in sense-number order, with glosses.

    A sense key is `lemma%ss_type:lex_filenum:lex_id:head_word:head_id`, e.g.
    `bank%1:17:01::`; `ss_type` is 1 noun, 2 verb, 3 adjective, 4 adverb, 5 adjective
    satellite, and only satellites fill `head_word:head_id` (the first word of the head
    adjective synset and its lex_id). Build it with `load_wordnet`, which caches it.

    Args:
        path: str or Path. A folder holding `data.{noun,verb,adj,adv}` and
            `index.{noun,verb,adj,adv}`.

    Raises:
        ValueError: a missing file, or a malformed line named as `path:line`.

    Example:
    >>> wordnet = load_wordnet()  # doctest: +SKIP
    >>> wordnet.senses("bank", "NOUN")[:2]  # doctest: +SKIP
    ['bank%1:17:01::', 'bank%1:14:00::']
    >>> wordnet.gloss("bank%1:17:01::")[:12]  # doctest: +SKIP
    'sloping land'
    """

    def __init__(self, path):
        self.path = Path(path)
        for name in [f"{kind}.{file}" for file in _FILES.values() for kind in ("data", "index")]:
            if not (self.path / name).is_file():
                raise ValueError(
                    f"WordNet folder {str(self.path)!r} has no {name}; expected "
                    f"data.* and index.* for {tuple(_FILES.values())}"
                )
        self._keys = {}  # key -> (data-file letter, offset)
        self._glosses = {}  # (data-file letter, offset) -> gloss
        self._members = {}  # (data-file letter, offset) -> tuple of keys, in the synset's order
        self._hypernyms = {}  # (data-file letter, offset) -> tuple of synsets
        self._lexnames = {}  # (data-file letter, offset) -> lexicographer file number
        self._senses = {}  # (data-file letter, lemma) -> tuple of keys in sense-number order
        for letter, file in _FILES.items():
            by_lemma = self._read_data(letter, self.path / f"data.{file}")
            self._read_index(letter, self.path / f"index.{file}", by_lemma)

    def _read_data(self, letter, path):
        """Fills `_keys` and `_glosses`; returns `{(offset, lemma): key}` for the index."""
        synsets = _read_synsets(path)
        by_lemma = {}
        for offset, (lex_filenum, ss_type, words, head_offset, gloss, hypernyms) in synsets.items():
            head = ":"  # empty head_word and head_id
            if ss_type == "s":
                if head_offset not in synsets:
                    raise ValueError(
                        f"{path}: satellite synset {offset:08d} points (&) to head "
                        f"{head_offset:08d}, which is not in the file"
                    )
                head_word, head_id = synsets[head_offset][2][0]
                head = f"{head_word}:{head_id:02d}"
            self._glosses[letter, offset] = gloss
            self._lexnames[letter, offset] = lex_filenum
            missing = [target for target in hypernyms if target not in synsets]
            if missing:
                raise ValueError(
                    f"{path}: synset {offset:08d} has a hypernym pointer to "
                    f"{missing[0]:08d}, which is not in the file"
                )
            self._hypernyms[letter, offset] = tuple((letter, target) for target in hypernyms)
            members = []
            for lemma, lex_id in words:
                key = f"{lemma}%{_SS_TYPE[ss_type]}:{lex_filenum:02d}:{lex_id:02d}:{head}"
                self._keys.setdefault(key, (letter, offset))
                by_lemma.setdefault((offset, lemma), key)
                members.append(key)
            self._members[letter, offset] = tuple(dict.fromkeys(members))
        return by_lemma

    def _read_index(self, letter, path, by_lemma):
        with open(path, encoding="utf-8") as lines:
            for number, line in enumerate(lines, start=1):
                if line.startswith("  "):
                    continue
                fields = line.split()
                try:
                    lemma, synset_cnt = fields[0], int(fields[2])
                    offsets = [int(offset) for offset in fields[len(fields) - synset_cnt :]]
                except (IndexError, ValueError):
                    raise ValueError(
                        f"{path}:{number}: expected a WordNet index line `lemma "
                        f"pos synset_cnt p_cnt ... synset_offset...`; found "
                        f"{line[:80]!r}"
                    ) from None
                keys = []
                for offset in offsets:
                    if (offset, lemma) not in by_lemma:
                        raise ValueError(
                            f"{path}:{number}: {lemma!r} lists synset {offset:08d}, "
                            f"which does not hold that lemma in data.{_FILES[letter]}"
                        )
                    keys.append(by_lemma[offset, lemma])
                self._senses[letter, lemma] = tuple(keys)

    def __len__(self):
        """Returns the number of sense keys: 206,949 for WordNet 3.0.

        That is its 206,941 (lemma, synset) pairs plus 8 second keys of a lemma written twice
        in one synset with different lex_ids ("Moon 1 moon 3": moon%1:17:01:: and
        moon%1:17:03::); `senses` lists the first of the two.
        """
        return len(self._keys)

    def __contains__(self, key):
        return key in self._keys

    def __repr__(self):
        return f"WordNet({str(self.path)!r}, {len(self)} sense keys)"

    def senses(self, lemma, pos):
        """Returns a lemma's sense keys in WordNet's sense-number order.

        Sense 1 comes first: WordNet orders senses by their frequency in its tagged corpora,
        so the first is the most frequent sense (MFS).

        Args:
            lemma: str. Matched case-insensitively, spaces read as underscores ("New York").
            pos: str. "NOUN", "VERB", "ADJ", "ADV" or WordNet's "n", "v", "a", "r"; "ADJ"
                includes adjective satellites.

        Returns:
            A list of sense keys; empty for a lemma WordNet does not have with that part of
            speech (a defined answer, not an error: corpora hold many such lemmas).

        Raises:
            ValueError: an unknown part of speech.

        Example:
        >>> load_wordnet().senses("bank", "VERB")[:1]  # doctest: +SKIP
        ['bank%2:38:00::']
        """
        letter = _file_pos(pos)
        return list(self._senses.get((letter, lemma.strip().lower().replace(" ", "_")), ()))

    def most_frequent_sense(self, lemma, pos):
        """Returns a lemma's first WordNet sense, or None when WordNet does not have it.

        Args:
            lemma: str. As in `senses`.
            pos: str. As in `senses`.

        Returns:
            A sense key, or None.

        Example:
        >>> load_wordnet().most_frequent_sense("bank", "NOUN")  # doctest: +SKIP
        'bank%1:17:01::'
        """
        senses = self.senses(lemma, pos)
        return senses[0] if senses else None

    def _entry(self, key):
        if key not in self._keys:
            raise ValueError(
                f"{key!r} is not a sense key of the WordNet at {str(self.path)!r}; "
                "expected a key such as 'bank%1:17:01::' (check with `key in "
                "wordnet`)"
            )
        return self._keys[key]

    def gloss(self, key):
        """Returns the gloss (definition and examples) of a sense key's synset.

        Args:
            key: str. A sense key.

        Returns:
            A str.

        Raises:
            ValueError: a key not in this WordNet (also for `synset_offset`, `lemma_of`,
                `pos_of`).

        Example:
        >>> load_wordnet().gloss("bank%1:14:00::")[:30]  # doctest: +SKIP
        'a financial institution that a'
        """
        return self._glosses[self._entry(key)]

    def synset(self, key):
        """Returns the synset of a sense key as `(data-file letter, offset)`, e.g. `("n", 9213565)`.

        The pair names a synset uniquely (offsets repeat across parts of speech); it is what
        `synset_keys`, `hypernyms` and `lexname` take.

        Example:
        >>> load_wordnet().synset("bank%1:17:01::")  # doctest: +SKIP
        ('n', 9213565)
        """
        return self._entry(key)

    def _synset_entry(self, synset, table):
        try:
            return table[tuple(synset)]
        except (KeyError, TypeError, ValueError):
            raise ValueError(
                f"{synset!r} is not a synset of the WordNet at {str(self.path)!r}; "
                "expected a (letter, offset) pair from `synset(key)`"
            ) from None

    def synset_keys(self, synset):
        """Returns the sense keys of a synset's words (its synonyms), in the data file's order.

        Example:
        >>> wordnet = load_wordnet()  # doctest: +SKIP
        >>> wordnet.synset_keys(wordnet.synset("car%1:06:00::"))[:2]  # doctest: +SKIP
        ('car%1:06:00::', 'auto%1:06:00::')
        """
        return self._synset_entry(synset, self._members)

    def hypernyms(self, synset):
        """Returns a synset's direct hypernyms (`@`) and instance hypernyms (`@i`) as synsets.

        Nouns and verbs have them; adjectives and adverbs have none (an empty tuple).

        Example:
        >>> wordnet = load_wordnet()  # doctest: +SKIP
        >>> wordnet.synset_keys(wordnet.hypernyms(wordnet.synset("car%1:06:00::"))[0])
        ... # doctest: +SKIP
        ('motor_vehicle%1:06:00::', 'automotive_vehicle%1:06:00::')
        """
        return self._synset_entry(synset, self._hypernyms)

    def lexname(self, synset):
        """Returns a synset's lexicographer file name (its coarse class), e.g. "noun.artifact".

        Example:
        >>> wordnet = load_wordnet()  # doctest: +SKIP
        >>> wordnet.lexname(wordnet.synset("bank%1:17:01::"))  # doctest: +SKIP
        'noun.object'
        """
        return LEXNAMES[self._synset_entry(synset, self._lexnames)]

    def synset_offset(self, key):
        """Returns the byte offset of a sense key's synset in its `data.*` file, as an int.

        Offsets are unique within one part of speech only; pair it with `pos_of`.

        Example:
        >>> load_wordnet().synset_offset("bank%1:17:01::")  # doctest: +SKIP
        9213565
        """
        return self._entry(key)[1]

    def lemma_of(self, key):
        """Returns a sense key's lemma, lowercased with underscores as in the key.

        Example:
        >>> load_wordnet().lemma_of("change_ringing%1:04:00::")  # doctest: +SKIP
        'change_ringing'
        """
        self._entry(key)
        return key.split("%", 1)[0]

    def pos_of(self, key):
        """Returns a sense key's universal part of speech: "NOUN", "VERB", "ADJ" or "ADV".

        Adjective satellites (ss_type 5) are "ADJ", as the corpora tag them.

        Example:
        >>> load_wordnet().pos_of("peculiar%5:00:00:specific:00")  # doctest: +SKIP
        'ADJ'
        """
        self._entry(key)
        return _UNIVERSAL[key.split("%", 1)[1][0]]
