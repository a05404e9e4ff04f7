"""Lab 20: from `model.fit` to a TF Serving SavedModel: fine-tune, export, reload, predict, time it.

The NAACL 2019 tutorial's last step (§5.B, "sharing and deploying") with TF Serving's layout:
fine-tune MiniLM-L6 on TREC-6 (question types), export it to `saved_models/<name>/<version>/`
with the WordPiece tokenizer inside the graph, reload the export the way a server does (only
TensorFlow and tf-text's ops; no kbert, no Keras objects), call every signature (`classify`,
`embed`, `token_ids`; and `tag` of a small CoNLL-2003 tagger, exported the same way), and time
the exported `classify` signature against the in-memory Keras model (`model.predict` on inputs
tokenized in Python beforehand) at batch 1 and batch 32.

What it should show: the export answers as the Keras model does, up to float rounding (the
largest difference of the probabilities is in docs/results.md#lab20_serving), and serving it is faster: `model.predict` pays for building a dataset
and an iterator on every call, the exported concrete function does not.

`--dtype bfloat16` exports the models computing in bfloat16 (float32 variables and outputs;
faster on CPUs with AVX-512 BF16 or AMX, slower where bfloat16 is emulated), and the agreement
line then measures what that costs against the float32 Keras model; `--dtype auto` picks
bfloat16 where this machine computes it natively.

    python labs/lab20_serving.py
    python labs/lab20_serving.py --epochs 1 --max-train-examples 500 --skip-tagger
    python labs/lab20_serving.py --dtype bfloat16
"""

import argparse
import json
import os
import subprocess
import sys
import time

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import keras
import numpy as np
import tensorflow as tf

from kbert.checkpoints import load_pretrained, trained_pooling
from kbert.data import load_classification_task
from kbert.data.conll2003 import CONLL2003_TAGS, read_conll2003
from kbert.export import ExportSettings, export_saved_model, read_export_settings
from kbert.export.export_settings import DTYPES
from kbert.export.models_config import write_models_config
from kbert.models import SequenceClassifier
from kbert.run_records import add_record_argument, record_if_requested
from kbert.text import BertPreprocessor
from kbert.train import TrainingSettings, fine_tune_classifier
from kbert.train.token_task_fine_tuning import (
    NER_TRAINING,
    build_ner_model,
    fine_tune_ner,
)

# A fresh process that knows nothing of kbert or Keras: what TF Serving's loader sees.
FRESH_PROCESS = """
import json, sys
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the tokenizer's ops)
model = tf.saved_model.load(sys.argv[1])
texts = tf.constant(json.loads(sys.argv[2]))
outputs = {}
for name in sorted(model.signatures):
    function = model.signatures[name]
    if name == "token_ids":
        continue
    arguments = function.structured_input_signature[1]
    outputs[name] = {key: value.numpy().tolist() for key, value in
                     function(**{key: texts for key in arguments}).items()}
print(json.dumps(outputs, default=lambda v: v.decode() if isinstance(v, bytes) else str(v)))
"""


def timed_calls(call, batches, repeats):
    """Per-call latencies in seconds: one warm-up call, then `repeats` passes over `batches`."""
    call(batches[0])
    latencies = []
    for _ in range(repeats):
        for batch in batches:
            start = time.perf_counter()
            call(batch)
            latencies.append(time.perf_counter() - start)
    return np.array(latencies)


def latency_row(name, batch_size, latencies):
    p50, p95 = np.percentile(latencies, [50, 95]) * 1000
    per_second = batch_size / latencies.mean()
    print(f"{name:<34}{batch_size:>6}{p50:>10.2f}{p95:>10.2f}{per_second:>14.1f}")
    return {
        "batch_size": batch_size,
        "p50_ms": round(p50, 2),
        "p95_ms": round(p95, 2),
        "sentences_per_s": round(per_second, 1),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="minilm_l6")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--export-dir", default="saved_models")
    parser.add_argument("--name", default="trec_minilm")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--max-train-examples", type=int, default=None)
    parser.add_argument(
        "--sequence-length",
        type=int,
        default=64,
        help="tokens per question (TREC questions are short)",
    )
    parser.add_argument(
        "--tagger-sentences",
        type=int,
        default=2000,
        help="CoNLL-2003 training sentences for the small tagger export",
    )
    parser.add_argument("--skip-tagger", action="store_true")
    parser.add_argument(
        "--dtype",
        default="float32",
        choices=DTYPES,
        help="what the exports compute in (outputs float32 either way; default float32)",
    )
    parser.add_argument("--repeats", type=int, default=3, help="passes over the timing batches")
    parser.add_argument("--seed", type=int, default=0)
    add_record_argument(parser)
    args = parser.parse_args()
    keras.utils.set_random_seed(args.seed)

    # %% Fine-tune MiniLM-L6 on TREC-6 (the lab02 recipe, a linear layer on [CLS]).
    splits = {
        split: load_classification_task(
            "trec",
            split,
            data_dir=args.data_dir,
            seed=args.seed,
            max_examples=args.max_train_examples if split == "train" else None,
        )
        for split in ("train", "validation", "test")
    }
    encoder, tokenizer = load_pretrained(args.model)
    preprocessor = BertPreprocessor(tokenizer, sequence_length=args.sequence_length)
    label_names = list(splits["train"].label_names.names)
    # Read the way the checkpoint was trained to be read (MiniLM-L6: the mean of its tokens).
    classifier = SequenceClassifier(encoder, len(label_names), pooling=trained_pooling(args.model))
    _, seconds = fine_tune_classifier(
        classifier,
        preprocessor,
        splits["train"],
        splits["validation"],
        settings=TrainingSettings(
            epochs=args.epochs, learning_rate=1e-4, seed=args.seed, verbose=0
        ),
    )
    print(f"fine-tuned on {len(splits['train'])} TREC-6 questions in {seconds:.0f} s")

    # %% Export: saved_models/<name>/<version>/, the tokenizer in the graph; never overwrites.
    path = export_saved_model(
        classifier,
        tokenizer,
        args.export_dir,
        args.name,
        ExportSettings(
            task="classify",
            label_names=label_names,
            sequence_length=args.sequence_length,
            dtype=args.dtype,
        ),
    )
    dtype = read_export_settings(path)["dtype"]  # what --dtype auto chose
    print(f"exported {path} (computes in {dtype})")
    exports = {"classify": path}
    if not args.skip_tagger:
        sentences = read_conll2003("train", args.data_dir, max_sentences=args.tagger_sentences)
        tag_encoder, tag_tokenizer = load_pretrained(args.model)
        tagger = build_ner_model("crf", tag_encoder, CONLL2003_TAGS)
        fine_tune_ner(
            tagger,
            tag_tokenizer,
            [s.words for s in sentences],
            [s.tags for s in sentences],
            CONLL2003_TAGS,
            settings=NER_TRAINING.replace(epochs=1, seed=args.seed, verbose=0),
        )
        exports["tag"] = export_saved_model(
            tagger,
            tag_tokenizer,
            args.export_dir,
            args.name.replace("trec", "conll") + "_tagger",
            ExportSettings(
                task="tag",
                label_names=list(CONLL2003_TAGS),
                sequence_length=128,
                dtype=args.dtype,
            ),
        )
        print(f"exported {exports['tag']}")
    print(f"wrote {write_models_config(args.export_dir)}")

    # %% Reload in a fresh process (TensorFlow + tf-text only) and call every signature.
    texts = [
        "How far is it from Denver to Aspen?",
        "Who wrote Hamlet?",
        "What is the capital of Peru?",
    ]
    for kind, export_path in exports.items():
        probe = texts if kind == "classify" else ["Peter Blackburn flew to Brussels on Monday ."]
        result = subprocess.run(
            [sys.executable, "-c", FRESH_PROCESS, str(export_path), json.dumps(probe)],
            capture_output=True,
            text=True,
            env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
            timeout=600,
        )
        if result.returncode:
            raise RuntimeError(f"reloading {export_path} failed:\n{result.stderr[-2000:]}")
        outputs = json.loads(result.stdout.strip().splitlines()[-1])
        print(f"\n{export_path} in a fresh process:")
        for name, values in outputs.items():
            shown = {
                key: value
                for key, value in values.items()
                if key in ("labels", "tags", "entity_types", "entity_texts", "entity_starts")
            }
            shapes = {key: np.shape(value) for key, value in values.items()}
            print(f"  {name}: {json.dumps(shown) if shown else shapes}")

    # %% Agreement and speed: the export against the in-memory model.
    loaded = tf.saved_model.load(str(path))
    classify = loaded.signatures["classify"]
    test_texts = splits["test"].texts
    exported = np.concatenate(
        [
            classify(text=tf.constant(test_texts[i : i + 32]))["probabilities"].numpy()
            for i in range(0, len(test_texts), 32)
        ]
    )
    in_memory = keras.ops.convert_to_numpy(
        keras.ops.softmax(classifier.predict(preprocessor(test_texts), batch_size=32, verbose=0))
    )
    max_abs_diff = float(np.abs(exported - in_memory).max())
    accuracy = float((exported.argmax(1) == splits["test"].labels).mean())
    print(
        f"\nTREC-6 test accuracy {100 * accuracy:.2f}%; max |export - keras| = "
        f"{max_abs_diff:.2e} over {len(test_texts)} questions (export in {dtype}, Keras in "
        "float32)"
    )

    print(f"\n{'':<34}{'batch':>6}{'p50 ms':>10}{'p95 ms':>10}{'sentences/s':>14}")
    timings = {}
    for batch_size in (1, 32):
        batches = [test_texts[i : i + batch_size] for i in range(0, len(test_texts), batch_size)]
        batches = [batch for batch in batches if len(batch) == batch_size][: 100 // batch_size + 10]
        timings[f"export_batch{batch_size}"] = latency_row(
            "exported `classify` (raw text)",
            batch_size,
            timed_calls(lambda b: classify(text=tf.constant(b)), batches, args.repeats),
        )
        tokenized = [preprocessor(batch) for batch in batches]  # Python-side, outside the timing
        timings[f"keras_batch{batch_size}"] = latency_row(
            "keras model.predict (tokenized)",
            batch_size,
            timed_calls(
                lambda b: classifier.predict(b, batch_size=32, verbose=0), tokenized, args.repeats
            ),
        )
    ratio = (
        timings["export_batch32"]["sentences_per_s"] / timings["keras_batch32"]["sentences_per_s"]
    )
    print(f"\nexport / model.predict throughput at batch 32: {ratio:.2f}x (goal >= 2x)")
    summary = {
        "export_sentences_per_s": timings["export_batch32"]["sentences_per_s"],
        "keras_sentences_per_s": timings["keras_batch32"]["sentences_per_s"],
        "max_abs_diff": max_abs_diff,
        "dtype": dtype,
        "test_accuracy": round(accuracy, 4),
        "exports": {kind: str(p) for kind, p in exports.items()},
        "timings": timings,
    }
    record_if_requested(args, summary)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
