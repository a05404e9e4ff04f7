from benchmarks.reports import classification


def test_the_classification_benchmark_renders_kbert_alone_or_beside_the_peer():
    results = {
        "task": "trec",
        "train_examples": 5452,
        "epochs": 3,
        "sequence_length": 64,
        "batch_size": 32,
        "learning_rate": 1e-4,
        "kbert_dtype": "float32",
        "kbert_jit": False,
        "kbert_pooling": "pooler",
        "kbert_acc": 0.97,
        "kbert_examples_per_s": 60.0,
    }
    text = classification.render(results)
    assert "| kbert (float32, pooler pooling) | 0.9700 | 60.0 |" in text
    assert "keras-hub" not in text  # --skip-peer: no peer row
    peer = {**results, "peer_acc": 0.96, "peer_examples_per_s": 30.0, "speedup": 2.0}
    assert "| keras-hub BertTextClassifier (float32) | 0.9600 | 30.0 |" in (
        classification.render(peer)
    )
    assert classification.headline(peer) == (
        "MiniLM-L6 on trec: kbert 0.970 vs keras-hub 0.960, 2.00x its training speed"
    )
