"""Looking inside a model: its card, what each decoding step did, and attention diagnostics.

Follows the walkthrough of attention step by step: the decoder state h_t scores every
encoder state, softmax turns the scores into weights, the weighted sum is the context
c_t, and [h_t; c_t] goes through the feed-forward layer to a distribution over pieces.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from .config import BOS, EOS, PAD
from .data import clean
from .seq2seq import output_log_probs
from .translator import EOS_PIECE, Translation, Translator


def parameter_counts(model: torch.nn.Module) -> dict[str, int]:
    """Parameters per part of the architecture; the parts add up to the whole model."""
    parts = {
        "embeddings": ("encoder.embedding.", "decoder.embedding."),
        "encoder": ("encoder.rnn.", "bridge."),
        "attention": ("decoder.attention.",),
        "decoder": ("decoder.rnn.", "decoder.combine."),
        "output": ("decoder.out.",),
    }
    counts = dict.fromkeys(parts, 0)
    for name, param in model.named_parameters():
        part = next(p for p, prefixes in parts.items() if name.startswith(prefixes))
        counts[part] += param.numel()
    return counts


def model_card(translator: Translator, directory: Path) -> dict[str, Any]:
    """Everything `s2a inspect` shows about a model, as plain data."""
    config = translator.config
    sub = translator.subwords
    sample = [sub.pieces([i])[0] for i in range(4, len(sub), max(len(sub) // 12, 1))][:12]
    return {
        "directory": str(directory),
        "model": config["model"],
        "parameters": parameter_counts(translator.model),
        "vocabulary": {
            "pieces": len(sub),
            "target_pieces": len(translator.tgt_pieces),
            "sample": sample,
        },
        "corpus": config.get("corpus", {}),
        "training": config.get("training", {}),
        "epochs": config.get("epochs", []),
        "best_valid_bleu": config.get("best_valid_bleu"),
        "train_seconds": config.get("train_seconds"),
        "steps": config.get("steps"),
        "files": {p.name: p.stat().st_size for p in sorted(directory.iterdir()) if p.is_file()},
    }


@dataclass(frozen=True)
class Step:
    """One decoding step, as the walkthrough tells it."""

    piece: str  # the piece produced at this step
    log_prob: float  # its log-probability
    scores: list[float]  # raw attention score for each source piece
    weights: list[float]  # softmax of the scores
    context_norm: float  # size of the weighted sum c_t
    state_norm: float  # size of the decoder state h_t
    candidates: list[tuple[str, float]]  # top-5 next pieces with probabilities


@torch.inference_mode()
def explain(
    translator: Translator, source: str, target: str | None = None
) -> tuple[Translation, list[Step]]:
    """Translate `source` (or force-decode `target`) and record every decoding step."""
    model, sub = translator.model, translator.subwords
    ((text, src_ids, _),) = translator.prepare([source])
    if not src_ids:
        raise ValueError("nothing to inspect: the sentence is empty")
    if target is None:  # the model's own greedy translation, piece for piece
        out = translator.translate([source], beam=1)[0]
        ids = [sub.sp.piece_to_id(p) for p in out.tgt_tokens[:-1]]
    else:
        ids = sub.encode([clean(target)])[0]
    to_index = {p: i for i, p in enumerate(translator.tgt_pieces)}
    tgt = [to_index.get(p, 1) for p in ids]  # pieces the model cannot produce become <unk>
    tgt_pieces = sub.pieces(ids)
    src = torch.tensor([src_ids + [EOS]])  # (1, src_len)
    encoded = model.encode(src, torch.tensor([src.size(1)]))
    tgt_in = torch.tensor([[BOS] + tgt])  # (1, tgt_len + 1)
    decoder = model.decoder
    h, _ = decoder.rnn(decoder.embedding(tgt_in), encoded.init)  # (1, tgt_len + 1, hidden)
    scores = decoder.attention.score(h, encoded.states)  # (1, tgt_len + 1, src_len)
    context, _ = decoder.attention(h, encoded.states, encoded.mask)  # for its size per step
    logits, weights = decoder.predict(h, encoded.states, encoded.mask)  # as translation does
    log_probs = output_log_probs(logits)[0]  # (tgt_len + 1, vocab)
    chosen = tgt + [EOS]
    steps = []
    for t, index in enumerate(chosen):
        top = log_probs[t].exp().topk(5)
        steps.append(
            Step(
                piece=(tgt_pieces + [EOS_PIECE])[t],
                log_prob=float(log_probs[t, index]),
                scores=scores[0, t].float().tolist(),
                weights=weights[0, t].tolist(),
                context_norm=float(context[0, t].norm()),
                state_norm=float(h[0, t].norm()),
                candidates=[
                    (_piece(translator, int(i)), float(p))
                    for p, i in zip(top.values, top.indices, strict=True)
                ],
            )
        )
    total = sum(s.log_prob for s in steps)
    translation = Translation(
        source=text,
        text=sub.decode(ids),
        score=total / len(steps),
        src_tokens=sub.pieces(src_ids) + [EOS_PIECE],
        tgt_tokens=tgt_pieces + [EOS_PIECE],
        weights=[s.weights for s in steps],
    )
    return translation, steps


def _piece(translator: Translator, index: int) -> str:
    """The piece string of an output-vocabulary index."""
    if index in (PAD, EOS):
        return EOS_PIECE if index == EOS else "<pad>"
    return translator.subwords.pieces([translator.tgt_pieces[index]])[0]


def diagnostics(src: list[str], weights: list[list[float]]) -> dict[str, Any]:
    """Entropy, coverage, never-attended words and end-of-sentence soak, from word weights."""
    if not weights:
        return {}
    entropy = [-sum(w * math.log(w) for w in row if w > 0) for row in weights]
    coverage = [sum(row[j] for row in weights) for j in range(len(src))]
    eos_share = sum(row[-1] for row in weights[:-1]) / max(len(weights) - 1, 1)
    return {
        "mean_entropy": sum(entropy) / len(entropy),
        "max_entropy": math.log(len(src)) if src else 0.0,  # a uniform row
        "coverage": dict(zip(src, coverage, strict=True)),
        "never_attended": [w for w, c in zip(src[:-1], coverage[:-1], strict=True) if c < 0.1],
        "eos_share": eos_share,
        "eos_soaks": eos_share > 0.5,
    }
