"""Parity of kbert with the references on a real checkpoint and real sentences.

- Encoder: kbert's `Encoder` vs keras-hub's `BertBackbone.from_preset(DIR)` on every TREC-6 test
  and SST-2 dev sentence: max |Δ sequence_output| over real (non-padding) tokens, and the minimum
  cosine between mean-pooled sentence embeddings. keras-hub computes BERT's GELU with the tanh
  approximation whatever the checkpoint says, so kbert is compared with the same activation;
  kbert's default import (exact GELU, the checkpoint's meaning) is reported beside it.
- Tokenizer: token ids identical to Hugging Face `tokenizers` reading the checkpoint's
  tokenizer.json, on all TREC-6 (train + test) and SST-2 dev sentences.

    python benchmarks/parity.py --checkpoint minilm_l6 --data-dir ../shared/data
    python -m benchmarks.parity --record docs/results/parity.json

The last line is JSON: `sentences`, `encoder_max_abs_diff`, `embedding_min_cosine`,
`tokenizer_agreement` (plus details).
"""

import argparse
import json
import time

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import numpy as np

from kbert.checkpoints import (
    load_hf_bert_encoder,
    load_hf_bert_tokenizer,
    resolve_checkpoint,
)
from kbert.data import read_sst2, read_trec
from kbert.run_records import add_record_argument, record_if_requested
from kbert.text import BertPreprocessor, tokenizer_agreement


def run_encoder(encoder, batches):
    """Returns per-batch sequence outputs as float64 numpy arrays."""
    return [np.asarray(encoder(inputs)["sequence_output"], np.float64) for inputs in batches]


def mean_pool(sequence, mask):
    mask = mask[..., None].astype(np.float64)
    return (sequence * mask).sum(1) / mask.sum(1)


def compare(kbert_outputs, reference_outputs, batches):
    max_diff, min_cosine = 0.0, 1.0
    for ours, theirs, inputs in zip(kbert_outputs, reference_outputs, batches, strict=True):
        real = np.asarray(inputs["padding_mask"]).astype(bool)
        max_diff = max(max_diff, float(np.abs(ours - theirs)[real].max()))
        a = mean_pool(ours, real)
        b = mean_pool(theirs, real)
        cosine = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
        min_cosine = min(min_cosine, float(cosine.min()))
    return max_diff, min_cosine


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--checkpoint",
        default="minilm_l6",
        help="Hugging Face BERT directory, or 'minilm_l6' (default)",
    )
    parser.add_argument(
        "--data-dir",
        default=None,
        help="dataset directory (default: KBERT_DATA_DIR, then ../shared/data)",
    )
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--sequence-length", type=int, default=128)
    add_record_argument(parser)
    args = parser.parse_args()

    import keras_hub

    checkpoint = resolve_checkpoint(args.checkpoint)
    trec_train, _ = read_trec("train", data_dir=args.data_dir)
    trec_test, _ = read_trec("test", data_dir=args.data_dir)
    sst2_dev, _ = read_sst2("dev", data_dir=args.data_dir)

    # === Tokenizer ===
    tokenizer = load_hf_bert_tokenizer(checkpoint)
    start = time.perf_counter()
    report = tokenizer_agreement(
        tokenizer, checkpoint / "tokenizer.json", trec_train + trec_test + sst2_dev
    )
    print(
        f"tokenizer: {report.num_identical}/{report.num_texts} texts identical to HF tokenizers "
        f"({report.fraction:.2%}) in {time.perf_counter() - start:.1f} s"
    )
    for mismatch in report.mismatches[:5]:
        print(
            "  mismatch:",
            mismatch["text"][:80],
            mismatch["expected_tokens"][:12],
            mismatch["received_tokens"][:12],
        )

    # === Encoder ===
    sentences = trec_test + sst2_dev
    preprocessor = BertPreprocessor(tokenizer, sequence_length=args.sequence_length)
    batches = [
        preprocessor(sentences[i : i + args.batch_size])
        for i in range(0, len(sentences), args.batch_size)
    ]
    reference = run_encoder(keras_hub.models.BertBackbone.from_preset(str(checkpoint)), batches)
    same_activation = run_encoder(
        load_hf_bert_encoder(checkpoint, activation="gelu_approximate"), batches
    )
    exact = run_encoder(load_hf_bert_encoder(checkpoint), batches)
    max_diff, min_cosine = compare(same_activation, reference, batches)
    exact_diff, exact_cosine = compare(exact, reference, batches)
    print(f"encoder on {len(sentences)} sentences (TREC-6 test + SST-2 dev):")
    print(
        f"  kbert (tanh GELU, as keras-hub) vs keras-hub: max |diff| {max_diff:.3g}, "
        f"min cosine {min_cosine:.8f}"
    )
    print(
        f"  kbert (exact GELU, the checkpoint's) vs keras-hub: max |diff| {exact_diff:.3g}, "
        f"min cosine {exact_cosine:.8f}"
    )
    results = {
        "sentences": len(sentences),
        "encoder_max_abs_diff": max_diff,
        "embedding_min_cosine": min_cosine,
        "tokenizer_agreement": report.fraction,
        "tokenizer_texts": report.num_texts,
        "exact_gelu_max_abs_diff": exact_diff,
        "exact_gelu_embedding_min_cosine": exact_cosine,
    }
    record_if_requested(args, results)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
