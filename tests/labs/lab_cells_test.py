"""The labs' hand-written cells (the technique in a few lines) against kbert's layers.

Each lab writes a technique out (an adapter, first-subword alignment, Viterbi, pair packing,
masks and tied output) and checks it equals the library's version before using the library.
These tests run those cell functions on tiny inputs without running the labs: the functions
and the imports above them are taken from the lab's source.
"""

import ast
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[2]


def lab_functions(lab, *names):
    """The named top-level functions of `labs/<lab>.py`, with the lab's imports, not run."""
    path = ROOT / "labs" / f"{lab}.py"
    tree = ast.parse(path.read_text())
    kept = [
        node
        for node in tree.body
        if isinstance(node, ast.Import | ast.ImportFrom)
        or (isinstance(node, ast.FunctionDef) and node.name in names)
    ]
    namespace = {}
    exec(compile(ast.Module(body=kept, type_ignores=[]), str(path), "exec"), namespace)
    missing = [name for name in names if name not in namespace]
    assert not missing, f"labs/{lab}.py defines no {missing}"
    return SimpleNamespace(**{name: namespace[name] for name in names})


def test_lab03_adapter_by_hand_equals_kbert_adapter(capsys):
    lab = lab_functions("lab03_adapters", "adapter_by_hand", "check_adapter_by_hand")
    assert lab.check_adapter_by_hand(hidden_dim=16, bottleneck_dim=4, seed=1) < 1e-5
    assert "hand-written vs kbert's Adapter" in capsys.readouterr().out


def _tokenizer(words):
    from kbert.text import WordPieceTokenizer

    return WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words])


def test_lab13_first_subword_alignment_equals_kbert_features(capsys):
    from kbert.data.conll2003 import TaggedSentence

    lab = lab_functions("lab13_ner", "align_first_subwords", "show_first_subword_alignment")
    tokenizer = _tokenizer(["eu", "rejects", "ger", "##man", "call", "."])
    sentences = [
        TaggedSentence(words=("EU", "rejects"), tags=("B-ORG", "O")),  # no word cut: skipped
        TaggedSentence(
            words=("EU", "rejects", "German", "call", "."), tags=("B-ORG", "O", "B-MISC", "O", "O")
        ),
    ]
    tokens, labels = lab.show_first_subword_alignment(tokenizer, sentences)
    assert tokens == ["[CLS]", "eu", "rejects", "ger", "##man", "call", ".", "[SEP]"]
    assert labels == [-100, 3, 0, 7, -100, 0, 0, -100]  # CONLL2003_TAGS: B-ORG 3, B-MISC 7
    assert "##man" in capsys.readouterr().out


def test_lab13_viterbi_by_hand_equals_crf_decode():
    lab = lab_functions("lab13_ner", "viterbi_by_hand", "check_viterbi_by_hand")
    for seed in range(3):
        assert len(lab.check_viterbi_by_hand(num_tags=4, length=5, seed=seed)) == 5


def test_lab12_pair_packed_by_hand_equals_bert_preprocessor(capsys):
    from kbert.text import BertPreprocessor

    lab = lab_functions("lab12_pairs", "pack_pair_by_hand", "show_packed_pair")
    tokenizer = _tokenizer(["a", "dog", "runs", "an", "animal", "moves", "##s"])
    preprocessor = BertPreprocessor(tokenizer, sequence_length=12)
    texts = ["a dog runs a dog runs a dog runs", "A dog runs."]
    pairs = ["an animal moves", "An animal movess"]  # the first pair does not fit: skipped
    packed = lab.show_packed_pair(preprocessor, texts, pairs)
    assert packed["token_ids"] == [2, 5, 6, 7, 1, 3, 8, 9, 10, 11, 3, 0]
    assert packed["segment_ids"] == [0] * 6 + [1] * 5 + [0]
    assert packed["padding_mask"] == [1] * 11 + [0]
    assert "segment" in capsys.readouterr().out


def test_lab01_masks_by_hand_equal_attention_bias(capsys):
    lab = lab_functions("lab01_pretraining", "show_attention_masks")
    allowed = lab.show_attention_masks(length=4, padding=1)
    assert allowed[1].tolist() == [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 0]]
    assert "Combined" in capsys.readouterr().out


def test_lab01_tied_output_by_hand_equals_causal_lm_logits():
    import numpy as np

    from kbert.models import Encoder
    from kbert.models.causal_language_model import CausalLanguageModel

    lab = lab_functions("lab01_pretraining", "check_tied_output")
    model = CausalLanguageModel(Encoder.from_preset("tiny", causal=True))
    model.decoder.bias.assign(np.linspace(-1.0, 1.0, model.decoder.vocabulary_size))
    token_ids = np.arange(12, dtype="int32").reshape(2, 6) + 5
    assert lab.check_tied_output(model, token_ids) < 1e-4


def lab_constant(lab, name):
    """A top-level constant of `labs/<lab>.py` (a literal), read without running the lab."""
    tree = ast.parse((ROOT / "labs" / f"{lab}.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == name for target in node.targets
        ):
            return ast.literal_eval(node.value)
    raise AssertionError(f"labs/{lab}.py assigns no {name}")


def test_lab17s_source_setting_is_the_distillation_grids_and_its_flags_default_to_it():
    from benchmarks.distillation_grid import SOURCE

    setting = lab_constant("lab17_distillation", "SOURCE_SETTING")
    assert (setting["temperature"], setting["soft_weight"]) == SOURCE
    # The flags read the constant, so the two cannot drift apart.
    source = (ROOT / "labs" / "lab17_distillation.py").read_text()
    assert 'default=SOURCE_SETTING["temperature"]' in source
    assert 'default=SOURCE_SETTING["soft_weight"]' in source


def test_lab24s_control_weighs_slice_questions_in_the_loss_and_keeps_every_question():
    import numpy as np

    lab = lab_functions("lab24_slicing", "upweighted_loss", "weight_share")
    logits = np.array([[2.0, 0.0], [0.0, 1.0], [1.0, 1.0]], dtype="float32")
    targets = np.array([[0, 1], [0, 0], [1, 0]], dtype="int32")  # (class, in slice)
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    per_row = -log_probs[np.arange(3), targets[:, 0]]
    weights = np.array([3.0, 1.0, 1.0])
    loss = float(lab.upweighted_loss(3.0)(targets, logits))
    assert abs(loss - float((weights * per_row).sum() / weights.sum())) < 1e-5
    # Weight 1 is the plain mean cross-entropy: the baseline's loss.
    assert abs(float(lab.upweighted_loss(1.0)(targets, logits)) - float(per_row.mean())) < 1e-5
    in_slice = np.array([True, False, False, False])
    assert lab.weight_share(in_slice, 1.0) == 0.25
    assert lab.weight_share(in_slice, 3.0) == 0.5
