"""Tokenizing many texts with character offsets, for the Python-side featurizers."""

import numpy as np

# Texts per `tokenize_with_alignment` call: one in-graph op per batch, fast enough for SQuAD.
_BATCH = 1024


def tokenize_with_offsets(tokenizer, texts):
    """Tokenizes `texts` in batches of 1,024.

    Args:
        tokenizer: `kbert.text.WordPieceTokenizer`.
        texts: sequence of str.

    Returns:
        One `(token_ids, start_offsets, end_offsets)` triple of int32 numpy arrays per text;
        offsets are character spans in the text, end exclusive.
    """
    pieces = []
    for begin in range(0, len(texts), _BATCH):
        outputs = tokenizer.tokenize_with_alignment(list(texts[begin : begin + _BATCH]))
        splits = outputs["token_ids"].row_splits.numpy()[1:-1]
        columns = [
            np.split(outputs[key].flat_values.numpy().astype(np.int32), splits)
            for key in ("token_ids", "start_offsets", "end_offsets")
        ]
        pieces += list(zip(*columns, strict=True))
    return pieces
