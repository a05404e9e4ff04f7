from benchmarks.reports import lab14_qa

RESULTS = {
    "source": "dev-split(first 40 articles train / 8 eval)",
    "train_questions": 8981,
    "train_windows": 9191,
    "eval_questions": 1589,
    "epochs": 2,
    "train_seconds": 1437.0,
    "train_windows_per_s": 12.8,
    "final_loss": 2.7895,
    "exact_match": 59.79,
    "f1": 72.45,
    "eval_seconds": 82.6,
}


def test_the_section_gives_the_split_sizes_scores_and_the_extra_windows():
    page = lab14_qa.render(RESULTS)
    assert "| dev-split(first 40 articles train / 8 eval) | 8,981 (9,191) | 1,589 | 2 |" in page
    assert "| 59.79 | 72.45 | 1,437 |" in page
    assert "8,981 training questions make 210 more windows than questions" in page
    assert "12.8 windows/s" in page and "loss 2.789" in page
    assert lab14_qa.headline(RESULTS) == (
        "SQuAD v1.1 (dev-split(first 40 articles train / 8 eval)): EM 59.79, F1 72.45 on "
        "1,589 questions"
    )
