"""Lab 16: knowledge distillation into a smaller student, and ensembling fine-tuned models.

Reproduces the textbook's DistilBERT idea (Sanh et al. 2019; Hinton et al. 2015) and the NAACL
2019 tutorial's §4.3 ensembling, on TREC-6. A teacher is fine-tuned in full; a student with
half its blocks (the teacher's embeddings and every other block, DistilBERT's initialisation,
plus a new head) then learns from

    soft_weight · T² · KL(softmax(teacher / T) ‖ softmax(student / T))
    + (1 − soft_weight) · cross-entropy(labels, student)
    [+ hidden_weight · (1 − cos(student hidden, teacher hidden)), DistilBERT's cosine loss]

with the teacher running inside every training step (`kbert.models.Distiller`). Rows: the
teacher ("full"), the same student trained on the labels alone (soft_weight 0: the baseline
distillation must beat), distillation (T 2, soft_weight 0.5), distillation plus the hidden-state
cosine loss, and an ensemble averaging the probabilities of the seeds' fine-tuned teachers
(`kbert.models.ClassifierEnsemble`). For the student rows "trainable" is the student's size as
a share of the teacher's; for the ensemble, the members' total size as a share of one.

What it should show: the student keeps most of the teacher's accuracy at about half the
encoder's blocks, soft targets at least matching labels alone; the ensemble at or above the
best single model, at several times the inference cost. Report what you see.

    python labs/lab16_distillation.py                  # 2 seeds: 2 teachers, an ensemble of 2
    python labs/lab16_distillation.py --starts minilm_l6 --seeds 3 --temperature 4
"""

from kbert.startup import quiet_tensorflow  # noqa: E402

quiet_tensorflow()

from kbert.cli.adaptation_lab import comparison_main  # noqa: E402


# %% The comparison: teacher, students, ensemble.
def variants(args):
    distill = {"temperature": args.temperature, "soft_weight": args.soft_weight}
    return [
        ("full", "full", {}),
        ("student_labels_only", "distillation", {**distill, "soft_weight": 0.0}),
        ("distillation", "distillation", distill),
        ("distillation_hidden_cosine", "distillation", {**distill, "hidden_weight": 1.0}),
        ("ensemble", "ensemble", {}),
    ]


def add_arguments(parser):
    parser.add_argument("--temperature", type=float, default=2.0)
    parser.add_argument("--soft-weight", type=float, default=0.5)


def main():
    comparison_main(
        __doc__, variants, "runs/lab16_distillation", seeds=2, add_arguments=add_arguments
    )


if __name__ == "__main__":
    main()
