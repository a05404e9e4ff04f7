from benchmarks.reports import token_tasks


def test_the_token_task_benchmark_renders_both_sides_or_kbert_alone():
    kbert_side = {
        "checkpoint": "MiniLM-L6-H384-uncased",
        "batch_size": 32,
        "versions": {"tensorflow": "2.21.0", "keras": "3.15.1"},
        "ner_epochs": 2,
        "ner_lr": 3e-4,
        "ner_train_sentences": 14041,
        "ner_test_sentences": 3453,
        "kbert_ner_f1": 85.35,
        "kbert_ner_train_examples_per_s": 104.0,
        "qa_source": "dev-split",
        "qa_epochs": 1,
        "qa_lr": 2e-4,
        "qa_train_questions": 8981,
        "qa_eval_questions": 1589,
        "kbert_qa_em": 52.8,
        "kbert_qa_f1": 66.42,
        "kbert_qa_train_examples_per_s": 15.0,
    }
    text = token_tasks.render(kbert_side)
    assert "(the peer was not run)" in text and "| NER | test entity F1 | 85.35 | — |  |" in text
    assert token_tasks.headline(kbert_side) == "NER F1 kbert 85.35; QA F1 kbert 66.42"
    both = {
        **kbert_side,
        "versions": {**kbert_side["versions"], "torch": "2.14.1", "transformers": "5.24.0"},
        "peer_ner_f1": 85.76,
        "peer_ner_train_examples_per_s": 52.0,
        "peer_qa_em": 55.0,
        "peer_qa_f1": 68.24,
        "peer_qa_train_examples_per_s": 5.0,
    }
    text = token_tasks.render(both)
    assert "| task | metric | kbert | transformers 5.24.0 (PyTorch 2.14.1) | kbert / peer |" in text
    assert "|  | training sentences/s | 104.0 | 52.0 | 2.00× |" in text
    assert "| QA | EM / F1 | 52.80 / 66.42 | 55.00 / 68.24 |  |" in text
    assert "|  | training windows/s | 15.0 | 5.0 | 3.00× |" in text
    assert token_tasks.headline(both) == (
        "NER F1 kbert 85.35 vs transformers 85.76 (2.00× its speed); "
        "QA F1 kbert 66.42 vs transformers 68.24 (3.00× its speed)"
    )
