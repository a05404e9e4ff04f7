"""Lab 7: document classification, ULMFiT style: fine-tune the LM on the task's texts first.

Reproduces §5.A of the NAACL 2019 tutorial "Transfer Learning in NLP" (Howard & Ruder 2018,
ULMFiT) on IMDb movie reviews (SST-2 when IMDb is not in the data directory):

Stage 1, target-task LM fine-tuning: the pretrained model keeps training with its own objective
    (masked LM for a BERT, causal LM for lab01's causal model) on the task's training texts,
    labels unused, so it adapts to the domain's vocabulary and style.
Stage 2, classifier fine-tuning: concat pooling (last + max + mean of the top layer) feeds two
    BatchNorm → Dropout → Dense blocks (ReLU, hidden 50, then the classes); first the head alone
    with the encoder frozen, then the whole model.

The same stage 2 also runs from the encoder without stage 1, so the table shows what target-task
LM fine-tuning adds. ULMFiT's other two tricks (gradual unfreezing, discriminative and slanted
triangular learning rates) are the adaptation lab's subject.

What it should show: stage 1's held-out LM loss falls on the target domain; the classifier
reaches high-80s/low-90s accuracy on IMDb even from a few thousand reviews on CPU (ULMFiT: 95.4%
with all 25k reviews and 50k unlabelled ones), and the LM-fine-tuned start is at least as good
as the plain one. Defaults are sized for a 2-core CPU (subsets, 256 tokens, bfloat16); raise
`--train-examples`, `--lm-examples` and `--sequence-length` on a GPU.

    python labs/lab07_document_classification.py
    python labs/lab07_document_classification.py --task sst2 --sequence-length 64
"""

import argparse
import json
from pathlib import Path

from kbert.startup import quiet_tensorflow  # noqa: E402

quiet_tensorflow()

import keras  # noqa: E402
import numpy as np  # noqa: E402

from kbert.checkpoints import load_pretrained  # noqa: E402
from kbert.data import (  # noqa: E402
    causal_lm_blocks,
    data_dir,
    full_sentences_blocks,
    load_classification_task,
)
from kbert.metrics import evaluate_classifier  # noqa: E402
from kbert.models import CausalLanguageModel, MaskedLanguageModel, SequenceClassifier  # noqa: E402
from kbert.text import BertPreprocessor, MaskedLMMasker  # noqa: E402
from kbert.train import fine_tune_classifier, fine_tuning_optimizer  # noqa: E402


def choose_task(requested, data_dir_arg):
    if requested != "auto":
        return requested
    root = data_dir(data_dir_arg)
    return "imdb" if root is not None and (root / "imdb" / "train.jsonl").is_file() else "sst2"


def load_data(args):
    data = {
        split: load_classification_task(args.task, split, data_dir=args.data_dir, seed=args.seed)
        for split in ("train", "validation", "test")
    }
    rng = np.random.default_rng(args.seed)
    for split, size in (
        ("train", args.train_examples),
        ("validation", args.eval_examples),
        ("test", args.eval_examples),
    ):
        if size and len(data[split]) > size:
            data[split] = data[split].subset(np.sort(rng.permutation(len(data[split]))[:size]))
    return data


# %% Stage 1: the pretrained objective, continued on the task's own texts.
def fine_tune_language_model(encoder, tokenizer, texts, args):
    held_out = max(len(texts) // 20, 1)
    train_texts, valid_texts = texts[held_out:], texts[:held_out]
    if encoder.config.causal:

        def blocks(documents, shuffle):
            return causal_lm_blocks(
                documents,
                tokenizer,
                args.sequence_length,
                args.batch_size,
                seed=args.seed,
                shuffle=shuffle,
                last_block="pad",
            )

        model = CausalLanguageModel(encoder)
    else:
        special = [tokenizer.token_to_id(t) for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]")]
        masker = MaskedLMMasker(
            tokenizer.vocabulary_size(),
            tokenizer.mask_token_id,
            special,
            max_selections=int(args.sequence_length * 0.2) + 1,
            seed=args.seed,
        )

        def mask(batch):
            return {**batch, **masker(batch["token_ids"], batch["padding_mask"])}

        def blocks(documents, shuffle):
            return full_sentences_blocks(
                documents,
                tokenizer,
                args.sequence_length,
                args.batch_size,
                seed=args.seed,
                shuffle=shuffle,
                map_fn=mask,
            )

        model = MaskedLanguageModel(encoder)
    train, valid = blocks(train_texts, True), blocks(valid_texts, False)
    steps = sum(1 for _ in train) * args.lm_epochs
    model.compile(optimizer=fine_tuning_optimizer(steps, args.lm_learning_rate))
    before = model.evaluate(valid, verbose=0, return_dict=True)
    model.fit(train, epochs=args.lm_epochs, verbose=args.verbose)
    after = model.evaluate(valid, verbose=0, return_dict=True)
    loss_key = next(key for key in after if key.endswith("_loss"))
    return {
        "lm_examples": len(train_texts),
        "lm_loss_before": round(before[loss_key], 4),
        "lm_loss_after": round(after[loss_key], 4),
    }


# %% Stage 2: ULMFiT's classifier, head first (encoder frozen), then everything.
def train_classifier(encoder, tokenizer, data, args):
    preprocessor = BertPreprocessor(tokenizer, sequence_length=args.sequence_length)
    classifier = SequenceClassifier(
        encoder,
        len(data["train"].label_names),
        pooling="concat",
        hidden_units=(50,),
        batch_norm=True,
        dropout=args.dropout,
    )
    encoder.trainable = False
    _, head_seconds = fine_tune_classifier(
        classifier,
        preprocessor,
        data["train"],
        data["validation"],
        epochs=1,
        batch_size=args.batch_size,
        learning_rate=args.head_learning_rate,
        seed=args.seed,
        verbose=args.verbose,
    )
    head = evaluate_classifier(classifier, preprocessor, data["validation"])
    encoder.trainable = True
    history, all_seconds = fine_tune_classifier(
        classifier,
        preprocessor,
        data["train"],
        data["validation"],
        epochs=args.epochs,
        batch_size=args.batch_size,
        learning_rate=args.learning_rate,
        seed=args.seed,
        verbose=args.verbose,
    )
    test = evaluate_classifier(classifier, preprocessor, data["test"])
    return {
        "head_only_val_accuracy": round(head["accuracy"], 4),
        "val_accuracy_per_epoch": [round(v, 4) for v in history.history["val_accuracy"]],
        "test_accuracy": round(test["accuracy"], 4),
        "test_macro_f1": round(test["macro_f1"], 4),
        "train_s": round(head_seconds + all_seconds, 1),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--task",
        default="auto",
        choices=("auto", "imdb", "sst2"),
        help="auto: IMDb when the data directory has it, else SST-2",
    )
    parser.add_argument(
        "--model",
        default="minilm_l6",
        help="minilm_l6, a Hugging Face BERT directory, or a kbert directory "
        "such as saved_models/lab01_causal (then stage 1 is causal LM)",
    )
    parser.add_argument(
        "--train-examples", type=int, default=2000, help="labelled training documents (0 = all)"
    )
    parser.add_argument(
        "--lm-examples",
        type=int,
        default=4000,
        help="unlabelled training texts for stage 1 (0 = all of train)",
    )
    parser.add_argument(
        "--eval-examples",
        type=int,
        default=1000,
        help="validation and test documents scored (0 = all)",
    )
    parser.add_argument("--sequence-length", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lm-epochs", type=int, default=1)
    parser.add_argument("--lm-learning-rate", type=float, default=5e-5)
    parser.add_argument("--epochs", type=int, default=2, help="whole-model epochs of stage 2")
    parser.add_argument("--head-learning-rate", type=float, default=1e-3)
    parser.add_argument("--learning-rate", type=float, default=5e-5)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--dtype", default="mixed_bfloat16", help="or float32")
    parser.add_argument(
        "--skip-baseline", action="store_true", help="do not train the classifier without stage 1"
    )
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--run-dir", default="runs/lab07_document_classification")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--verbose", type=int, default=2)
    args = parser.parse_args()
    args.task = choose_task(args.task, args.data_dir)
    data = load_data(args)
    lm_texts = load_classification_task(
        args.task, "train", data_dir=args.data_dir, seed=args.seed
    ).texts  # never validation or test texts
    lm_texts = lm_texts[: args.lm_examples or None]

    results = []
    variants = [("ULMFiT: LM fine-tuned, then classifier", True)]
    if not args.skip_baseline:
        variants.append(("classifier only (no stage 1)", False))
    for name, with_lm in variants:
        keras.utils.set_random_seed(args.seed)
        encoder, tokenizer = load_pretrained(args.model, dtype=args.dtype)
        result = {"variant": name}
        if with_lm:
            result.update(fine_tune_language_model(encoder, tokenizer, lm_texts, args))
        keras.utils.set_random_seed(args.seed)
        result.update(train_classifier(encoder, tokenizer, data, args))
        results.append(result)

    # %% Results table.
    print(
        f"\n{args.task}: {len(data['train'])} labelled train, {len(data['validation'])} "
        f"validation, {len(data['test'])} test documents; {args.model}, "
        f"{args.sequence_length} tokens"
    )
    print(
        "variant                                  LM loss before→after  head-only val  "
        "val by epoch   test acc  macro-F1  train s"
    )
    for r in results:
        lm = (
            f"{r['lm_loss_before']:.3f} → {r['lm_loss_after']:.3f}" if "lm_loss_after" in r else "-"
        )
        epochs = " ".join(f"{v:.3f}" for v in r["val_accuracy_per_epoch"])
        print(
            f"{r['variant']:40s} {lm:20s}  {r['head_only_val_accuracy']:13.4f}  {epochs:13s}"
            f"  {r['test_accuracy']:8.4f}  {r['test_macro_f1']:8.4f}  {r['train_s']:7.0f}"
        )
    run_dir = Path(args.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "results.json").write_text(json.dumps(results, indent=1))
    print(json.dumps({"task": args.task, "results": results}))


if __name__ == "__main__":
    main()
