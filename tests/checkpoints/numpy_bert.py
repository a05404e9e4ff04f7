"""A float64 NumPy BERT forward pass from Hugging Face tensor names: an independent reference."""

import json
import math
from pathlib import Path

import numpy as np

_erf = np.vectorize(math.erf)


def _gelu(x, approximate):
    if approximate:
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


def _layer_norm(x, tensors, name, eps):
    mean = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * tensors[f"{name}.weight"] + tensors[f"{name}.bias"]


def _linear(x, tensors, name):
    return x @ tensors[f"{name}.weight"].T + tensors[f"{name}.bias"]


def bert_forward(
    tensors, num_heads, token_ids, segment_ids, padding_mask, eps=1e-12, approximate_gelu=False
):
    """Returns (sequence_output, pooled_output) as float64 arrays."""
    t = {k: np.asarray(v, np.float64) for k, v in tensors.items()}
    seq = token_ids.shape[1]
    x = (
        t["embeddings.word_embeddings.weight"][token_ids]
        + t["embeddings.position_embeddings.weight"][:seq][None]
        + t["embeddings.token_type_embeddings.weight"][segment_ids]
    )
    x = _layer_norm(x, t, "embeddings.LayerNorm", eps)
    batch, _, hidden = x.shape
    head_dim = hidden // num_heads
    bias = np.where(padding_mask[:, None, None, :] == 1, 0.0, -np.inf)
    index = 0
    while f"encoder.layer.{index}.attention.self.query.weight" in t:
        p = f"encoder.layer.{index}"

        def heads(name, p=p, x=x):
            y = _linear(x, t, f"{p}.attention.self.{name}")
            return y.reshape(batch, seq, num_heads, head_dim).transpose(0, 2, 1, 3)

        scores = heads("query") @ heads("key").transpose(0, 1, 3, 2) / math.sqrt(head_dim) + bias
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        context = (probs @ heads("value")).transpose(0, 2, 1, 3).reshape(batch, seq, hidden)
        x = _layer_norm(
            x + _linear(context, t, f"{p}.attention.output.dense"),
            t,
            f"{p}.attention.output.LayerNorm",
            eps,
        )
        inner = _gelu(_linear(x, t, f"{p}.intermediate.dense"), approximate_gelu)
        x = _layer_norm(x + _linear(inner, t, f"{p}.output.dense"), t, f"{p}.output.LayerNorm", eps)
        index += 1
    pooled = np.tanh(_linear(x[:, 0], t, "pooler.dense"))
    return x, pooled


def write_tiny_checkpoint(
    path, vocabulary_size=40, hidden=16, layers=2, heads=2, intermediate=32, positions=16, seed=0
):
    """Writes a random Hugging Face-format BERT directory and returns its tensors."""
    from safetensors.numpy import save_file

    rng = np.random.default_rng(seed)
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)

    def normal(*shape):
        return (rng.normal(size=shape) * 0.2).astype(np.float32)

    tensors = {
        "embeddings.word_embeddings.weight": normal(vocabulary_size, hidden),
        "embeddings.position_embeddings.weight": normal(positions, hidden),
        "embeddings.token_type_embeddings.weight": normal(2, hidden),
        "embeddings.LayerNorm.weight": 1 + normal(hidden),
        "embeddings.LayerNorm.bias": normal(hidden),
        "pooler.dense.weight": normal(hidden, hidden),
        "pooler.dense.bias": normal(hidden),
    }
    for i in range(layers):
        p = f"encoder.layer.{i}"
        for name, (out, inp) in {
            "attention.self.query": (hidden, hidden),
            "attention.self.key": (hidden, hidden),
            "attention.self.value": (hidden, hidden),
            "attention.output.dense": (hidden, hidden),
            "intermediate.dense": (intermediate, hidden),
            "output.dense": (hidden, intermediate),
        }.items():
            tensors[f"{p}.{name}.weight"] = normal(out, inp)
            tensors[f"{p}.{name}.bias"] = normal(out)
        for name in ("attention.output.LayerNorm", "output.LayerNorm"):
            tensors[f"{p}.{name}.weight"] = 1 + normal(hidden)
            tensors[f"{p}.{name}.bias"] = normal(hidden)
    save_file(tensors, str(path / "model.safetensors"))
    config = {
        "model_type": "bert",
        "vocab_size": vocabulary_size,
        "hidden_size": hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "intermediate_size": intermediate,
        "max_position_embeddings": positions,
        "type_vocab_size": 2,
        "hidden_act": "gelu",
        "layer_norm_eps": 1e-12,
    }
    (path / "config.json").write_text(json.dumps(config))
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    words = [chr(ord("a") + i) for i in range(26)]
    vocab = specials + words + [f"##{w}" for w in words]
    (path / "vocab.txt").write_text("\n".join(vocab[:vocabulary_size]) + "\n")
    return tensors
