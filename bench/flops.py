"""What this CPU can do, and what a training step asks of it (bench/run.py's utilisation)."""

from __future__ import annotations

import functools
import re
import statistics
import time
from pathlib import Path
from typing import Any


def matmul_flops(dtype: str, threads: int, n: int) -> float:
    """Measured FLOP/s of an n x n torch.mm in float32 or bfloat16 (median of 7, warmed up)."""
    import torch

    torch.set_num_threads(threads)
    a, b = (torch.randn(n, n).to(getattr(torch, dtype)) for _ in range(2))
    torch.mm(a, b)
    times = []
    for _ in range(7):
        start = time.perf_counter()
        torch.mm(a, b)
        times.append(time.perf_counter() - start)
    return 2 * n**3 / statistics.median(times)


def cpu_flags() -> list[str]:
    """The CPU's AVX-512, bf16 and AMX flags: one model name covers hosts with and without AMX."""
    flags = re.search(r"flags\s*:(.*)", Path("/proc/cpuinfo").read_text())
    wanted = ("avx2", "avx512f", "avx512_bf16", "amx_bf16", "amx_int8", "amx_tile")
    return [f for f in wanted if flags and f in flags[1].split()]


@functools.cache  # measure_training, measure_translation and main all ask
def cpu_features() -> dict[str, Any]:
    """Whether bf16 is native here (bf16 autocast on); the CPU's name and flags are machine's."""
    import torch

    from seq2attn_cli.training.run import bf16_helps

    return {"bf16_native": bf16_helps(torch.device("cpu"))}


def train_flops_per_token(model: dict[str, Any], src_mean: float, tgt_mean: float) -> float:
    """Matmul FLOPs of one training step per target token: 3 x forward (backward ~ 2 x forward).

    Forward, 2 FLOPs per multiply-add, embeddings excluded; E=embed, H=hidden, h=H/2,
    V=tgt_vocab, L=layers, G=3 gates (GRU; 4 LSTM); s=src_mean+1 and t=tgt_mean+1 pieces
    (with EOS) of a mean pair, so r=s/t source pieces per target piece and s keys per query:
      encoder per source piece: sum_l 2 dirs * G * 2 * (in_l*h + h*h), in_1=E, in_l=2h
      decoder RNN per target piece: sum_l G * 2 * (in_l*H + H*H), in_1=E (E+H with input
        feeding: the last attentional vector is read too), in_l=H
      attention: 2*s*H scores + 2*s*H context, + 2*H*H for "general"
      combine [h_t; c_t] -> H: 2*2H*H;  output layer: 2*H*V;  bridge: L*2*H*H per sentence / t
    per target piece = r * encoder + decoder + attention + combine + output + bridge.
    """
    e, big, layers, vocab = model["embed"], model["hidden"], model["layers"], model["tgt_vocab"]
    small, gates, s, t = big // 2, 4 if model["cell"] == "lstm" else 3, src_mean + 1, tgt_mean + 1
    enc = sum(4 * gates * ((2 * small if i else e) * small + small**2) for i in range(layers))
    first = e + (big if model.get("input_feed") else 0)
    dec = sum(2 * gates * ((big if i else first) * big + big**2) for i in range(layers))
    attn = 4 * s * big + (2 * big**2 if model["attention"] == "general" else 0)
    fwd = s / t * enc + dec + attn + 4 * big**2 + 2 * big * vocab + layers * 2 * big**2 / t
    return 3 * fwd
