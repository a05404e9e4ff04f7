"""The toy sentiment task the CLI tests share: a ten-word vocabulary, its tiny checkpoint,
TSV rows ("the movie was good" → pos) and the flags of a small `kbert finetune`."""

from kbert.checkpoints import save_pretrained
from kbert.models import Encoder
from kbert.text import WordPieceTokenizer

WORDS = ["good", "great", "fine", "bad", "awful", "poor", "movie", "plot", "the", "was"]
VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS


def save_tiny_model(path, vocabulary=VOCABULARY, max_sequence_length=32):
    """A tiny kbert checkpoint at `path` whose tokenizer reads `vocabulary`; returns `path`."""
    encoder = Encoder.from_preset(
        "tiny", vocabulary_size=len(vocabulary), max_sequence_length=max_sequence_length
    )
    return save_pretrained(encoder, WordPieceTokenizer(vocabulary), path)


def write_tsv(path, rows):
    """Writes `rows` (lists of columns) as a TSV file; returns its path as a str."""
    path.write_text("".join("\t".join(row) + "\n" for row in rows))
    return str(path)


def sentiment_rows(count, pair=False):
    """`count` rows alternating pos and neg, with a second text when `pair`."""
    rows = []
    for i in range(count):
        positive = i % 2 == 0
        text = f"the movie was {'good' if positive else 'bad'}"
        row = [text, "the plot was fine"] if pair else [text]
        rows.append(row + ["pos" if positive else "neg"])
    return rows


def finetune_arguments(output_dir, model, train, test, *extra):
    """`kbert finetune` arguments on TSV files: 16 tokens, batches of 4, then `extra`."""
    return [
        "finetune",
        "--task",
        "files",
        "--train-file",
        train,
        "--test-file",
        test,
        "--model",
        str(model),
        "--output-dir",
        str(output_dir),
        "--sequence-length",
        "16",
        "--batch-size",
        "4",
        *extra,
    ]
