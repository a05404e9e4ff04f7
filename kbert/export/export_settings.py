"""What a SavedModel export is asked for (`ExportSettings`) and its checked, filled-in form.

`ExportSettings` holds the choices a caller makes; `resolve_settings` checks them against the
model and tokenizer and fills in every default (the task from the model's class, the sequence
length and truncation from a preprocessor, the character cut from the sequence length), giving the
`SignatureSettings` every signature builder reads.
"""

import dataclasses

from kbert.checks import check_int
from kbert.export.warmup_requests import MAX_WARMUP_REQUESTS, warmup_request_count
from kbert.text import BertPreprocessor, LongTextPreprocessor, WordPieceTokenizer
from kbert.text.graph_tokenizers import GRAPH_TOKENIZERS
from kbert.train.precision import resolve_dtype

TASKS = ("classify", "tag", "answer", "embed")
# "longest": each batch runs at its longest real row (rounded up to a multiple of 8);
# "fixed": every row at `sequence_length` (the behaviour before, kept to measure against).
PADDINGS = ("longest", "fixed")
# What the exported graph computes in; "auto" is bfloat16 where it is measured faster here.
DTYPES = ("float32", "bfloat16", "auto")
# The most rows `xla_rows` may send through XLA: every rows count up to it compiles once per
# padded length when the server loads the model, so the bound keeps that load short.
MAX_XLA_ROWS = 32

# Characters kept per input for each token of `sequence_length`: English WordPiece tokens
# average about 4 characters, and 8x headroom keeps every input that could fill the window.
CHARS_PER_TOKEN = 32
# Head + tail and sliding windows read a whole document: keep up to this many characters (a long
# IMDb review has 14k; the cost is one window per `sequence_length - 2` tokens).
LONG_INPUT_CHARS = 200_000
# The model class each task needs, by name (for the error).
_TASK_MODELS = {
    "classify": "SequenceClassifier",
    "tag": "TokenClassifier",
    "answer": "QuestionAnswerer",
}


@dataclasses.dataclass(frozen=True)
class ExportSettings:
    """What to export of a model: its task, labels, window and input limits.

    Args:
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
        dtype: "float32" (default), "bfloat16" or "auto". What the exported model computes
            in; every signature's outputs are float32 either way. "bfloat16" runs the encoder
            under Keras's "mixed_bfloat16" policy (float32 variables, bfloat16 matmuls; see
            `kbert.export.model_in_dtype`): faster on CPUs with AVX-512 BF16 or AMX and on
            GPUs with bfloat16 units, slower where bfloat16 is emulated. "auto" picks bfloat16
            by the exporting machine's features (a GPU of compute capability 8.0 or later, or
            a CPU flag of `kbert.train.precision.BF16_CPU_FLAGS`), not by a timed run: export
            on a machine of the serving machine's kind. A model built under another policy is
            rebuilt in the chosen one with the same weights; the model passed in is unchanged.
        xla_rows: int from 0 to `MAX_XLA_ROWS`, default 0 (off). Batches of at most this many
            rows (packed rows: texts, or windows for a window strategy) run the model through
            XLA (`jit_compile`, `kbert.export.signatures.serving_graph`); larger batches keep
            TensorFlow's own kernels. XLA fuses the many small ops of a short request into a
            few kernels, which pays at small batches on a CPU (`benchmarks/serving.py`, side
            `kbert_xla`); each (rows, padded length) compiles once, so the export writes
            `assets.extra/tf_serving_warmup_requests` with one request per pair
            (`kbert.export.warmup_requests`) and TF Serving compiles them all while it loads
            the model. TF Serving runs such a model only when started with
            `--xla_cpu_compilation_enabled=true` (docs/deploy.md).

    Example:
    >>> ExportSettings(label_names=["NEG", "POS"], sequence_length=64).padding
    'longest'
    """

    task: str | None = None
    label_names: tuple | list | None = None
    sequence_length: int | None = None
    max_input_chars: int | None = None
    max_answer_length: int = 30
    pair: bool = False
    padding: str = "longest"
    dtype: str = "float32"
    xla_rows: int = 0

    def __post_init__(self):
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {DTYPES}; received {self.dtype!r}")
        check_int(
            "xla_rows",
            self.xla_rows,
            minimum=0,
            maximum=MAX_XLA_ROWS,
            expected=f"an int from 0 (off) to {MAX_XLA_ROWS}",
        )


@dataclasses.dataclass(frozen=True)
class SignatureSettings:
    """`ExportSettings` checked against one model and tokenizer, every default filled in.

    `truncation` and `long_inputs` come from the tokenizer argument: a `BertPreprocessor`'s
    truncation, a `LongTextPreprocessor`'s strategy (a dict of its `strategy`, `head_tokens`,
    `stride` and `max_windows`), else "longest_first" and None. `dtype` is what the model
    computes in, "float32" or "bfloat16" ("auto" resolved by `resolve_export_dtype`).
    """

    task: str
    label_names: list | None
    sequence_length: int
    max_input_chars: int
    max_answer_length: int
    pair: bool
    padding: str
    truncation: str = "longest_first"
    long_inputs: dict | None = None
    dtype: str = "float32"
    xla_rows: int = 0


def resolve_export_dtype(dtype, cpuinfo="/proc/cpuinfo"):
    """What an export computes in: `dtype` itself, or for "auto" bfloat16 where it is faster.

    "auto" asks `kbert.train.precision.resolve_dtype(task="inference")`: a GPU of compute
    capability 8.0 or later, or a CPU with a flag of `BF16_CPU_FLAGS` in `cpuinfo` on which a
    timed forward pass of a small transformer runs faster in bfloat16 (measured once per machine
    and cached). It decides for the exporting machine: export on one of the serving machine's kind.

    Args:
        dtype: str, one of `DTYPES`.
        cpuinfo: str, default "/proc/cpuinfo". Where the CPU flags are read (tests pass a file).

    Returns:
        "float32" or "bfloat16".

    Raises:
        ValueError: an unknown dtype.

    Example:
    >>> resolve_export_dtype("bfloat16")
    'bfloat16'
    """
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}; received {dtype!r}")
    if dtype != "auto":
        return dtype
    chosen = resolve_dtype("auto", cpuinfo, task="inference")
    return "bfloat16" if chosen == "mixed_bfloat16" else "float32"


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


def _infer_task_or_none(model):
    """`infer_task(model)`, or None for a model of any other class."""
    try:
        return infer_task(model)
    except ValueError:
        return None


def _from_tokenizer(tokenizer, settings):
    """(truncation, long_inputs, sequence_length) that a preprocessor argument brings."""
    truncation, long_inputs, sequence_length = "longest_first", None, settings.sequence_length
    if isinstance(tokenizer, BertPreprocessor):
        truncation = tokenizer.truncation
        if sequence_length is None:
            sequence_length = tokenizer.sequence_length
    if isinstance(tokenizer, LongTextPreprocessor):
        long_inputs = {
            key: getattr(tokenizer, key)
            for key in ("strategy", "head_tokens", "stride", "max_windows")
        }
        if settings.pair:
            raise ValueError(
                "a LongTextPreprocessor reads single texts; pair=True needs a "
                "BertPreprocessor or a WordPieceTokenizer"
            )
        if sequence_length is None:
            sequence_length = tokenizer.sequence_length
    if sequence_length is None:
        sequence_length = 128
    return truncation, long_inputs, sequence_length


def _default_max_input_chars(settings, long_inputs, sequence_length):
    max_input_chars = settings.max_input_chars
    if max_input_chars is None and long_inputs and long_inputs["strategy"] != "head":
        max_input_chars = LONG_INPUT_CHARS
    if max_input_chars is None and isinstance(sequence_length, int):
        max_input_chars = CHARS_PER_TOKEN * sequence_length
    return max_input_chars


def _graph_tokenizer(tokenizer):
    if isinstance(tokenizer, (BertPreprocessor, LongTextPreprocessor)):
        tokenizer = tokenizer.tokenizer
    if not isinstance(tokenizer, GRAPH_TOKENIZERS):
        raise ValueError(
            "tokenizer must be a kbert.text.WordPieceTokenizer or a SentencePieceTokenizer or "
            "GraphBytePairTokenizer (or a BertPreprocessor holding one): only those tokenizers "
            "can be put inside the serving "
            f"graph; received {type(tokenizer).__name__}"
        )
    return tokenizer


def _task_and_model(model, tokenizer, task):
    """(task, the model to export): the model itself, or its encoder for "embed"."""
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
    expected = _TASK_MODELS.get(task)
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
    return task, model


def _check_numbers(sequence_length, max_input_chars, max_answer_length):
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


def _checked_label_names(model, task, label_names):
    """`label_names` as a list, checked to name each of the model's classes (or tags)."""
    classes = {"classify": "num_classes", "tag": "num_tags"}.get(task)
    classes = None if classes is None else getattr(model, classes)
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
    return label_names


def check_fits(model, settings):
    """Refuses a padding, pair or window the model or task cannot take.

    Args:
        model: the model `resolve_settings` returned.
        settings: its `SignatureSettings`.

    Raises:
        ValueError: an unknown padding, `pair` for a task other than "classify", more warm-up
            requests than TF Serving loads (`xla_rows` × padded lengths), or a
            `sequence_length` beyond the model's position table.
    """
    task = settings.task
    if settings.padding not in PADDINGS:
        raise ValueError(f"padding must be one of {PADDINGS}; received {settings.padding!r}")
    if settings.pair and task != "classify":
        raise ValueError(f"pair=True is for the 'classify' task; received task {task!r}")
    requests = warmup_request_count(settings)
    if requests > MAX_WARMUP_REQUESTS:
        lengths = requests // settings.xla_rows
        raise ValueError(
            f"xla_rows {settings.xla_rows} × {lengths} padded lengths (sequence_length "
            f"{settings.sequence_length}, padding {settings.padding!r}) makes {requests} warm-up "
            f"requests, and TF Serving refuses to load a version with more than "
            f"{MAX_WARMUP_REQUESTS}: use xla_rows of at most {MAX_WARMUP_REQUESTS // lengths}"
        )
    encoder = model if task == "embed" else getattr(model, "encoder", None)
    positions = getattr(getattr(encoder, "config", None), "max_sequence_length", None)
    if positions is not None and settings.sequence_length > positions:
        raise ValueError(
            f"sequence_length {settings.sequence_length} is longer than the model can read: "
            f"its position table has {positions} positions; expected at most "
            f"{positions}"
        )


def resolve_settings(model, tokenizer, settings, version=None):
    """Checks `settings` against a model and tokenizer and fills in every default.

    What the padding, pair and window ask of the model is checked by `check_fits`.

    Args:
        model: what `export_saved_model` was given.
        tokenizer: a graph tokenizer, or a `BertPreprocessor` / `LongTextPreprocessor`.
        settings: `ExportSettings`.
        version: int >= 0 or None, default None: checked here too, so a bad version fails
            before any graph is built.

    Returns:
        (model, tokenizer, `SignatureSettings`): the model to export (an "embed" export of a
        task model is its encoder) and the bare graph tokenizer.

    Raises:
        ValueError: see `export_saved_model`.
    """
    if not isinstance(settings, ExportSettings):
        raise ValueError(
            f"settings must be a kbert.export.ExportSettings; received {type(settings).__name__}"
        )
    truncation, long_inputs, sequence_length = _from_tokenizer(tokenizer, settings)
    max_input_chars = _default_max_input_chars(settings, long_inputs, sequence_length)
    tokenizer = _graph_tokenizer(tokenizer)
    task, model = _task_and_model(model, tokenizer, settings.task)
    _check_numbers(sequence_length, max_input_chars, settings.max_answer_length)
    if version is not None:
        check_int(
            "version", version, minimum=0, expected="an int >= 0 (TF Serving's version directory)"
        )
    resolved = SignatureSettings(
        task=task,
        label_names=_checked_label_names(model, task, settings.label_names),
        sequence_length=sequence_length,
        max_input_chars=max_input_chars,
        max_answer_length=settings.max_answer_length,
        pair=bool(settings.pair),
        padding=settings.padding,
        truncation=truncation,
        long_inputs=long_inputs,
        dtype=resolve_export_dtype(settings.dtype),
        xla_rows=settings.xla_rows,
    )
    return model, tokenizer, resolved
