"""The CLI's TensorFlow-free copies of the library's choices, and a --help that stays fast."""

import subprocess
import sys
import time
from pathlib import Path

from kbert.cli import choices

ROOT = Path(__file__).resolve().parents[2]


def test_each_choice_equals_the_library_constant_it_copies():
    from kbert.data import CLASSIFICATION_TASKS
    from kbert.export import export_settings
    from kbert.models import CLASSIFIER_POOLING
    from kbert.text import LONG_INPUT_STRATEGIES
    from kbert.train.token_task_fine_tuning import NER_METHODS

    assert choices.CLASSIFICATION_TASK_NAMES == tuple(sorted(CLASSIFICATION_TASKS))
    assert choices.CLASSIFIER_POOLING == tuple(CLASSIFIER_POOLING)
    assert choices.LONG_INPUT_STRATEGIES == tuple(LONG_INPUT_STRATEGIES)
    assert choices.NER_METHODS == tuple(NER_METHODS)
    assert choices.EXPORT_DTYPES == export_settings.DTYPES
    assert not set(choices.TOKEN_TASKS) & set(CLASSIFICATION_TASKS)


def test_each_pretrain_choice_equals_the_library_constant_it_copies():
    from kbert.data import text_corpus
    from kbert.models import encoder_config, encoder_decoder, pretraining_models
    from kbert.models.pretraining_models import OBJECTIVES
    from kbert.text.corpus_tokenizers import TOKENIZER_KINDS
    from kbert.train import distribute, precision
    from kbert.train.pretraining_optimizer import SCHEDULES

    assert choices.PRETRAINING_OBJECTIVES == OBJECTIVES
    assert choices.PRETRAINING_SCHEDULES == tuple(SCHEDULES)
    assert choices.PRETRAINING_RECIPE == pretraining_models.RECIPE
    assert choices.TOKENIZER_KINDS == TOKENIZER_KINDS
    assert choices.NAMED_CORPORA == text_corpus.NAMED_CORPORA
    assert choices.CORPUS_FORMATS == text_corpus.FORMATS
    assert choices.DOCUMENT_SEPARATORS == text_corpus.DOCUMENT_SEPARATORS
    assert choices.ENCODER_PRESETS == tuple(sorted(encoder_config.PRESETS))
    assert choices.ENCODER_DECODER_PRESETS == tuple(sorted(encoder_decoder.PRESETS))
    assert choices.PRETRAINING_DTYPES == precision.DTYPES
    assert choices.STRATEGIES == distribute.STRATEGIES


def test_help_and_argument_errors_never_import_tensorflow():
    code = (
        "import sys\n"
        "from kbert.cli.main import build_parser\n"
        "parser = build_parser()\n"
        "for command in ('finetune', 'evaluate', 'predict', 'export', 'pretrain'):\n"
        "    try:\n"
        "        parser.parse_args([command, '--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
        "try:\n"
        "    parser.parse_args(['finetune', '--task', 'nope'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = [name for name in ('tensorflow', 'keras') if name in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    seconds = time.perf_counter() - start
    assert result.returncode == 0, result.stderr[-2000:]
    assert "HEAVY []" in result.stdout, result.stdout[-500:]
    assert "invalid choice: 'nope'" in result.stderr
    print(f"parser + 4 helps + an argument error: {seconds:.2f} s")


def test_bad_flag_values_and_paths_are_refused_before_tensorflow_is_imported(tmp_path):
    # Values argparse cannot judge (ranges, a run directory that is none) are checked by each
    # command's precheck, which main() runs before it imports TensorFlow.
    nowhere = str(tmp_path / "nowhere")
    code = (
        "import sys\n"
        "from kbert.cli.main import main\n"
        f"for argv in ({['finetune', '--task', 'trec', '--epochs', '0', '--output-dir', nowhere]},\n"
        f"             {['finetune', '--task', 'conll2003', '--learning-rate', '-1', '--output-dir', nowhere]},\n"
        f"             {['evaluate', nowhere]}, {['predict', nowhere, 'text']},\n"
        f"             {['export', '--name', 'x']}, {['export', nowhere, '--name', 'x']},\n"
        f"             {['pretrain', '--objective', 'masked', '--corpus', nowhere, '--budget-steps', '1', '--output-dir', nowhere]}):\n"
        "    assert main(argv) == 2, argv\n"
        "heavy = [name for name in ('tensorflow', 'keras') if name in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "HEAVY []" in result.stdout, result.stdout[-500:]
    errors = result.stderr
    assert "--epochs must be an int >= 1; received 0" in errors
    assert "--learning-rate must be a positive number; received -1" in errors
    assert errors.count("is not a finished kbert run directory") == 3
    assert "give exactly one of RUN_DIR" in errors
    assert f"--corpus {nowhere!r} is not a file" in errors
