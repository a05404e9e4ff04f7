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

Small batches through XLA: `ExportSettings(xla_rows=n)` runs batches of at most `n` rows through
an XLA-compiled copy of the model (`kbert.export.signatures.serving_graph`) and writes TF Serving's
warm-up file, one request per shape that copy can meet (`kbert.export.warmup_requests`); TF
Serving needs `--xla_cpu_compilation_enabled=true` to run it.

Dtype: `ExportSettings(dtype="bfloat16")` exports a copy of the model that computes in bfloat16
(float32 variables, Keras's "mixed_bfloat16" policy; `kbert.export.model_in_dtype`); the
signatures and their float32 outputs stay the same. "auto" picks bfloat16 where the exporting
machine computes it natively. The settings the export was written with, the resolved dtype
among them, are in `<version>/assets.extra/kbert_export.json`, where a server operator can read
them (`kbert.export.read_export_settings`); TF Serving and the SavedModel loader ignore it.

What to export is an `ExportSettings` (`kbert.export.export_settings`); each signature is built by
its task's module under `kbert.export.signatures`; `kbert.export.saved_model_files` numbers, writes
and loads the version directories.
"""

import dataclasses
import tempfile

import tensorflow as tf

from kbert.export.export_settings import ExportSettings, check_fits, resolve_settings
from kbert.export.model_in_dtype import model_in_dtype
from kbert.export.saved_model_files import (
    check_name,
    load_exported,
    write_new_version,
    write_settings_record,
)
from kbert.export.signatures import classification, embedding, question_answering, tagging
from kbert.export.signatures import token_ids as token_ids_signature
from kbert.export.signatures.serving_graph import ServingGraph
from kbert.export.warmup_requests import (
    read_warmup_requests,
    warmup_batches,
    write_warmup_requests,
)

_STRING = tf.TensorSpec([None], tf.string)
_IDS = tf.TensorSpec([None, None], tf.int32)


def _task_signature(graph):
    """(name, function, input specs) of the task's own signature; None for a bare encoder."""
    task = graph.settings.task
    if task == "classify" and graph.settings.pair:

        def classify_pair(text, text_pair):
            return classification.classify(graph, text, text_pair)

        return "classify", classify_pair, [_STRING] * 2
    if task == "classify":

        def classify(text):
            return classification.classify(graph, text)

        return "classify", classify, [_STRING]
    if task == "tag":

        def tag(text):
            return tagging.tag(graph, text)

        return "tag", tag, [_STRING]
    if task == "answer":

        def answer(question, context):
            return question_answering.answer(graph, question, context)

        return "answer", answer, [_STRING] * 2
    return None


def _add_signatures(graph):
    """Registers every signature; the task's own one first, so it is serving_default."""

    def embed(text):
        return embedding.embed(graph, text)

    def packed_ids(token_ids, segment_ids, padding_mask):
        return token_ids_signature.token_ids(graph, token_ids, segment_ids, padding_mask)

    main = _task_signature(graph)
    endpoints = [] if main is None else [main]
    endpoints += [("embed", embed, [_STRING]), ("token_ids", packed_ids, [_IDS] * 3)]
    for name, function, signature in endpoints:
        graph.archive.add_endpoint(name, function, input_signature=signature)
    return [name for name, _, _ in endpoints]


def _verification_inputs(name, settings):
    """A two-row batch for signature `name`: a short text and an empty one, or zero ids."""
    texts = tf.constant(["kbert export check", ""])
    ids = tf.constant([[0, 0, 0], [0, 0, 0]], tf.int32)
    if name == "token_ids":
        return {"token_ids": ids, "segment_ids": ids, "padding_mask": tf.ones_like(ids)}
    if name == "answer" or (name == "serving_default" and settings.task == "answer"):
        return {"question": texts, "context": texts}
    task_signature = name == "classify" or (
        name == "serving_default" and settings.task == "classify"
    )
    if settings.pair and task_signature:
        return {"text": texts, "text_pair": texts}
    return {"text": texts}


def _verify(path, signature_names, settings):
    """Loads the written SavedModel and runs every signature on a two-row batch, and the
    smallest and largest of the warm-up requests (TF Serving refuses to load a version whose
    warm-up fails)."""
    loaded = load_exported(path)
    for name in ("serving_default",) + tuple(signature_names):
        outputs = loaded.signatures[name](**_verification_inputs(name, settings))
        for key, value in outputs.items():
            if value.shape[0] != 2:
                raise RuntimeError(
                    f"signature {name!r} output {key!r} has shape {value.shape} "
                    "for a batch of 2 in the verification run"
                )
    requests = read_warmup_requests(path)
    for name, inputs in requests[:1] + requests[-1:]:
        loaded.signatures[name](**{key: tf.constant(value) for key, value in inputs.items()})


def export_saved_model(model, tokenizer, export_dir, name, settings=None, version=None):
    """Writes a TF Serving SavedModel of a kbert model with its tokenizer in the graph.

    The result is `<export_dir>/<name>/<version>/` with `saved_model.pb`, `variables/` and
    `assets/vocab.txt` (+ `assets/labels.txt` when there are label names), and the settings
    it was written with in `assets.extra/kbert_export.json`. It is written into
    a hidden sibling directory, loaded and run once, then renamed into place, so the version
    directory appears complete or not at all; on any failure the partial directory is removed
    and existing versions stay untouched. An existing version is never replaced.

    Signatures (see the module docstring's table): `serving_default` and the task's own one
    (`classify`, `tag` or `answer`, built in `kbert.export.signatures`; for a bare Encoder
    `serving_default` is `embed`), `embed`, and `token_ids` for clients that tokenize
    themselves (raw float32 model outputs). Without `label_names`, `labels` holds the class
    ids as strings.

    Args:
        model: a `SequenceClassifier`, `TokenClassifier`, `QuestionAnswerer` or `Encoder`, any
            dtype policy (outputs are cast to float32); the export computes in
            `settings.dtype`, on a copy when the model's policy computes in another dtype.
        tokenizer: `kbert.text.WordPieceTokenizer` or `SentencePieceTokenizer`, or a
            `BertPreprocessor` (a classification run's, `kbert.runs.read_run`), whose
            tokenizer, `sequence_length` and `truncation` are then used, or a
            `LongTextPreprocessor`, whose long-input strategy `classify` then applies in the
            graph (head, head + tail, or sliding windows whose logits are averaged or
            max-pooled per text).
        export_dir: str or `os.PathLike`, the model base directory's parent.
        name: str, the model name (TF Serving's `model_name`), a plain directory name.
        settings: `ExportSettings` or None, default None (`ExportSettings()`: the task from
            the model's class, no label names, the preprocessor's length or 128).
        version: int >= 0 or None, default None: 1 + the highest existing numeric version (1
            if none).

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
    ...                           "embedder", ExportSettings(sequence_length=16))  # doctest: +SKIP
    >>> load_exported(path).signatures["embed"](text=tf.constant(["hello"]))  # doctest: +SKIP
    """
    settings = ExportSettings() if settings is None else settings
    model, tokenizer, resolved = resolve_settings(model, tokenizer, settings, version)
    check_name(name)
    check_fits(model, resolved)
    model = model_in_dtype(model, resolved.dtype)

    def write(temporary):
        with tempfile.TemporaryDirectory(prefix="kbert-assets-") as asset_dir:
            graph = ServingGraph(model, tokenizer, resolved, asset_dir)
            signature_names = _add_signatures(graph)
            graph.archive.write_out(temporary, verbose=False)
            if resolved.xla_rows:
                write_warmup_requests(temporary, name, signature_names[0], warmup_batches(graph))
        write_settings_record(
            temporary, {**dataclasses.asdict(resolved), "requested_dtype": settings.dtype}
        )
        return signature_names

    return write_new_version(
        export_dir,
        name,
        version,
        write,
        lambda temporary, signature_names: _verify(temporary, signature_names, resolved),
    )
