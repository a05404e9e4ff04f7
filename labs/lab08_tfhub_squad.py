"""Lab 8: extractive QA from a TF Hub BERT in Keras 3: load through the Hub path, fine-tune, export.

The NAACL 2019 tutorial's §5.B hands-on ("fine-tune a TF Hub BERT for SQuAD"), redone for
Keras 3, where `hub.KerasLayer` no longer trains (tensorflow/hub#903): `kbert.hub` loads a TF2
Hub-format BERT (encoder + preprocessor, the TF Hub BERT interface: `input_word_ids`,
`input_mask`, `input_type_ids` in; `pooled_output`, `sequence_output`, `encoder_outputs` out) as
a fine-tunable Keras 3 layer; kbert's QA head (start/end pointers) sits on it; `model.fit`
updates the Hub module's own variables; the result is exported for TF Serving with an `answer`
signature that takes raw question and context strings.

These machines are offline, so by default the lab first writes MiniLM-L6 in the TF Hub format
(`kbert.export.export_hub_encoder` / `export_hub_preprocessor`) and then loads it back through
the Hub path like any downloaded module. Online, pass tfhub.dev / Kaggle handles instead, e.g.
`--hub-encoder https://tfhub.dev/tensorflow/bert_en_uncased_L-12_H-768_A-12/4
--hub-preprocessor https://tfhub.dev/tensorflow/bert_en_uncased_preprocess/3` (cached under
TFHUB_CACHE_DIR).

What it should show: the Hub-loaded encoder gives the same numbers as kbert's own (the largest
difference in their outputs is printed), fine-tunes like it (the same recipe, seeds and
questions are then run on kbert's own encoder in the same process, `--skip-kbert-encoder` to
leave it out; each of three seeds, `--seeds`, starts both from fresh weights, and the two
encoders' EM and F1 should show "no difference" paired by seed, `kbert.metrics.seed_comparison`;
at the defaults, 3,000 questions and one epoch, both are far from converged, see lab14_qa for
the full budget), and the export (the first seed's model) answers raw strings.

    python labs/lab08_tfhub_squad.py
    python labs/lab08_tfhub_squad.py --max-train-examples 300 --max-eval-examples 50
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import keras
import numpy as np
import tensorflow as tf

from kbert.checkpoints import load_pretrained
from kbert.data.squad import load_squad
from kbert.export import ExportSettings, export_saved_model
from kbert.export.hub_export import export_hub_encoder, export_hub_preprocessor
from kbert.hub import HubPreprocessor, hub_encoder_model, resolve_handle
from kbert.metrics.seed_comparison import format_difference, over_seeds, paired_difference
from kbert.models import QuestionAnswerer
from kbert.run_records import add_record_argument, record_if_requested
from kbert.tasks import evaluate_question_answerer
from kbert.text import BertPreprocessor, WordPieceTokenizer
from kbert.train import TrainingSettings
from kbert.train.token_task_fine_tuning import fine_tune_question_answerer

FRESH_PROCESS = """
import json, sys
import tensorflow as tf
import tensorflow_text  # noqa: F401
answer = tf.saved_model.load(sys.argv[1]).signatures["answer"]
questions, contexts = json.loads(sys.argv[2]), json.loads(sys.argv[3])
outputs = answer(question=tf.constant(questions), context=tf.constant(contexts))
print(json.dumps({key: value.numpy().tolist() for key, value in outputs.items()},
                 default=lambda v: v.decode()))
"""


def scores_of(scores, seconds):
    return {
        "exact_match": round(scores["exact_match"], 2),
        "f1": round(scores["f1"], 2),
        "train_seconds": round(seconds, 1),
    }


def seed_row(runs):
    """Mean EM, F1 and training seconds over seeds, each score's sd, and the runs."""
    row = over_seeds(
        runs, ("exact_match", "f1", "train_seconds"), spread=("exact_match", "f1"), digits=2
    )
    return {**row, "runs": runs}


def spread(row, metric):
    sd = row[f"{metric}_sd"]
    return f"{row[metric]:.2f}" + ("" if sd is None else f" ± {sd:.2f}")


def run_seeds(seeds, first_encoders, encoder_handle, args, fine_tune_and_score):
    """Both encoders fine-tuned at each seed: `(hub runs, kbert runs, (the first seed's Hub
    model, its history, the training windows, whether `fit` moved every seed's Hub variables))`.
    `first_encoders` are the loaded `(hub, kbert or None)` encoders the first seed trains; later
    seeds load fresh ones (no kbert runs when it is None)."""
    hub_runs, own_runs, first, moved = [], [], None, True
    for seed in seeds:
        encoder, own_encoder = first_encoders
        if seed != seeds[0]:
            encoder = hub_encoder_model(encoder_handle, trainable=True)
            own_encoder = None if own_encoder is None else load_pretrained(args.model)[0]
        before = [keras.ops.convert_to_numpy(v) for v in encoder.trainable_weights[:2]]
        model, history, seconds, windows, scores = fine_tune_and_score(encoder, seed)
        moved &= any(
            not np.allclose(a, keras.ops.convert_to_numpy(b))
            for a, b in zip(before, encoder.trainable_weights[:2], strict=True)
        )
        hub_runs.append({"seed": seed, **scores_of(scores, seconds)})
        first = first or (model, history, windows)
        print(
            f"Hub path, seed {seed}:           EM {scores['exact_match']:.2f}  F1 "
            f"{scores['f1']:.2f}  (training {seconds:.0f} s; Hub variables updated by fit: "
            f"{moved})",
            flush=True,
        )
        # %% The same recipe on kbert's own encoder of the same checkpoint, for comparison.
        if own_encoder is not None:
            _, _, own_seconds, _, own_scores = fine_tune_and_score(own_encoder, seed)
            own_runs.append({"seed": seed, **scores_of(own_scores, own_seconds)})
            print(
                f"kbert's own encoder, seed {seed}: EM {own_scores['exact_match']:.2f}  F1 "
                f"{own_scores['f1']:.2f}  (training {own_seconds:.0f} s)",
                flush=True,
            )
    return hub_runs, own_runs, (*first, moved)


def hub_modules(args):
    """The Hub handles to load: given ones, or MiniLM-L6 written in the TF Hub format."""
    if args.hub_encoder and args.hub_preprocessor:
        return args.hub_encoder, args.hub_preprocessor
    hub_dir = Path(args.run_dir) / "hub"
    encoder_path, preprocessor_path = hub_dir / "encoder", hub_dir / "preprocessor"
    if not encoder_path.exists():  # the export refuses to overwrite: reuse an earlier one
        encoder, tokenizer = load_pretrained(args.model)
        export_hub_encoder(encoder, encoder_path)
        export_hub_preprocessor(tokenizer, preprocessor_path, seq_length=args.sequence_length)
        print(f"wrote {args.model} in the TF Hub BERT format: {encoder_path}, {preprocessor_path}")
    return str(encoder_path), str(preprocessor_path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hub-encoder", help="TF Hub BERT encoder handle (path or URL)")
    parser.add_argument("--hub-preprocessor", help="its TF Hub preprocessor handle")
    parser.add_argument(
        "--cased",
        action="store_true",
        help="the Hub model is cased (default: uncased, lowercasing)",
    )
    parser.add_argument(
        "--model",
        default="minilm_l6",
        help="without Hub handles: the checkpoint to write in the Hub format",
    )
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=2e-4)
    parser.add_argument("--sequence-length", type=int, default=384)
    parser.add_argument("--stride", type=int, default=128)
    parser.add_argument("--max-train-examples", type=int, default=3000)
    parser.add_argument("--max-eval-examples", type=int, default=500)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--run-dir", default="runs/lab08_tfhub_squad")
    parser.add_argument("--export-dir", default="saved_models")
    parser.add_argument("--name", default="squad_hub")
    parser.add_argument("--seed", type=int, default=0, help="the first run's seed")
    parser.add_argument(
        "--seeds", type=int, default=3, help="fine-tuning runs per encoder (fresh weights each)"
    )
    parser.add_argument(
        "--skip-kbert-encoder",
        action="store_true",
        help="do not also fine-tune kbert's own encoder of --model (without Hub handles)",
    )
    parser.add_argument("--verbose", type=int, default=2)
    add_record_argument(parser)
    args = parser.parse_args()
    if args.seeds < 1:
        parser.error(f"--seeds must be a positive integer; received {args.seeds}")
    keras.utils.set_random_seed(args.seed)

    # %% The Hub modules, and a kbert tokenizer on the preprocessor's own vocabulary asset.
    encoder_handle, preprocessor_handle = hub_modules(args)
    vocabulary = Path(resolve_handle(preprocessor_handle)) / "assets" / "vocab.txt"
    tokenizer = WordPieceTokenizer(str(vocabulary), lowercase=not args.cased)
    hub_preprocessor = HubPreprocessor(preprocessor_handle, seq_length=args.sequence_length)
    encoder = hub_encoder_model(encoder_handle, trainable=True)
    print(f"Hub encoder: {encoder_handle} ({encoder.count_params():,} parameters, trainable)")

    # %% Check: the Hub preprocessor packs as kbert does, and the Hub encoder computes as kbert.
    question, context = "Who flew to Brussels?", "Peter Blackburn flew to Brussels on Monday."
    hub_inputs = hub_preprocessor((tf.constant([question]), tf.constant([context])))
    ours = BertPreprocessor(tokenizer, sequence_length=args.sequence_length)(
        (tf.constant([question]), tf.constant([context]))
    )
    same_ids = bool(np.array_equal(hub_inputs["input_word_ids"], ours["token_ids"]))
    print(f"Hub preprocessor ids == kbert BertPreprocessor ids: {same_ids}")
    difference = None
    if not args.hub_encoder:
        reference, _ = load_pretrained(args.model)
        difference = float(
            np.abs(
                np.asarray(encoder(ours)["sequence_output"])
                - np.asarray(reference(ours)["sequence_output"])
            ).max()
        )
        print(f"Hub encoder vs kbert encoder, max |difference|: {difference:.2e}")

    # %% Fine-tune the QA head and the Hub encoder together (windows of 384, overlap 128).
    train, source = load_squad("train", args.data_dir)
    evaluation, _ = load_squad("validation", args.data_dir)
    train, evaluation = train[: args.max_train_examples], evaluation[: args.max_eval_examples]

    def fine_tune_and_score(encoder, seed):
        """One recipe for both encoders: the same seed, questions, windows and schedule."""
        keras.utils.set_random_seed(seed)  # the same QA head initialisation
        model = QuestionAnswerer(encoder)
        history, seconds, windows = fine_tune_question_answerer(
            model,
            tokenizer,
            train,
            settings=TrainingSettings(
                epochs=args.epochs,
                batch_size=args.batch_size,
                learning_rate=args.learning_rate,
                seed=seed,
                verbose=args.verbose,
            ),
            sequence_length=args.sequence_length,
            stride=args.stride,
        )
        scores = evaluate_question_answerer(
            model, tokenizer, evaluation, args.sequence_length, args.stride
        )
        scores.pop("answers")
        return model, history, seconds, windows, scores

    # Each seed starts from fresh weights: the Hub module loaded again, kbert's checkpoint too.
    seeds = [args.seed + offset for offset in range(args.seeds)]
    with_own = not args.hub_encoder and not args.skip_kbert_encoder
    hub_runs, own_runs, (model, history, windows, moved) = run_seeds(
        seeds, (encoder, reference if with_own else None), encoder_handle, args, fine_tune_and_score
    )
    hub = seed_row(hub_runs)
    own = seed_row(own_runs) if own_runs else None
    differences = (
        {
            metric: paired_difference(
                [run[metric] for run in hub_runs], [run[metric] for run in own_runs]
            )
            for metric in ("exact_match", "f1")
        }
        if own_runs
        else {}
    )
    print(
        f"\nSQuAD v1.1 {source}: {len(train)} training questions ({windows} windows), "
        f"{len(evaluation)} evaluation questions; {len(seeds)} seed(s)"
    )
    print(f"Hub path:            EM {spread(hub, 'exact_match')}  F1 {spread(hub, 'f1')}")
    if own:
        print(f"kbert's own encoder: EM {spread(own, 'exact_match')}  F1 {spread(own, 'f1')}")
        print(
            "Hub − kbert, paired by seed (EM/F1 points; inside the spread: no difference): EM "
            f"{format_difference(differences['exact_match'], scale=1.0)}, F1 "
            f"{format_difference(differences['f1'], scale=1.0)}"
        )

    # %% Export with the `answer` signature; call it from a fresh process on raw strings.
    path = export_saved_model(
        model,
        tokenizer,
        args.export_dir,
        args.name,
        ExportSettings(task="answer", sequence_length=args.sequence_length),
    )
    questions = [example.question for example in evaluation[:3]]
    contexts = [example.context for example in evaluation[:3]]
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            FRESH_PROCESS,
            str(path),
            json.dumps(questions),
            json.dumps(contexts),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )
    if result.returncode:
        raise RuntimeError(f"calling the export failed:\n{result.stderr[-2000:]}")
    answers = json.loads(result.stdout.strip().splitlines()[-1])
    print(f"\nexported {path}; its `answer` signature, in a fresh process:")
    for i, question_text in enumerate(questions):
        gold = [text for text, _ in evaluation[i].answers][:2]
        print(
            f"  Q: {question_text}\n     -> {answers['answer_text'][i]!r} "
            f"[{answers['answer_start'][i]}:{answers['answer_end'][i]}]   gold: {gold}"
        )
    summary = {
        "source": source,
        "train_questions": len(train),
        "train_windows": windows,
        "eval_questions": len(evaluation),
        "train_seconds": hub["train_seconds"],
        "exact_match": hub["exact_match"],
        "f1": hub["f1"],
        "exact_match_sd": hub["exact_match_sd"],
        "f1_sd": hub["f1_sd"],
        "runs": hub_runs,
        "seeds": len(seeds),
        "differences": differences,
        "hub_variables_updated": moved,
        "same_preprocessing": same_ids,
        "max_abs_difference": difference,
        "kbert_encoder": own,
        "final_loss": float(history.history["loss"][-1]),
        "export": str(path),
    }
    run_dir = Path(args.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "results.json").write_text(json.dumps(summary, indent=2) + "\n")
    record_if_requested(args, summary)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
