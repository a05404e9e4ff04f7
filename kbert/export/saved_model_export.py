"""TF Serving SavedModels of kbert models, with tokenization inside the graph.

`export_saved_model` writes `<export_dir>/<name>/<version>/`, the layout TF Serving's model
server watches: raw strings go in, labels, probabilities, tags, answer spans or embeddings come
out. The graph holds the tokenizer, the model's weights, and two assets: `vocab.txt` and, when
there are label or tag names, `labels.txt`. The tokenizer is a `WordPieceTokenizer` (core TF
ops plus the classic tf-text ops that TF Serving's tensorflow-text 2.12 knows) or, for a model
pretrained on a unigram vocabulary, a `SentencePieceTokenizer` (tf-text's SentencePiece ops,
also in the op library TF Serving links) or, on a BPE vocabulary, a `GraphBytePairTokenizer`
(core ops and `RegexSplitWithOffsets`); those two serve `classify` and `embed` only, since
tagging and QA map tokens back to WordPiece's words and characters.

Signatures per task (every string input is `tf.TensorSpec([None], tf.string)`, every batch size
is dynamic, every float output float32 whatever the model's dtype policy):

| task       | signature            | inputs                       | outputs                          |
|------------|----------------------|------------------------------|----------------------------------|
| "classify" | serving_default,     | text (+ text_pair if pair)   | label_ids int32 (b,), labels     |
|            | classify             |                              | string (b,), probabilities (b, c)|
| "tag"      | serving_default, tag | text                         | tags, word_starts, word_ends,    |
|            |                      |                              | num_words, entity_types,         |
|            |                      |                              | entity_starts, entity_ends,      |
|            |                      |                              | entity_texts, num_entities       |
| "answer"   | serving_default,     | question, context            | answer_start, answer_end,        |
|            | answer               |                              | answer_text, score               |
| "embed"    | serving_default      | text                         | cls_embedding, mean_embedding    |
| all        | embed                | text                         | cls_embedding (b, h),            |
|            |                      |                              | mean_embedding (b, h)            |
| all        | token_ids            | token_ids, segment_ids,      | the model's raw outputs: logits  |
|            |                      | padding_mask int32 (b, s)    | / emissions / start_logits and   |
|            |                      |                              | end_logits / sequence_output and |
|            |                      |                              | pooled_output                    |

Input rules, applied in the graph so a client cannot crash the server: invalid UTF-8 bytes are
replaced (each maximal invalid sequence by one U+FFFD), then each input is cut to its first
`max_input_chars` characters (code points) before tokenization, so a 100k-character request
costs no more than a long one; all character offsets in the outputs refer to that cleaned,
cut text. An empty batch gives outputs with 0 rows; two inputs of one request (`text` and
`text_pair`, `question` and `context`) must have the same batch size, or the call fails with an
InvalidArgumentError naming both. TF Serving and the restored `signatures` do not hold a request
to the signature's shapes, so the graph also checks them: a string input that is not rank 1
(a scalar, a (2, 2) batch) fails with an InvalidArgumentError that names the signature and the
input, says "expected a rank-1 string tensor [batch]" and gives the received shape and rank; the
`token_ids` signature asks the same of its three rank-2 inputs, which must share one shape,
and wants `token_ids` in [0, vocabulary_size), `segment_ids` in [0, num_segments) (any values
when the model has no segment table) and `padding_mask` values 0 or 1, the error giving the
range and the smallest and largest value received.

Padding: the string signatures pack each input to `sequence_length` tokens, then cut the batch
to its longest real row, rounded up to a multiple of 8 (`padding="longest"`, the default; see
`kbert.export.dynamic_padding`), so a batch of short questions does not pay for attention over
the whole window. Every output is read at real tokens or words, so none changes shape or value
(up to float rounding); `padding="fixed"` keeps every row at `sequence_length`.
"""

import os
import re
import tempfile

import keras
import tensorflow as tf

from kbert.checks import check_int
from kbert.export.dynamic_padding import trim_padding
from kbert.files import new_directory
from kbert.text import BertPreprocessor, LongTextPreprocessor, WordPieceTokenizer
from kbert.text._bert_text import replace_invalid_utf8
from kbert.text.graph_tokenizers import GRAPH_TOKENIZERS

TASKS = ("classify", "tag", "answer", "embed")
# "longest": each batch runs at its longest real row (rounded up to a multiple of 8);
# "fixed": every row at `sequence_length` (the behaviour before, kept to measure against).
PADDINGS = ("longest", "fixed")

# Characters kept per input for each token of `sequence_length`: English WordPiece tokens
# average about 4 characters, and 8x headroom keeps every input that could fill the window.
CHARS_PER_TOKEN = 32
# Head + tail and sliding windows read a whole document: keep up to this many characters (a long
# IMDb review has 14k; the cost is one window per `sequence_length - 2` tokens).
LONG_INPUT_CHARS = 200_000

# Default signature per task (TF Serving answers requests without a signature_name with it).
_DEFAULT_SIGNATURE = {"classify": "classify", "tag": "tag", "answer": "answer", "embed": "embed"}


def load_exported(path):
    """Loads an exported SavedModel, registering the tf-text ops its tokenizer needs first.

    Args:
        path: str or `os.PathLike`, a version directory written by `export_saved_model`.

    Returns:
        The object of `tf.saved_model.load`; its `signatures` dict holds the serving signatures.

    Example:
    >>> loaded = load_exported(path)  # doctest: +SKIP
    >>> loaded.signatures["classify"](text=tf.constant(["a fine film"]))["labels"]  # doctest: +SKIP
    """
    import tensorflow_text  # noqa: F401  (registers RegexSplitWithOffsets and friends)

    return tf.saved_model.load(os.fspath(path))


def infer_task(model):
    """Names the serving task of a kbert model from its class.

    Args:
        model: a `kbert.models` `SequenceClassifier`, `TokenClassifier`, `QuestionAnswerer` or
            `Encoder`.

    Returns:
        str, one of `TASKS`.

    Raises:
        ValueError: for any other model.

    Example:
    >>> from kbert.models import Encoder
    >>> infer_task(Encoder.from_preset("tiny"))
    'embed'
    """
    from kbert.models import Encoder, QuestionAnswerer, SequenceClassifier
    from kbert.models.token_classifier import TokenClassifier

    for cls, task in (
        (SequenceClassifier, "classify"),
        (TokenClassifier, "tag"),
        (QuestionAnswerer, "answer"),
        (Encoder, "embed"),
    ):
        if isinstance(model, cls):
            return task
    raise ValueError(
        "cannot infer the export task of a model of type "
        f"{type(model).__name__}: expected a SequenceClassifier, TokenClassifier, "
        "QuestionAnswerer or Encoder, or pass task= one of "
        f"{TASKS}"
    )


def check_export_dir(export_dir, what="export_dir"):
    """Refuses an export directory no new version can be written into; touches nothing.

    Args:
        export_dir: str or `os.PathLike`, a directory that may not exist yet.
        what: str, default "export_dir": what the error calls it (the CLI says "--export-dir").

    Raises:
        ValueError: `export_dir` is not a path, is a file, or is not writable; or, when it does
            not exist, the nearest existing folder above it is a file or not writable.

    Example:
    >>> check_export_dir("/tmp/saved_models")
    """
    if not isinstance(export_dir, (str, os.PathLike)):
        raise ValueError(
            f"{what} must be a str or os.PathLike directory; received {type(export_dir).__name__}"
        )
    path = os.fspath(export_dir)
    existing = os.path.abspath(path)
    while not os.path.exists(existing):  # the folder that makedirs would create it in
        existing = os.path.dirname(existing)
    where = "" if existing == os.path.abspath(path) else f": its folder {existing!r}"
    if not os.path.isdir(existing):
        raise ValueError(
            f"{what} {path!r}{where} is a file; expected a directory (created if "
            "missing) to hold <name>/<version>/"
        )
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(
            f"{what} {path!r}{where} is not writable; expected a directory this "
            "user can write a new model version into"
        )


def next_version(model_dir):
    """Returns 1 + the highest numeric version directory under `model_dir` (1 if none).

    Args:
        model_dir: str or `os.PathLike`, the `<export_dir>/<name>` directory (may not exist).

    Returns:
        int.

    Example:
    >>> next_version("/nonexistent/model")
    1
    """
    model_dir = os.fspath(model_dir)
    if not os.path.isdir(model_dir):
        return 1
    versions = [
        int(entry)
        for entry in os.listdir(model_dir)
        if entry.isdigit() and os.path.isdir(os.path.join(model_dir, entry))
    ]
    return max(versions, default=0) + 1


def _check_name(name):
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]*", name):
        raise ValueError(
            "name must be a plain directory name (letters, digits, '_', '-', '.'); "
            f"received {name!r}"
        )


def write_new_version(export_dir, name, version, write, verify):
    """Writes `<export_dir>/<name>/<version>/` whole or not at all; never replaces a version.

    `write(temporary)` writes the SavedModel into a hidden sibling directory and returns
    anything `verify(temporary, written)` needs to load and check it; only then is the
    directory renamed into place. On any failure the partial directory is removed (and the
    model directory, if this call created it and it is empty), so existing versions stay
    untouched.

    Args:
        export_dir: str or `os.PathLike`, the model base directory's parent.
        name: str, the model name, a plain directory name.
        version: int >= 0 or None (1 + the highest existing numeric version).
        write: callable(temporary path) → anything.
        verify: callable(temporary path, what `write` returned); raises when the export fails.

    Returns:
        str, the final version directory.
    """
    _check_name(name)
    if version is not None:
        check_int("version", version, minimum=0, expected="an int >= 0 or None")
    check_export_dir(export_dir)
    model_dir = os.path.join(os.fspath(export_dir), name)
    check_export_dir(model_dir, "the model directory")
    if version is None:
        version = next_version(model_dir)
    final = os.path.join(model_dir, str(version))
    if os.path.exists(final):
        raise ValueError(
            f"version {version} of model {name!r} already exists at {final}; "
            "expected a new version (versions are never replaced)"
        )
    created = not os.path.isdir(model_dir)
    try:
        os.makedirs(model_dir, exist_ok=True)
    except OSError as error:
        raise ValueError(
            f"cannot create the model directory {model_dir!r}: {error.strerror}"
        ) from None
    try:
        with new_directory(final) as temporary:
            written = write(temporary)
            verify(temporary, written)
    except FileExistsError:
        raise ValueError(
            f"version {version} of model {name!r} appeared at {final} during "
            "the export; expected a new version (versions are never replaced)"
        ) from None
    finally:  # a failed first export leaves no empty model directory behind
        if created and not os.listdir(model_dir):
            os.rmdir(model_dir)
    return final


def _clean(texts, max_input_chars):
    """Valid UTF-8, cut to its first `max_input_chars` characters: (batch,) strings."""
    texts = replace_invalid_utf8(texts)
    return tf.strings.substr(texts, 0, max_input_chars, unit="UTF8_CHAR")


def _runtime_rank(tensor):
    """The rank `tensor` has when the graph runs: int32 scalar.

    `tf.rank(tensor)` is no check here: the restored `signatures` run a (2, 2) tensor through a
    (None,) signature, and there Grappler folds `tf.rank` (even of a shape-hiding
    `PlaceholderWithDefault`) to the signature's static rank. The size of a `tf.where` output
    is only known at run time.
    """
    dims = tf.shape(tensor)  # (rank,) at run time
    return tf.size(tf.where(dims >= 0), out_type=tf.int32)


def _assert_rank(tensor, rank, signature, name, expected):
    """Asserts `tensor` has `rank` at run time; the error names the signature and the input."""
    received = _runtime_rank(tensor)
    # The session loader prints Assert's message C-escaped: no quotes in these messages.
    message = tf.strings.format(
        f"signature {signature}, input {name}: expected a rank-{rank} {expected}; received "
        "shape {} (rank {})",
        (tf.shape(tensor), received),
    )
    return tf.debugging.Assert(tf.equal(received, rank), [message])


def _checked_texts(signature, **texts):
    """The signature's string inputs, each asserted to be a (batch,) tensor first."""
    checks = [
        _assert_rank(text, 1, signature, name, "string tensor [batch]")
        for name, text in texts.items()
    ]
    with tf.control_dependencies(checks):
        return [tf.identity(text) for text in texts.values()]


def _assert_in_range(values, low, high, signature, name, expected):
    """Asserts every value is in [low, high); an empty tensor passes."""
    smallest, largest = tf.reduce_min(values), tf.reduce_max(values)  # int max, min if empty
    message = tf.strings.format(
        f"signature {signature}, input {name}: expected {expected}; received values from {{}} "
        "to {}",
        (smallest, largest),
    )
    return tf.debugging.Assert(tf.logical_and(smallest >= low, largest < high), [message])


def _same_batch(first, second, first_name, second_name):
    """Asserts two string batches have one size; the error names both inputs."""
    return tf.debugging.assert_equal(
        tf.shape(first)[0],
        tf.shape(second)[0],
        message=f"inputs {first_name} and {second_name} must have the same batch size",
    )


def _substrings(texts, starts, ends):
    """`texts[b][starts[b, ...]:ends[b, ...]]` in characters; "" where a start is -1.

    Args:
        texts: (batch,) string tensor of valid UTF-8.
        starts: int32 (batch,) or (batch, k) character offsets, -1 for none.
        ends: int32 of the same shape, end exclusive.

    Returns:
        string tensor shaped like `starts`.
    """
    valid = starts >= 0
    position = tf.where(valid, starts, 0)
    length = tf.where(valid, tf.maximum(ends - starts, 0), 0)
    if starts.shape.rank == 2:
        texts = tf.broadcast_to(texts[:, None], tf.shape(starts))  # (batch, k)
    return tf.strings.substr(texts, position, length, unit="UTF8_CHAR")


def _write_lines(path, lines, what):
    for line in lines:
        if not isinstance(line, str) or "\n" in line or "\r" in line:
            raise ValueError(
                f"{what} must be str without line breaks to be written one per "
                f"line; received {line!r}"
            )
    with open(path, "w", encoding="utf-8") as file:
        file.write("".join(line + "\n" for line in lines))


def _line_table(path, key_is_line_number):
    """A lookup table read from a text asset (which the SavedModel then carries)."""
    whole, number = tf.lookup.TextFileIndex.WHOLE_LINE, tf.lookup.TextFileIndex.LINE_NUMBER
    if key_is_line_number:
        initializer = tf.lookup.TextFileInitializer(path, tf.int64, number, tf.string, whole)
        return tf.lookup.StaticHashTable(initializer, default_value="")
    initializer = tf.lookup.TextFileInitializer(path, tf.string, whole, tf.int64, number)
    return tf.lookup.StaticHashTable(initializer, default_value=-1)


def _model_classes(model, task):
    if task == "classify":
        return model.num_classes
    if task == "tag":
        return model.num_tags
    return None


def _check_arguments(
    model,
    tokenizer,
    task,
    label_names,
    sequence_length,
    max_input_chars,
    max_answer_length,
    version,
):
    if isinstance(tokenizer, (BertPreprocessor, LongTextPreprocessor)):
        tokenizer = tokenizer.tokenizer
    if not isinstance(tokenizer, GRAPH_TOKENIZERS):
        raise ValueError(
            "tokenizer must be a kbert.text.WordPieceTokenizer or a SentencePieceTokenizer or "
            "GraphBytePairTokenizer (or a BertPreprocessor holding one): only those tokenizers "
            "can be put inside the serving "
            f"graph; received {type(tokenizer).__name__}"
        )
    if task is None:
        task = infer_task(model)
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}; received {task!r}")
    if task in ("tag", "answer") and not isinstance(tokenizer, WordPieceTokenizer):
        raise ValueError(
            f"task {task!r} maps tokens back to words and characters, which needs a "
            f"WordPieceTokenizer; received {type(tokenizer).__name__} (it serves 'classify' "
            "and 'embed')"
        )
    expected = {
        "classify": "SequenceClassifier",
        "tag": "TokenClassifier",
        "answer": "QuestionAnswerer",
    }.get(task)
    if expected is not None and _infer_task_or_none(model) != task:
        raise ValueError(f"task {task!r} needs a {expected}; received a {type(model).__name__}")
    if task == "embed" and _infer_task_or_none(model) != "embed":
        encoder = getattr(model, "encoder", None)
        if _infer_task_or_none(encoder) != "embed":
            raise ValueError(
                "task 'embed' needs an Encoder or a model holding one as "
                f"`.encoder`; received a {type(model).__name__}"
            )
        model = encoder  # only the encoder is exported
    for name, value in (
        ("sequence_length", sequence_length),
        ("max_input_chars", max_input_chars),
        ("max_answer_length", max_answer_length),
    ):
        check_int(name, value, minimum=1, expected="an int >= 1")
    if sequence_length < 3:
        raise ValueError(
            "sequence_length must leave room for [CLS], [SEP] and a token (>= 3); "
            f"received {sequence_length}"
        )
    if version is not None:
        check_int(
            "version", version, minimum=0, expected="an int >= 0 (TF Serving's version directory)"
        )
    classes = _model_classes(model, task)
    if label_names is not None:
        label_names = list(label_names)
        if classes is None:
            raise ValueError(
                f"label_names are for the 'classify' and 'tag' tasks; task {task!r} "
                f"has no labels, received {len(label_names)} names"
            )
        if len(label_names) != classes:
            raise ValueError(
                f"label_names must name each of the model's {classes} classes; "
                f"received {len(label_names)} names: {label_names[:10]}"
            )
        for label in label_names:
            if not isinstance(label, str) or not label or "\n" in label or "\r" in label:
                raise ValueError(
                    "label_names must be non-empty str without line breaks (they "
                    f"are written one per line to labels.txt); received {label!r}"
                )
    if task == "tag" and label_names is None:
        raise ValueError(
            "the 'tag' task needs label_names: the model's IOB2 tag names in id "
            "order ('O', 'B-PER', 'I-PER', ...), to name tags and find entities"
        )
    return model, tokenizer, task, label_names


def _infer_task_or_none(model):
    """`infer_task(model)`, or None for a model of any other class."""
    try:
        return infer_task(model)
    except ValueError:
        return None


class _Exporter:
    """Builds the serving functions of one model into a `keras.export.ExportArchive`."""

    def __init__(
        self,
        model,
        tokenizer,
        task,
        label_names,
        sequence_length,
        max_input_chars,
        max_answer_length,
        pair,
        truncation,
        asset_dir,
        long_inputs=None,
        padding="longest",
    ):
        self.model = model
        self.task = task
        self.max_input_chars = max_input_chars
        self.max_answer_length = max_answer_length
        self.pair = pair
        self.sequence_length = sequence_length
        self.padding = padding
        self.encoder = model if task == "embed" else model.encoder
        self.label_names = label_names
        self.archive = keras.export.ExportArchive()
        self.archive.track(model)
        self.preprocessor = BertPreprocessor(
            tokenizer, sequence_length=sequence_length, truncation=truncation
        )
        # Single-text classification reads long texts by the run's strategy (head by default).
        self.long_text = LongTextPreprocessor(
            tokenizer, sequence_length=sequence_length, **(long_inputs or {})
        )
        self.archive.track(tokenizer)
        if task == "tag":
            self.aligned = BertPreprocessor(
                tokenizer, sequence_length=sequence_length, return_alignment=True
            )
        elif task == "answer":
            # Question = segment A, kept whole; the context (segment B) is cut to fit.
            self.aligned = BertPreprocessor(
                tokenizer,
                sequence_length=sequence_length,
                truncation="only_second",
                return_alignment=True,
            )
        vocab_path = os.path.join(asset_dir, "vocab.txt")
        _write_lines(vocab_path, tokenizer.get_vocabulary(), "vocabulary tokens")
        self.vocabulary_size = len(tokenizer.get_vocabulary())
        # Tracked tables carry their text file into `<version>/assets/` (the vocabulary for
        # clients that tokenize themselves; the labels also serve the `labels` outputs).
        self.vocab_table = _line_table(vocab_path, key_is_line_number=False)
        self.archive.track(self.vocab_table)
        self.labels_table = None
        if label_names is not None:
            labels_path = os.path.join(asset_dir, "labels.txt")
            _write_lines(labels_path, label_names, "label_names")
            self.labels_table = _line_table(labels_path, key_is_line_number=True)
            self.archive.track(self.labels_table)

    # ------------------------------------------------------------------ pieces

    def _trimmed(self, packed):
        """`packed` cut to the batch's longest real row (see `kbert.export.dynamic_padding`)."""
        if self.padding == "fixed":
            return packed
        return trim_padding(packed, self.sequence_length)

    def _encoder_inputs(self, packed):
        return {key: packed[key] for key in ("token_ids", "segment_ids", "padding_mask")}

    def _label_strings(self, ids):
        if self.labels_table is None:
            return tf.strings.as_string(ids)
        return self.labels_table.lookup(tf.cast(ids, tf.int64))

    # ------------------------------------------------------------------ signatures

    def embed(self, text):
        (text,) = _checked_texts("embed", text=text)
        packed = self._trimmed(self.preprocessor(_clean(text, self.max_input_chars)))
        outputs = self.encoder(self._encoder_inputs(packed), training=False)
        sequence = tf.cast(outputs["sequence_output"], tf.float32)  # (batch, seq, hidden)
        mask = tf.cast(packed["padding_mask"], tf.float32)[:, :, None]  # (batch, seq, 1)
        total = tf.reduce_sum(sequence * mask, axis=1)  # (batch, hidden)
        count = tf.maximum(tf.reduce_sum(mask, axis=1), 1.0)  # (batch, 1)
        return {"cls_embedding": sequence[:, 0, :], "mean_embedding": total / count}

    def classify(self, text, text_pair=None):
        if text_pair is None:
            (text,) = _checked_texts("classify", text=text)
        else:
            text, text_pair = _checked_texts("classify", text=text, text_pair=text_pair)
        text = _clean(text, self.max_input_chars)
        if text_pair is None:
            packed = self._trimmed(self.long_text(text))
            rows = tf.cast(self.model(self._encoder_inputs(packed), training=False), tf.float32)
            logits = self.long_text.aggregate(rows, packed)  # (batch, classes)
            tokens, kept = packed["tokens"], packed["tokens_kept"]
        else:
            check = _same_batch(text, text_pair, "text", "text_pair")
            with tf.control_dependencies([check]):
                text_pair = tf.identity(_clean(text_pair, self.max_input_chars))
            packed = self._trimmed(self.preprocessor((text, text_pair)))
            logits = tf.cast(self.model(self._encoder_inputs(packed), training=False), tf.float32)
            tokenizer = self.preprocessor.tokenizer
            tokens = (
                tf.cast(
                    tokenizer(text).row_lengths() + tokenizer(text_pair).row_lengths(), tf.int32
                )
                + 3
            )  # (batch,) with [CLS] and two [SEP]
            kept = tf.reduce_sum(packed["padding_mask"], axis=1)
        if getattr(self.model, "multi_label", False):
            probabilities = tf.sigmoid(logits)  # (batch, classes)
        else:
            probabilities = tf.nn.softmax(logits, axis=-1)  # (batch, classes)
        label_ids = tf.argmax(probabilities, axis=-1, output_type=tf.int32)  # (batch,)
        return {
            "label_ids": label_ids,
            "labels": self._label_strings(label_ids),
            "probabilities": probabilities,
            "tokens": tokens,
            "tokens_kept": kept,
            "truncated": kept < tokens,
        }

    def tag(self, text):
        from kbert.export.graph_decoding import tag_outputs

        (text,) = _checked_texts("tag", text=text)
        text = _clean(text, self.max_input_chars)
        packed = self._trimmed(self.aligned(text))
        emissions = tf.cast(self.model(self._encoder_inputs(packed), training=False), tf.float32)
        outputs = dict(
            tag_outputs(
                emissions,
                packed["word_ids"],
                packed["start_offsets"],
                packed["end_offsets"],
                self.label_names,
                crf=self.model.crf_layer,
            )
        )
        outputs["entity_texts"] = _substrings(
            text, outputs["entity_starts"], outputs["entity_ends"]
        )
        return outputs

    def answer(self, question, context):
        from kbert.export.graph_decoding import answer_outputs

        question, context = _checked_texts("answer", question=question, context=context)
        check = _same_batch(question, context, "question", "context")
        with tf.control_dependencies([check]):
            question = tf.identity(_clean(question, self.max_input_chars))
            context = tf.identity(_clean(context, self.max_input_chars))
        packed = self._trimmed(self.aligned((question, context)))
        logits = self.model(self._encoder_inputs(packed), training=False)
        outputs = dict(
            answer_outputs(
                tf.cast(logits["start_logits"], tf.float32),
                tf.cast(logits["end_logits"], tf.float32),
                packed["segment_ids"],
                packed["padding_mask"],
                packed["start_offsets"],
                packed["end_offsets"],
                self.max_answer_length,
            )
        )
        outputs = {key: outputs[key] for key in ("answer_start", "answer_end", "score")}
        outputs["answer_text"] = _substrings(
            context, outputs["answer_start"], outputs["answer_end"]
        )
        return outputs

    def token_ids(self, token_ids, segment_ids, padding_mask):
        inputs = {"token_ids": token_ids, "segment_ids": segment_ids, "padding_mask": padding_mask}
        outputs = self.model(self._checked_token_inputs(inputs), training=False)
        if self.task == "classify":
            return {"logits": tf.cast(outputs, tf.float32)}
        if self.task == "tag":
            return {"emissions": tf.cast(outputs, tf.float32)}
        if self.task == "answer":
            return {
                key: tf.cast(outputs[key], tf.float32) for key in ("start_logits", "end_logits")
            }
        return {
            key: tf.cast(outputs[key], tf.float32) for key in ("sequence_output", "pooled_output")
        }

    def _checked_token_inputs(self, inputs):
        """The `token_ids` signature's inputs, asserted (batch, sequence) and in range first."""
        signature = "token_ids"
        ranks = [
            _assert_rank(value, 2, signature, name, "int32 tensor [batch, sequence]")
            for name, value in inputs.items()
        ]
        with tf.control_dependencies(ranks):  # the checks below need rank 2
            inputs = {name: tf.identity(value) for name, value in inputs.items()}
        shapes = {name: tf.shape(value) for name, value in inputs.items()}  # (2,) each
        same = tf.reduce_all(
            tf.stack(
                [
                    tf.equal(shapes[name], shapes["token_ids"])
                    for name in ("segment_ids", "padding_mask")
                ]
            )
        )
        message = tf.strings.format(
            f"signature {signature}: inputs segment_ids and padding_mask must have the shape "
            "of token_ids; received token_ids {}, segment_ids {}, padding_mask {}",
            tuple(shapes.values()),
        )
        checks = [tf.debugging.Assert(same, [message])]
        # A kbert encoder states its table sizes; another encoder (a TF Hub module wrapped by
        # kbert.hub) reads the exported vocabulary, and its segment table size is unknown.
        config = getattr(self.encoder, "config", None)
        vocabulary_size = getattr(config, "vocabulary_size", None) or self.vocabulary_size
        checks.append(
            _assert_in_range(
                inputs["token_ids"],
                0,
                vocabulary_size,
                signature,
                "token_ids",
                f"ids in [0, {vocabulary_size}) (vocabulary_size)",
            )
        )
        num_segments = getattr(config, "num_segments", None)
        if num_segments:  # without a segment table the model ignores segment_ids
            checks.append(
                _assert_in_range(
                    inputs["segment_ids"],
                    0,
                    num_segments,
                    signature,
                    "segment_ids",
                    f"ids in [0, {num_segments}) (num_segments)",
                )
            )
        checks.append(
            _assert_in_range(
                inputs["padding_mask"],
                0,
                2,
                signature,
                "padding_mask",
                "values 0 (padding) or 1 (token)",
            )
        )
        with tf.control_dependencies(checks):
            return {name: tf.identity(value) for name, value in inputs.items()}

    def add_endpoints(self):
        """Registers every signature; the task's own one first, so it is serving_default."""
        string = tf.TensorSpec([None], tf.string)
        ids = tf.TensorSpec([None, None], tf.int32)
        if self.task == "classify":
            if self.pair:

                def classify(text, text_pair):
                    return self.classify(text, text_pair)

                main = (classify, [string] * 2)
            else:

                def classify(text):
                    return self.classify(text)

                main = (classify, [string])
        elif self.task == "tag":
            main = (self.tag, [string])
        elif self.task == "answer":
            main = (self.answer, [string] * 2)
        else:
            main = None
        endpoints = []
        if main is not None:
            endpoints.append((_DEFAULT_SIGNATURE[self.task],) + main)
        endpoints.append(("embed", self.embed, [string]))
        endpoints.append(("token_ids", self.token_ids, [ids] * 3))
        for name, fn, signature in endpoints:
            self.archive.add_endpoint(name, fn, input_signature=signature)
        return [name for name, _, _ in endpoints]


def _verify(path, signature_names, pair, task):
    """Loads the written SavedModel and runs every signature on a two-row batch."""
    loaded = load_exported(path)
    texts = tf.constant(["kbert export check", ""])
    ids = tf.constant([[0, 0, 0], [0, 0, 0]], tf.int32)
    for name in ("serving_default",) + tuple(signature_names):
        function = loaded.signatures[name]
        arguments = {"text": texts}
        if name == "token_ids":
            arguments = {"token_ids": ids, "segment_ids": ids, "padding_mask": tf.ones_like(ids)}
        elif name in ("answer",) or (name == "serving_default" and task == "answer"):
            arguments = {"question": texts, "context": texts}
        elif pair and (name == "classify" or (name == "serving_default" and task == "classify")):
            arguments = {"text": texts, "text_pair": texts}
        outputs = function(**arguments)
        for key, value in outputs.items():
            if value.shape[0] != 2:
                raise RuntimeError(
                    f"signature {name!r} output {key!r} has shape {value.shape} "
                    "for a batch of 2 in the verification run"
                )


def export_saved_model(
    model,
    tokenizer,
    export_dir,
    name,
    version=None,
    task=None,
    label_names=None,
    sequence_length=None,
    max_input_chars=None,
    max_answer_length=30,
    pair=False,
    padding="longest",
):
    """Writes a TF Serving SavedModel of a kbert model with its tokenizer in the graph.

    The result is `<export_dir>/<name>/<version>/` with `saved_model.pb`, `variables/` and
    `assets/vocab.txt` (+ `assets/labels.txt` when there are label names). It is written into
    a hidden sibling directory, loaded and run once, then renamed into place, so the version
    directory appears complete or not at all; on any failure the partial directory is removed
    and existing versions stay untouched. An existing version is never replaced.

    Signatures (see the module docstring's table): `serving_default` and the task's own one
    (`classify`, `tag` or `answer`; for a bare Encoder `serving_default` is `embed`), `embed`
    (`cls_embedding`: the top layer's [CLS] vector; `mean_embedding`: the mean of
    `sequence_output` over the real tokens, [CLS] and [SEP] included), and `token_ids` for
    clients that tokenize themselves (raw float32 model outputs).

    Classification: `probabilities` is a softmax over the classes, or one sigmoid per class for
    a `multi_label` classifier; `label_ids`/`labels` are the arg-max class (for multi-label
    clients threshold `probabilities` themselves). Every text also reports `tokens` (its length
    with the special tokens), `tokens_kept` (what the model read) and `truncated`. Without `label_names`, `labels` holds the
    class ids as strings. Question answering: `question` is segment A, `context` segment B of
    one window of `sequence_length` tokens; the question is kept and the context cut to fit
    ("only_second" truncation), so an answer beyond the window is not found; `answer_start`
    and `answer_end` are character offsets into the (cleaned, cut) context, end exclusive;
    with no candidate span (an empty context) they are -1, `answer_text` "" and `score` -inf.
    Tagging: needs IOB2 `label_names`; tags are read at each word's first subword (Viterbi
    under IOB2 constraints when the model has a CRF), entity spans are character offsets into
    the cleaned, cut text, and words past the window's `sequence_length` get no tag.

    Args:
        model: a `SequenceClassifier`, `TokenClassifier`, `QuestionAnswerer` or `Encoder`, any
            dtype policy (outputs are cast to float32).
        tokenizer: `kbert.text.WordPieceTokenizer` or `SentencePieceTokenizer`, or a
            `BertPreprocessor` (a classification run's, `kbert.runs.read_run`), whose
            tokenizer, `sequence_length` and `truncation` are then used, or a
            `LongTextPreprocessor`, whose long-input strategy `classify` then applies in the
            graph (head, head + tail, or sliding windows whose logits are averaged or
            max-pooled per text).
        export_dir: str or `os.PathLike`, the model base directory's parent.
        name: str, the model name (TF Serving's `model_name`), a plain directory name.
        version: int >= 0 or None, default None: 1 + the highest existing numeric version (1
            if none).
        task: str or None, default None: inferred from the model's class. One of `TASKS`;
            "embed" on a task model exports only its encoder.
        label_names: sequence of str or None, default None. Class names ("classify") or tag
            names ("tag", IOB2 names give entities), one per model class.
        sequence_length: int or None, default None: the preprocessor's, else 128. Tokens per
            packed row, from 3 to the model's `max_sequence_length` (its position table).
        max_input_chars: int or None, default None: `CHARS_PER_TOKEN * sequence_length` (4096
            for 128), or `LONG_INPUT_CHARS` (200,000) for head + tail and window strategies.
            Characters kept of each input before tokenization.
        max_answer_length: int, default 30. Most tokens in an answer ("answer" task).
        pair: bool, default False. The classifier was trained on text pairs: `classify` and
            `serving_default` then take `text` and `text_pair`.
        padding: "longest" (default) or "fixed". With "longest" the text signatures run the
            model on each batch cut to its longest real row, rounded up to a multiple of 8
            and at most `sequence_length` (`kbert.export.dynamic_padding`): the outputs are
            the same up to float rounding, and short texts cost far less. "fixed" runs every
            row at `sequence_length`.

    Returns:
        str, the final version directory.

    Raises:
        ValueError: for a tokenizer that cannot run in the graph, an unknown task, a model that
            does not fit the task, label names not one per class, a bad number (a
            `sequence_length` beyond the position table), an `export_dir` that is a file or not
            writable (see `check_export_dir`), or a version directory that already exists.

    Example:
    >>> from kbert.models import Encoder
    >>> from kbert.text import WordPieceTokenizer
    >>> vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world"]
    >>> encoder = Encoder.from_preset("tiny", vocabulary_size=len(vocabulary))
    >>> path = export_saved_model(encoder, WordPieceTokenizer(vocabulary), "/tmp/models",
    ...                           "embedder")  # doctest: +SKIP
    >>> load_exported(path).signatures["embed"](text=tf.constant(["hello"]))  # doctest: +SKIP
    """
    truncation, long_inputs = "longest_first", None
    if isinstance(tokenizer, BertPreprocessor):
        truncation = tokenizer.truncation
        if sequence_length is None:
            sequence_length = tokenizer.sequence_length
    if isinstance(tokenizer, LongTextPreprocessor):
        long_inputs = {
            key: getattr(tokenizer, key)
            for key in ("strategy", "head_tokens", "stride", "max_windows")
        }
        if pair:
            raise ValueError(
                "a LongTextPreprocessor reads single texts; pair=True needs a "
                "BertPreprocessor or a WordPieceTokenizer"
            )
        if sequence_length is None:
            sequence_length = tokenizer.sequence_length
    if sequence_length is None:
        sequence_length = 128
    if max_input_chars is None and long_inputs and long_inputs["strategy"] != "head":
        max_input_chars = LONG_INPUT_CHARS
    if max_input_chars is None and isinstance(sequence_length, int):
        max_input_chars = CHARS_PER_TOKEN * sequence_length
    model, tokenizer, task, label_names = _check_arguments(
        model,
        tokenizer,
        task,
        label_names,
        sequence_length,
        max_input_chars,
        max_answer_length,
        version,
    )
    _check_name(name)
    if padding not in PADDINGS:
        raise ValueError(f"padding must be one of {PADDINGS}; received {padding!r}")
    if pair and task != "classify":
        raise ValueError(f"pair=True is for the 'classify' task; received task {task!r}")
    encoder = model if task == "embed" else getattr(model, "encoder", None)
    positions = getattr(getattr(encoder, "config", None), "max_sequence_length", None)
    if positions is not None and sequence_length > positions:
        raise ValueError(
            f"sequence_length {sequence_length} is longer than the model can read: "
            f"its position table has {positions} positions; expected at most "
            f"{positions}"
        )

    def write(temporary):
        with tempfile.TemporaryDirectory(prefix="kbert-assets-") as asset_dir:
            exporter = _Exporter(
                model,
                tokenizer,
                task,
                label_names,
                sequence_length,
                max_input_chars,
                max_answer_length,
                bool(pair),
                truncation,
                asset_dir,
                long_inputs,
                padding,
            )
            signature_names = exporter.add_endpoints()
            exporter.archive.write_out(temporary, verbose=False)
        return signature_names

    return write_new_version(
        export_dir,
        name,
        version,
        write,
        lambda temporary, signature_names: _verify(temporary, signature_names, bool(pair), task),
    )
