"""Hugging Face PyTorch as an optional peer of the speed benchmarks (train_step, pretrain_speed).

torch and transformers are benchmark-only dependencies (`bash benchmarks/install_peers.sh`, then
`PYTHONPATH=../kbert-peers`). Without them a benchmark still runs its kbert side and records why
the peer was skipped. The peer trains in float32, and in bfloat16 under
`torch.autocast("cpu", dtype=torch.bfloat16)` (float32 weights, bfloat16 matmuls: what Keras'
`mixed_bfloat16` policy does), with as many intra-op threads as TensorFlow uses.

The peer runs in a child process of its own (`python -m benchmarks.torch_peer`, fed the same
arrays through a temporary .npz) that imports neither TensorFlow nor Keras, so the two runtimes'
thread pools never share a process and each side is timed as its users run it. PyTorch's CPU
steps use OpenMP threads, which slow down badly when other work competes for the cores: time
both sides on a machine that is otherwise idle.
"""

import argparse
import dataclasses
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

NAME = "torch"
PEER_MODULES = ("torch", "transformers")
# The peer's dtype for each Keras dtype policy the benchmarks try.
AUTOCAST = {"float32": None, "mixed_bfloat16": "bfloat16"}
# kbert's goal against the peer, in each dtype (issue #37).
GOAL_RATIO = 1.25


def add_peers_argument(parser, others=()):
    """Adds `--peers`: the sides timed beside kbert (default: every one, torch when importable)."""
    choices = (*others, NAME)
    parser.add_argument(
        "--peers",
        default=None,
        help=f"comma-separated, from {', '.join(choices)}; 'none' for kbert alone "
        f"(default: all of them, {NAME} only where torch and transformers import)",
    )


def chosen_peers(parser, args, others=()):
    """Returns (peers to run, why torch was skipped or None) from `--peers`.

    torch left out by default because it does not import is a skip; asked for by name, an error.
    """
    choices = (*others, NAME)
    missing = [name for name in PEER_MODULES if importlib.util.find_spec(name) is None]
    if args.peers is None:
        peers = list(choices)
    elif args.peers == "none":
        return [], "not requested (--peers none)"
    else:
        peers = args.peers.split(",")
    for peer in peers:
        if peer not in choices:
            parser.error(f"--peers: {peer!r} is not one of {', '.join(choices)}")
    if NAME not in peers:
        return peers, f"not requested (--peers {args.peers})"
    if missing:
        reason = (
            f"{', '.join(missing)} not importable (bash benchmarks/install_peers.sh, then "
            "PYTHONPATH=../kbert-peers)"
        )
        if args.peers is not None:
            parser.error(f"--peers {NAME}: {reason}")
        print(f"PyTorch peer skipped: {reason}", flush=True)
        return [peer for peer in peers if peer != NAME], reason
    return peers, None


def tensorflow_threads():
    """TensorFlow's intra-op thread count: its setting, or when 0 (the default) every CPU this
    process may run on, which is what TensorFlow then uses."""
    import tensorflow as tf

    setting = tf.config.threading.get_intra_op_parallelism_threads()
    return setting or len(os.sched_getaffinity(0)), setting


def set_up(threads, setting):
    """Seeds torch, gives it `threads` intra-op threads; returns the record's peer facts."""
    import torch
    import transformers

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    return {
        "goal_ratio": GOAL_RATIO,
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__},
        "threads": {
            "torch_intra_op": torch.get_num_threads(),
            "tensorflow_intra_op_setting": setting,
            "rule": "torch.set_num_threads(TensorFlow's intra-op setting, or when 0 the CPUs "
            "in os.sched_getaffinity, TensorFlow's default)",
            "process": "a child process without TensorFlow",
        },
    }


def autocast(dtype):
    """The context for one forward pass in the Keras dtype policy `dtype`."""
    import contextlib

    import torch

    if dtype not in AUTOCAST:
        raise ValueError(f"dtype must be one of {sorted(AUTOCAST)}; received {dtype!r}")
    if AUTOCAST[dtype] is None:
        return contextlib.nullcontext()
    return torch.autocast("cpu", dtype=getattr(torch, AUTOCAST[dtype]))


def adamw(parameters, learning_rate):
    """torch's AdamW with Keras AdamW's default weight decay and epsilon (torch's differ)."""
    import torch

    return torch.optim.AdamW(parameters, lr=learning_rate, weight_decay=0.004, eps=1e-7)


def time_steps(step, steps, warmup):
    """Median seconds of `step()` (one forward, backward and update; returns the loss)."""
    for _ in range(warmup):
        step()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        loss = step()
        times.append(time.perf_counter() - start)
    if not np.isfinite(loss):
        raise RuntimeError(f"non-finite PyTorch loss {loss}")
    return float(np.median(times))


def speeds(seconds, tokens, flops, peaks):
    """The peer's tokens/s and MFU per dtype, from its seconds per step (`measure`), the tokens
    and useful FLOPs of one step, and the matmul peaks (GFLOP/s) the kbert side is judged by."""
    return {
        dtype: {
            "tokens_per_s": tokens / step,
            "mfu": flops / step / 1e9 / peaks[dtype],
        }
        for dtype, step in seconds.items()
    }


def compare(kbert_rows, peer_speeds):
    """Per dtype: kbert's best tokens/s in it, the peer's, and their ratio against the goal.

    Args:
        kbert_rows: list of dict with `dtype` and `kbert_tokens_per_s` (one per configuration;
            the fastest of a dtype counts, XLA or not).
        peer_speeds: dict, dtype → {"tokens_per_s", "mfu"} of the peer.
    """
    comparison = {}
    for dtype, peer in peer_speeds.items():
        kbert = max(r["kbert_tokens_per_s"] for r in kbert_rows if r["dtype"] == dtype)
        ratio = kbert / peer["tokens_per_s"]
        comparison[dtype] = {
            "torch_tokens_per_s": round(peer["tokens_per_s"], 1),
            "torch_mfu": round(peer["mfu"], 4),
            "kbert_tokens_per_s": round(kbert, 1),
            "ratio": round(ratio, 3),
            "goal_met": bool(ratio >= GOAL_RATIO),
        }
        print(
            f"{dtype:15s} PyTorch {peer['tokens_per_s']:7.0f} tok/s (MFU {peer['mfu']:.1%})  "
            f"kbert's best/PyTorch {ratio:.2f} (goal {GOAL_RATIO})",
            flush=True,
        )
    return comparison


def classifier_step(checkpoint, inputs, labels, dtype):
    """The PyTorch peer's training step on `inputs`: a function that runs one, returns the loss.

    transformers' `BertModel` from the same checkpoint directory (no pooler: the head pools the
    sequence output), SDPA attention with the attention mask, the tanh GELU the Keras sides use,
    dropout in training mode; then the same mean pooling, a float32 Linear(2), cross-entropy and
    AdamW (Keras' defaults), as `benchmarks.train_step` does on the Keras side.
    """
    import torch
    import transformers

    encoder = transformers.BertModel.from_pretrained(
        checkpoint,
        attn_implementation="sdpa",
        add_pooling_layer=False,
        hidden_act="gelu_pytorch_tanh",
    )
    head = torch.nn.Linear(encoder.config.hidden_size, 2)
    optimizer = adamw([*encoder.parameters(), *head.parameters()], 1e-5)
    encoder.train()
    ids, segments, mask = (
        torch.from_numpy(inputs[name]).long()
        for name in ("token_ids", "segment_ids", "padding_mask")
    )
    targets = torch.from_numpy(labels).long()

    def step():
        optimizer.zero_grad(set_to_none=True)
        with autocast(dtype):
            sequence = encoder(
                input_ids=ids, token_type_ids=segments, attention_mask=mask
            ).last_hidden_state  # (batch, seq, hidden)
            weights = mask[:, :, None].to(sequence.dtype)
            pooled = (sequence * weights).sum(dim=1) / weights.sum(dim=1)  # (batch, hidden)
        logits = head(pooled.float())  # float32, like the Keras head's Dense(dtype="float32")
        loss = torch.nn.functional.cross_entropy(logits, targets)
        loss.backward()
        optimizer.step()
        return loss.item()

    return step


def causal_lm_step(config, ids, dtype):
    """The PyTorch peer's causal-LM training step on `ids`: a function that runs one.

    `GPT2LMHeadModel` of the sizes in `config` (an `EncoderConfig` as a dict): random weights,
    tied output, SDPA attention, dropout in training mode, its own shifted next-token loss,
    AdamW (Keras' defaults) after clipping the gradients' global norm at 1, as
    `benchmarks.pretrain_speed` compiles `CausalLanguageModel`.
    """
    import torch
    import transformers

    activations = {"gelu": "gelu", "gelu_approximate": "gelu_pytorch_tanh", "relu": "relu"}
    model = transformers.GPT2LMHeadModel(
        transformers.GPT2Config(
            vocab_size=config["vocabulary_size"],
            n_positions=config["max_sequence_length"],
            n_embd=config["hidden_dim"],
            n_layer=config["num_layers"],
            n_head=config["num_heads"],
            n_inner=config["intermediate_dim"],
            activation_function=activations[config["activation"]],
            resid_pdrop=config["dropout"],
            embd_pdrop=config["dropout"],
            attn_pdrop=config["attention_dropout"],
            layer_norm_epsilon=config["layer_norm_epsilon"],
            initializer_range=config["initializer_range"],
            tie_word_embeddings=True,
            bos_token_id=None,
            eos_token_id=None,
            attn_implementation="sdpa",
        )
    )
    model.train()
    optimizer = adamw(model.parameters(), 1e-4)
    tokens = torch.from_numpy(ids).long()  # (batch, seq)

    def step():
        optimizer.zero_grad(set_to_none=True)
        with autocast(dtype):
            loss = model(input_ids=tokens, labels=tokens).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        return loss.item()

    return step


STEPS = {"classifier": classifier_step, "causal_lm": causal_lm_step}


def measure(task, spec, arrays):
    """Times the peer's `task` step per dtype in a child process; returns (seconds, facts).

    Args:
        task: "classifier" (`spec` names the "checkpoint"; `arrays`: token_ids, segment_ids,
            padding_mask, labels) or "causal_lm" (`spec` holds the "config", an `EncoderConfig`;
            `arrays`: ids).
        spec: dict, also with "dtypes" (Keras dtype policy names, keys of `AUTOCAST`), "steps"
            (timed, median reported) and "warmup" (untimed steps first).
        arrays: dict of name → numpy array, the batch.

    Returns:
        ({dtype: median seconds per step}, the record's peer facts from `set_up`).
    """
    threads, setting = tensorflow_threads()
    if "config" in spec:
        spec = {**spec, "config": dataclasses.asdict(spec["config"])}
    spec = {**spec, "threads": threads, "tensorflow_intra_op_setting": setting}
    with tempfile.TemporaryDirectory(prefix="kbert-torch-peer-") as directory:
        np.savez(Path(directory) / "arrays.npz", **arrays)
        (Path(directory) / "spec.json").write_text(json.dumps(spec, default=str))
        child = subprocess.run(
            [sys.executable, "-m", "benchmarks.torch_peer", task, directory],
            stdout=subprocess.PIPE,
            text=True,
            check=False,
        )
    if child.returncode != 0:
        raise RuntimeError(f"the PyTorch peer's process failed (exit {child.returncode})")
    *lines, last = child.stdout.strip().splitlines()
    print("\n".join(lines), flush=True)
    answer = json.loads(last)
    return answer["seconds"], answer["facts"]


def _child(argv=None):
    parser = argparse.ArgumentParser(description="one PyTorch peer measurement (internal)")
    parser.add_argument("task", choices=sorted(STEPS))
    parser.add_argument("directory", type=Path)
    args = parser.parse_args(argv)
    spec = json.loads((args.directory / "spec.json").read_text())
    arrays = dict(np.load(args.directory / "arrays.npz"))
    facts = set_up(spec["threads"], spec["tensorflow_intra_op_setting"])
    seconds = {}
    for dtype in spec["dtypes"]:
        if args.task == "classifier":
            labels = arrays["labels"]
            step = classifier_step(spec["checkpoint"], arrays, labels, dtype)
        else:
            step = causal_lm_step(spec["config"], arrays["ids"], dtype)
        seconds[dtype] = time_steps(step, spec["steps"], spec["warmup"])
    print(json.dumps({"seconds": seconds, "facts": facts}))


if __name__ == "__main__":
    _child()
