"""The course's evidence as one plan: every record in `docs/results/`, the program and flags
that make it, in an order that respects what each run reads.

`python -m benchmarks.record_labs --course` runs the plan at one commit, one job at a time
(`--resume` continues it after an interruption), so every record names the same code. A record
that reads a saved model runs after the run that writes it, and each saved model has one
writer: lab01 at its defaults writes `saved_models/lab01_causal` (read by lab07, lab09, lab17,
the adaptation grids and the distillation grid); the 60-minute run of all three objectives
(issue #37's budget) writes its own `runs/lab01_budget_60min/saved_models/` (read by
`benchmarks.transfer` and `benchmarks.transfer_probes`).

An entry is `(record name, program, flags)`: the program is a lab (`labs/<program>.py`) or
`benchmarks.<name>`; `--record docs/results/<record name>.json` is added when it runs. A lab the
plan does not name runs at its defaults after the plan (`course`), so adding a lab touches no
shared file; a lab with variants or a saved model to read is named here.
"""

from pathlib import Path

BUDGET_60 = "runs/lab01_budget_60min/saved_models"
# The grids of 30 or more MiniLM-L6 fits run each start and seed in a process of its own:
# TensorFlow keeps about 0.5 GB of every fit until its process ends (24 GB after 42 fits at
# 2e7275b, more than a 2-core machine's 23.5 GB).
_OWN_PROCESSES = ("--process-per-seed",)
_BUDGET_FLAGS = ("--budget-minutes", "60", "--steps-per-epoch", "200", "--validation-steps", "10")

# First: lab01's model (every later lab01 start reads it), then the grids whose choices on
# validation the labs read (`kbert.train.chosen_on_validation`); then the labs the plan does not
# name, at their defaults (`course`); then the rest. So an interrupted course has recorded the
# labs' evidence first.
LEAD = (
    ("lab01_pretraining", "lab01_pretraining", ("--overwrite",)),
    *(
        (
            f"adaptation_grid{suffix}",
            "benchmarks.adaptation_grid",
            ("--starts", starts, *lab01, *studies, "--run-dir", f"runs/adaptation_grid{suffix}"),
        )
        for suffix, starts, lab01, studies in (
            (
                "",
                "lab01",
                ("--lab01-model", "saved_models/lab01_causal"),
                # Its multitask study is `_multitask`'s. A top rate above the default grid: at
                # 58394e9 validation rose with the rate to the grid's top (1e-3) for full
                # fine-tuning and chose factor 1 for discriminative rates, a choice at the edge;
                # with 3e-3 and 1e-2 added, it chose 1e-3 for both, inside the grid. The rates
                # it ranked far below the chosen ones go (full 3e-5, top 1e-2). λ: at a4b19ef
                # validation chose the weakest anchor tried (0.01) for L2-SP and EWC alike and
                # ranked λ 10 far below it, so the grid moves down a decade.
                ("--studies", "rates,anchors", "--full-rates", "1e-4,3e-4")
                + ("--top-rates", "1e-4,3e-4,1e-3,3e-3", "--strengths", "0.001,0.01,0.1,1"),
            ),
            (
                "_minilm",
                "minilm_l6",
                (),
                # Full 3e-5 goes: at a6159da validation ranked it far below the chosen 3e-4.
                ("--studies", "rates,anchors", "--full-rates", "1e-4,3e-4", *_OWN_PROCESSES),
            ),
            (
                "_multitask",
                "lab01",
                ("--lab01-model", "saved_models/lab01_causal"),
                # The record of a528d524 chose the grid's top rate (3e-4) at both sizes, for
                # full fine-tuning and multitask alike: the grid moves up one step and widens.
                ("--studies", "multitask", "--multitask-rates", "3e-4,1e-3,3e-3"),
            ),
            (
                "_adapters",
                "lab01,minilm_l6",
                ("--lab01-model", "saved_models/lab01_causal"),
                # Full fine-tuning's rates as the rates studies above run them (without 3e-5,
                # ranked far below the chosen rates there; with 3e-3 above lab01's 1e-3), so
                # each start's adapters are multiples of a rate chosen inside its grid. 1× below
                # the default multiples: at a4b19ef validation chose the lowest (3×) on both
                # starts; 100× above them: it chose the highest (30×) for MiniLM-L6's
                # adapters-only set. Feature extraction's rates move up: at a4b19ef validation
                # chose the highest (2e-2) on both starts, still rising (1e-3 ranked far below).
                ("--studies", "adapters", "--full-rates", "1e-4,3e-4")
                + ("--top-rates", "1e-4,3e-4,1e-3,3e-3")
                + ("--adapter-multipliers", "1,3,10,30,100")
                + ("--feature-rates", "5e-3,2e-2,5e-2,1e-1")
                + _OWN_PROCESSES,
            ),
        )
    ),
    (
        "distillation_grid",
        "benchmarks.distillation_grid",
        ("--starts", "lab01,minilm_l6", "--lab01-model", "saved_models/lab01_causal")
        + ("--run-dir", "runs/distillation_grid"),
    ),
    # The PEFT methods' rates, which lab16 reads.
    (
        "adaptation_grid_peft",
        "benchmarks.adaptation_grid",
        ("--starts", "lab01,minilm_l6", "--lab01-model", "saved_models/lab01_causal")
        + ("--studies", "peft", "--run-dir", "runs/adaptation_grid_peft", *_OWN_PROCESSES),
    ),
    # ULMFiT's document classification, from lab01's causal model by default.
    ("lab07_document_classification", "lab07_document_classification", ()),
)

_FOLLOW = (
    (
        "unfreezing_regime",
        "benchmarks.unfreezing_regime",
        ("--starts", "lab01,minilm_l6", "--lab01-model", "saved_models/lab01_causal")
        + ("--run-dir", "runs/unfreezing_regime", *_OWN_PROCESSES),
    ),
    # The CPU-hour recipe, one choice set back at a time (lab01 runs of its own).
    ("pretraining_recipe", "benchmarks.pretraining_recipe", ()),
    # Pretraining at issue #37's budget, an hour per objective: later runs read what it saves.
    # One entry per objective: the three hours in one run outlast a working session, and a
    # killed lab01 resumes only the objective it was training. They share the run directory
    # (one tokenizer, trained once) and the folder the readers load.
    *(
        (
            f"lab01_pretraining_budget_60min_{part}",
            "lab01_pretraining",
            ("--part", part, *_BUDGET_FLAGS, "--run-dir", "runs/transfer_lab01_60min")
            + ("--save-dir", BUDGET_60, "--overwrite", "--verbose", "2"),
        )
        for part in ("causal", "masked", "electra")
    ),
    ("transfer", "benchmarks.transfer", ("--pretrained-dir", BUDGET_60)),
    # lab19 at the same hour per family (span corruption against the MLM encoder): does the
    # text-to-text start beat its random init at issue #37's budget?
    (
        "lab19_text_to_text_budget_60min",
        "lab19_text_to_text",
        ("--budget-minutes", "60", "--run-dir", "runs/lab19_60min")
        + ("--export-dir", "runs/lab19_60min/exports"),
    ),
    (
        "transfer_probes",
        "benchmarks.transfer_probes",
        tuple(
            flag
            for name, path in (
                ("causal", f"{BUDGET_60}/lab01_causal"),
                ("masked", f"{BUDGET_60}/lab01_masked"),
                ("electra", f"{BUDGET_60}/lab01_electra"),
            )
            for flag in ("--start", f"{name}={path}")
        ),
    ),
    # The labs with flags (the others join at their defaults: `course`).
    # lab07 beside its default start (lab01's causal model): stage 1 on three times the texts,
    # and MiniLM-L6 (no MLM head: its stage 1 trains a new one).
    *(
        (
            f"lab07_document_classification_{suffix}",
            "lab07_document_classification",
            (*flags, "--run-dir", f"runs/lab07_{suffix}"),
        )
        for suffix, flags in (
            ("lab01_12000_lm_texts", ("--lm-examples", "12000")),
            ("minilm_l6", ("--model", "minilm_l6")),
        )
    ),
    ("lab09_dialog", "lab09_dialog", ("--lab01-model", "saved_models/lab01_causal")),
    # The [CLS] reading beside the default (the checkpoint's own pooling, mean for MiniLM-L6).
    ("lab12_pairs_rte_cls_pooling", "lab12_pairs", ("--tasks", "rte", "--pooling", "cls")),
    *(
        (
            f"lab13_ner_3000_{name}",
            "lab13_ner",
            ("--methods", methods, *flags, "--max-train-sentences", "3000")
            + ("--max-eval-sentences", "1000", "--run-dir", f"runs/lab13_3000_{name}")
            + ("--verbose", "0"),
        )
        for name, methods, flags in (
            ("lr1e-3", "softmax,span", ("--learning-rate", "1e-3")),
            ("lr3e-4", "softmax,span", ("--learning-rate", "3e-4")),
            ("span_prior_4_epochs", "span", ("--epochs", "4")),
        )
    ),
    # lab20's classifier exported in bfloat16 beside the same weights in float32: the accuracy
    # each gives through `classify`, their paired difference, and their speed, on TREC-6 and on
    # SST-2 (GLUE dev; its training file cut to about TREC-6's cost in training time). Each
    # exports to its own folder, so `saved_models/trec_minilm` stays the default run's.
    *(
        (
            f"lab20_serving{suffix}_bf16",
            "lab20_serving",
            (*flags, "--dtype", "bfloat16", "--skip-tagger")
            + ("--export-dir", f"runs/lab20_serving{suffix}_bf16/exports"),
        )
        for suffix, flags in (
            ("", ()),
            ("_sst2", ("--task", "sst2", "--max-train-examples", "8000")),
        )
    ),
    (
        "lab17_distillation_lab01_6_epochs",
        "lab17_distillation",
        ("--starts", "lab01", "--epochs", "6")
        + ("--methods", "full,student_labels_only", "--run-dir", "runs/lab17_lab01_6_epochs"),
    ),
    # The benchmarks the pages cite.
    ("anchor_strength", "benchmarks.anchor_strength", ()),
    ("pair_stability", "benchmarks.pair_stability", ()),
    ("classification", "benchmarks.classification", ()),
    ("long_inputs", "benchmarks.long_inputs", ()),
    ("parity", "benchmarks.parity", ()),
    # The peers named, so a run without them fails rather than recording kbert alone
    # (`bash benchmarks/install_peers.sh`, then PYTHONPATH=../kbert-peers).
    ("pretrain_speed", "benchmarks.pretrain_speed", ("--peers", "torch")),
    (
        "serving",
        "benchmarks.serving",
        ("--sides", "kbert,kbert_fixed,kbert_bf16,kbert_xla,ort,ort_optimized"),
    ),
    # Where one serving call's time goes, and TF Serving's thread settings (docs/deploy.md).
    ("serving_profile", "benchmarks.serving_profile", ()),
    ("text_to_text_start", "benchmarks.text_to_text_start", ()),
    ("token_tasks", "benchmarks.token_tasks", ()),
    ("tokenizer_parity", "benchmarks.tokenizer_parity", ()),
    ("train_step", "benchmarks.train_step", ("--peers", "keras_hub,torch")),
    ("step_profile", "benchmarks.step_profile", ()),
)

# Beyond the course: runs that are the project's evidence rather than a lab's lesson (speed
# against peers, diagnoses of a lab's result, issue #37's hour per objective and the recipe's
# ablation). They run after the course, in the same command. The course's own time (issue #36's
# goal, not-measured: 8 hours on 2 cores) is what a student runs, every lab at its defaults (a
# record named as its lab); the report sums the grids and diagnoses the labs read and cite
# apart, and these benchmarks apart again.
BENCHMARK_NAMES = frozenset(
    {
        "pretraining_recipe",
        "lab01_pretraining_budget_60min_causal",
        "lab01_pretraining_budget_60min_masked",
        "lab01_pretraining_budget_60min_electra",
        "transfer",
        "lab19_text_to_text_budget_60min",
        "transfer_probes",
        "lab07_document_classification_lab01_12000_lm_texts",
        "lab07_document_classification_minilm_l6",
        "lab12_pairs_rte_cls_pooling",
        "lab13_ner_3000_lr1e-3",
        "lab13_ner_3000_lr3e-4",
        "lab13_ner_3000_span_prior_4_epochs",
        "lab20_serving_bf16",
        "lab20_serving_sst2_bf16",
        "lab17_distillation_lab01_6_epochs",
        "classification",
        "long_inputs",
        "parity",
        "pretrain_speed",
        "serving",
        "serving_profile",
        "token_tasks",
        "tokenizer_parity",
        "train_step",
        "step_profile",
    }
)
FOLLOW = tuple(entry for entry in _FOLLOW if entry[0] not in BENCHMARK_NAMES)
BENCHMARKS = tuple(entry for entry in _FOLLOW if entry[0] in BENCHMARK_NAMES)
COURSE = LEAD + FOLLOW + BENCHMARKS

# What `record_labs --until` (a deadline: the end of a working session) knows of an entry.
# The programs that keep their progress when cut off: a grid's or a comparison's rows, the
# recipe's arms, lab01's checkpoints, lab19's families. A benchmark of theirs starts whatever
# time is left: the next session goes on from where it stopped. A lab does not, though its
# comparison keeps rows too: its wall time is the course's, and a lab resumed in a later
# session would record only its last call's.
KEEPS_PROGRESS = frozenset(
    {
        "benchmarks.adaptation_grid",
        "benchmarks.distillation_grid",
        "benchmarks.unfreezing_regime",
        "benchmarks.pretraining_recipe",
        "lab01_pretraining",
        "lab19_text_to_text",
    }
)
# The entries whose outputs later entries read: lab01's model, the grids' choices on validation,
# the hour-per-objective models. Where one of them cannot start before the deadline, the run
# stops there rather than going on to its readers.
PROVIDERS = frozenset(
    {name for name, _, _ in LEAD if name != "lab07_document_classification"}
    | {name for name, _, _ in _FOLLOW if name.startswith("lab01_pretraining_budget_60min_")}
)
# Expected wall seconds of the entries whose last record is no guide to their run now: defaults
# that grew since (labs 3-6, 16 and 17 went from 1-2 seeds to 3; lab07's default start became
# lab01's causal model) or no record yet. Guesses from the old records scaled to today's
# defaults on 2 cores; a record made at the course's commit replaces them (its entry is kept).
EXPECTED_SECONDS = {
    # Three peak rates × 3 seeds per part (its record ran the tutorial's rate at one seed).
    "lab02_finetuning": 1600,
    "lab03_adapters": 750,
    "lab04_gradual_unfreezing": 2750,
    # L2-SP and EWC at lab01's chosen λ too: two more lab01 rows × 3 seeds.
    "lab05_discriminative_lr": 1750,
    "lab06_multitask": 2100,
    "lab07_document_classification": 1050,
    "lab12_pairs": 2400,
    # The first seed at each of three peak rates (chosen on validation), then two more seeds at
    # the chosen one: five fine-tunings of its one-seed record's length, and the evaluations.
    "lab14_qa": 7700,
    "lab16_peft": 710,
    "lab17_distillation": 1000,
    # Three pretrainings per corpus, one fine-tuning each (it pretrained once, fine-tuned 3×).
    "lab18b_data_curation": 1300,
    # 300 training dialogs per run (its record trained once per start on all 900): each start's
    # first seed at two peak rates (chosen on validation perplexity), then two more seeds.
    "lab09_dialog": 6800,
    # SST-2 and SQuAD at 3 seeds per start (its record ran one): about 4 × 6 min more.
    "lab19_text_to_text": 5200,
    # Each start's target runs: the first seed at three peak rates (chosen on validation).
    "lab21_sequential_adaptation": 2300,
    # SEAT on ten random-weights draws (inference only); each arm's first seed at three rates.
    "lab22_bias": 1000,
    # Each row's first seed at three peak rates (chosen on validation), then two seeds at it.
    "lab23_related_multitask": 1750,
    # Each model's first seed at three peak rates (chosen on validation), then two at it.
    "lab24_slicing": 500,
    # Each arm's first seed at three peak rates (chosen on validation), then two seeds at it.
    "lab25_consistency": 1500,
    # Fine-tuned under two poolings; three pretrainings per objective (one fine-tuning seed each);
    # the first pretraining's fine-tuning at two rates (chosen on validation).
    "lab26_bert_objectives": 1500,
    "pair_stability": 6800,
    # Three seeds per setting since a080328 (its record ran one).
    "anchor_strength": 1600,
}


def resumes(entry):
    """Whether `(name, program, flags)` loses nothing when cut off: its program keeps its
    progress, and it is not one of the course's labs (whose record's wall time must be a
    whole run's)."""
    name, program, _ = entry
    return program in KEEPS_PROGRESS and (
        program.startswith("benchmarks.") or name in BENCHMARK_NAMES
    )


# Records the plan no longer makes, each with the record that now holds its run: kept until the
# next recording of the course replaces them (then their files are deleted, and the entry here).
RETIRED = {
    # lab01's causal model became lab07's default start: this run is the lab's own record now.
    "lab07_document_classification_lab01": "lab07_document_classification",
    # Every method of labs 3–6, 16 and 17 on both starts in one run (92 min): the labs' own
    # records hold those rows at 3 seeds, and the grids hold each method's rates.
    "adaptation": "adaptation_grid",
    # Issue #37: pretraining at an hour per objective with the CPU-hour recipe, whose pre-LN
    # choice the recipe's ablation (its `post_ln` arm) now checks.
    "lab01_pretraining_budget_10min": "lab01_pretraining_budget_60min_causal",
    "lab01_pretraining_pre_ln_masked": "pretraining_recipe",
    "lab01_pretraining_pre_ln_electra": "pretraining_recipe",
    # The span classifier at the NULL prior on 3,000 sentences: the prior became the default, so
    # the run at the lab's rate (3e-4) holds the same span run.
    "lab13_ner_3000_span_prior": "lab13_ner_3000_lr3e-4",
}


def course(names=None, root=None):
    """The plan's entries in order: `LEAD`, every lab the plan does not name at its defaults
    (a new lab joins the course without an edit here), `FOLLOW`, then `BENCHMARKS`; with
    `names`, only those, in that order.

    Raises:
        ValueError: a name is not in the course (the message lists the course's records).
    """
    root = Path(__file__).resolve().parents[1] if root is None else Path(root)
    planned = {name for name, _, _ in COURSE}
    found = [
        (path.stem, path.stem, ())
        for path in sorted((root / "labs").glob("lab*.py"))
        if path.stem not in planned
    ]
    entries = [*LEAD, *found, *FOLLOW, *BENCHMARKS]
    if names is None:
        return entries
    known = {name for name, _, _ in entries}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ValueError(
            f"not in the course: {', '.join(unknown)}; its records are {', '.join(sorted(known))}"
        )
    return [entry for entry in entries if entry[0] in set(names)]
