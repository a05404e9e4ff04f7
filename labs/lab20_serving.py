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

`--task sst2` runs the same steps on SST-2 (sentiment); SST-2's GLUE test labels are not public,
so it is evaluated on GLUE dev (kbert's "test" split of SST-2, as in the other labs).

`--dtype bfloat16` exports the classifier computing in bfloat16 (float32 variables and outputs;
faster on CPUs with AVX-512 BF16 or AMX, slower where bfloat16 is emulated) and, beside it, the
same fine-tuned classifier in float32 (`<name>_float32`): both are loaded with
`tf.saved_model.load` and called through `classify`, and the lab reports each one's test
accuracy, sentences/s at batch 32 and p50/p95 latency at batch 1, and the paired difference
(bfloat16 - float32 accuracy, the share of texts given the same label, the largest change of a
probability). The measured change is in docs/results.md#lab20_serving_bf16 (TREC-6) and
#lab20_serving_sst2_bf16 (SST-2). `--dtype auto` picks bfloat16 where this machine computes it
natively (by CPU features, not by timing it) and then compares the same way.

`--xla-rows 4` exports with batches of one to four texts through XLA (`ExportSettings(xla_rows=4)`,
docs/deploy.md): the lab runs the warm-up requests the export wrote, as TF Serving does while it
loads a version, then times it as above; compare its batch-1 latency with a run without it.

    python labs/lab20_serving.py
    python labs/lab20_serving.py --epochs 1 --max-train-examples 500 --skip-tagger
    python labs/lab20_serving.py --dtype bfloat16 --skip-tagger
    python labs/lab20_serving.py --xla-rows 4 --skip-tagger
    python labs/lab20_serving.py --task sst2 --dtype bfloat16 --max-train-examples 8000 --skip-tagger
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
from kbert.export.export_settings import DTYPES, MAX_XLA_ROWS
from kbert.export.models_config import write_models_config
from kbert.export.warmup_requests import read_warmup_requests
from kbert.models import SequenceClassifier
from kbert.run_records import add_record_argument, record_if_requested
from kbert.text import BertPreprocessor
from kbert.train import TrainingSettings, fine_tune_classifier
from kbert.train.lab_run_arguments import add_chosen_rate_argument
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


def warm_up(loaded, exports, xla_rows):
    """Runs each loaded export's warm-up requests, as TF Serving does before a version serves:
    with `--xla-rows` each (rows, length) compiles once, so no timed call compiles."""
    for kind, model in loaded.items():
        requests = read_warmup_requests(exports[kind])
        for signature, inputs in requests:
            model.signatures[signature](**{key: tf.constant(v) for key, v in inputs.items()})
        if requests:
            print(f"{kind}: ran {len(requests)} warm-up requests (XLA for 1-{xla_rows} texts)")


def exported_probabilities(classify, texts, batch_size=32):
    """The `classify` signature's probabilities for `texts`, called in batches of raw text."""
    return np.concatenate(
        [
            classify(text=tf.constant(texts[i : i + batch_size]))["probabilities"].numpy()
            for i in range(0, len(texts), batch_size)
        ]
    )


def paired_difference(float32, bfloat16, labels):
    """What computing in bfloat16 changed, on the same texts: accuracy, labels, probabilities.

    Args:
        float32: array (texts, classes), the float32 export's probabilities.
        bfloat16: array (texts, classes), the bfloat16 export's probabilities.
        labels: array (texts,), the gold labels.

    Returns:
        dict: both accuracies, `accuracy_difference` (bfloat16 - float32), `label_agreement`
        (the share of texts given the same label) and `max_abs_probability_difference`.
    """
    accuracies = {
        dtype: float((probabilities.argmax(1) == labels).mean())
        for dtype, probabilities in (("float32", float32), ("bfloat16", bfloat16))
    }
    return {
        "float32_accuracy": accuracies["float32"],
        "bfloat16_accuracy": accuracies["bfloat16"],
        "accuracy_difference": accuracies["bfloat16"] - accuracies["float32"],
        "label_agreement": float((float32.argmax(1) == bfloat16.argmax(1)).mean()),
        "max_abs_probability_difference": float(np.abs(bfloat16 - float32).max()),
    }


# The split each task is evaluated on: SST-2's GLUE test labels are not public, so kbert's "test"
# split of SST-2 is GLUE dev (as in lab18 and lab19).
TASKS = {"trec": ("TREC-6", "TREC-6 test"), "sst2": ("SST-2", "SST-2 GLUE dev")}


def reload_in_fresh_processes(exports, texts):
    """Loads each export in a fresh process (TensorFlow and tf-text only, as a server would)
    and prints what every signature returns for `texts` (a sentence for the tagger)."""
    for kind, export_path in exports.items():
        probe = texts if kind != "tag" else ["Peter Blackburn flew to Brussels on Monday ."]
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
        for signature, values in outputs.items():
            shown = {
                key: value
                for key, value in values.items()
                if key in ("labels", "tags", "entity_types", "entity_texts", "entity_starts")
            }
            shapes = {key: np.shape(value) for key, value in values.items()}
            print(f"  {signature}: {json.dumps(shown) if shown else shapes}")


def export_tagger(args, export_name):
    """A small CRF tagger fine-tuned on CoNLL-2003, exported as the `tag` signature."""
    sentences = read_conll2003("train", args.data_dir, max_sentences=args.tagger_sentences)
    encoder, tokenizer = load_pretrained(args.model)
    tagger = build_ner_model("crf", encoder, CONLL2003_TAGS)
    fine_tune_ner(
        tagger,
        tokenizer,
        [s.words for s in sentences],
        [s.tags for s in sentences],
        CONLL2003_TAGS,
        settings=NER_TRAINING.replace(epochs=1, seed=args.seed, verbose=0),
    )
    settings = ExportSettings(
        task="tag", label_names=list(CONLL2003_TAGS), sequence_length=128, dtype=args.dtype
    )
    return export_saved_model(tagger, tokenizer, args.export_dir, export_name, settings)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="minilm_l6")
    parser.add_argument("--task", default="trec", choices=tuple(TASKS))
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--export-dir", default="saved_models")
    parser.add_argument("--name", default=None, help="the export's name (default <task>_minilm)")
    parser.add_argument("--epochs", type=int, default=2)
    # The classifier's rate: full fine-tuning's for MiniLM-L6, chosen on validation (as the
    # other labs read it).
    add_chosen_rate_argument(parser, what="the classifier's peak rate")
    parser.add_argument("--max-train-examples", type=int, default=None)
    parser.add_argument(
        "--sequence-length",
        type=int,
        default=64,
        help="tokens per text (TREC questions and SST-2 sentences are short)",
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
        help="what the exports compute in (outputs float32 either way; default float32); "
        "bfloat16 also exports the classifier in float32 and compares the two",
    )
    parser.add_argument(
        "--xla-rows",
        type=int,
        default=0,
        help="export with batches of up to this many texts through XLA (0, the default: off); "
        "the lab then runs the export's warm-up requests first, as TF Serving does",
    )
    parser.add_argument("--repeats", type=int, default=3, help="passes over the timing batches")
    parser.add_argument("--seed", type=int, default=0)
    add_record_argument(parser)
    args = parser.parse_args()
    if not 0 <= args.xla_rows <= MAX_XLA_ROWS:
        parser.error(
            f"--xla-rows must be an int from 0 to {MAX_XLA_ROWS}; received {args.xla_rows}"
        )
    keras.utils.set_random_seed(args.seed)
    name = args.name or f"{args.task}_minilm"
    title, evaluation = TASKS[args.task]

    # %% Fine-tune `--model` (MiniLM-L6 by default): a linear layer on the pooling its checkpoint
    # was trained with, at full fine-tuning's chosen rate (`--learning-rate`) for `--epochs`.
    splits = {
        split: load_classification_task(
            args.task,
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
            epochs=args.epochs, learning_rate=args.learning_rate, seed=args.seed, verbose=0
        ),
    )
    print(f"fine-tuned on {len(splits['train'])} {title} examples in {seconds:.0f} s")

    # %% Export: saved_models/<name>/<version>/, the tokenizer in the graph; never overwrites.
    def export_classifier(export_name, dtype):
        settings = ExportSettings(
            task="classify",
            label_names=label_names,
            sequence_length=args.sequence_length,
            dtype=dtype,
            xla_rows=args.xla_rows,
        )
        return export_saved_model(classifier, tokenizer, args.export_dir, export_name, settings)

    path = export_classifier(name, args.dtype)
    dtype = read_export_settings(path)["dtype"]  # what --dtype auto chose
    print(f"exported {path} (computes in {dtype})")
    exports = {"classify": path}
    if dtype == "bfloat16":
        # The same fine-tuned weights in float32, to measure what bfloat16 changes.
        exports["classify_float32"] = export_classifier(f"{name}_float32", "float32")
        print(f"exported {exports['classify_float32']} (computes in float32)")
    if not args.skip_tagger:
        exports["tag"] = export_tagger(args, name.replace(args.task, "conll") + "_tagger")
        print(f"exported {exports['tag']}")
    print(f"wrote {write_models_config(args.export_dir)}")

    # %% Reload in a fresh process (TensorFlow + tf-text only) and call every signature.
    texts = {
        "trec": [
            "How far is it from Denver to Aspen?",
            "Who wrote Hamlet?",
            "What is the capital of Peru?",
        ],
        "sst2": ["a charming and funny movie .", "a dull , lifeless mess ."],
    }[args.task]
    reload_in_fresh_processes(exports, texts)

    # %% Agreement and speed: the export against the in-memory model.
    # Kept alive: a signature whose loaded object is collected loses its variables.
    loaded = {kind: tf.saved_model.load(str(p)) for kind, p in exports.items() if kind != "tag"}
    signatures = {kind: model.signatures["classify"] for kind, model in loaded.items()}
    warm_up(loaded, exports, args.xla_rows)
    classify = signatures["classify"]
    test_texts = splits["test"].texts
    exported = exported_probabilities(classify, test_texts)
    in_memory = keras.ops.convert_to_numpy(
        keras.ops.softmax(classifier.predict(preprocessor(test_texts), batch_size=32, verbose=0))
    )
    max_abs_diff = float(np.abs(exported - in_memory).max())
    accuracy = float((exported.argmax(1) == splits["test"].labels).mean())
    print(
        f"\n{evaluation} accuracy {100 * accuracy:.2f}%; max |export - keras| = "
        f"{max_abs_diff:.2e} over {len(test_texts)} texts (export in {dtype}, Keras in "
        "float32)"
    )

    print(f"\n{'':<34}{'batch':>6}{'p50 ms':>10}{'p95 ms':>10}{'sentences/s':>14}")
    timings, float32_timings = {}, {}
    reference = signatures.get("classify_float32")  # the float32 twin of a bfloat16 export
    label = "exported `classify` " + (f"({dtype})" if reference is not None else "(raw text)")
    for batch_size in (1, 32):
        batches = [test_texts[i : i + batch_size] for i in range(0, len(test_texts), batch_size)]
        batches = [batch for batch in batches if len(batch) == batch_size][: 100 // batch_size + 10]
        timings[f"export_batch{batch_size}"] = latency_row(
            label,
            batch_size,
            timed_calls(lambda b: classify(text=tf.constant(b)), batches, args.repeats),
        )
        if reference is not None:
            float32_timings[f"batch{batch_size}"] = latency_row(
                "exported `classify` (float32)",
                batch_size,
                timed_calls(lambda b: reference(text=tf.constant(b)), batches, args.repeats),
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
        "xla_rows": args.xla_rows,
        "test_accuracy": round(accuracy, 4),
        "exports": {kind: str(p) for kind, p in exports.items()},
        "timings": timings,
    }
    if args.task != "trec":
        summary["task"] = args.task
    if reference is not None:
        # %% bfloat16 against float32: the same weights, the same texts, the same signature.
        comparison = paired_difference(
            exported_probabilities(reference, test_texts),
            exported,
            splits["test"].labels,
        )
        comparison.update(
            evaluation=evaluation,
            examples=len(test_texts),
            float32_timings=float32_timings,
            bfloat16_timings={
                key[len("export_") :]: timings[key] for key in timings if key.startswith("export_")
            },
        )
        summary["dtype_comparison"] = comparison
        speedup = (
            timings["export_batch32"]["sentences_per_s"]
            / float32_timings["batch32"]["sentences_per_s"]
        )
        print(
            f"\n{evaluation}: bfloat16 - float32 accuracy "
            f"{100 * comparison['accuracy_difference']:+.2f} points "
            f"({100 * comparison['float32_accuracy']:.2f}% -> "
            f"{100 * comparison['bfloat16_accuracy']:.2f}%); same label on "
            f"{100 * comparison['label_agreement']:.2f}% of {len(test_texts)} texts; largest "
            f"|probability change| {comparison['max_abs_probability_difference']:.2e}; "
            f"batch-32 throughput bfloat16 / float32: {speedup:.2f}x"
        )
    record_if_requested(args, summary)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
