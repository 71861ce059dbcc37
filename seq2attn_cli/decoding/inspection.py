"""Looking inside a model: its card, what each decoding step did, and attention diagnostics.

Follows the walkthrough of attention step by step: the decoder state h_t scores every
encoder state, softmax turns the scores into weights, the weighted sum is the context
c_t, and [h_t; c_t] goes through the feed-forward layer to a distribution over pieces.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from ..checkpoint import HISTORY, read_json
from ..config import BOS, EOS, PAD
from ..data.reading import normalize
from ..errors import ModelError
from ..model.seq2seq import output_log_probs
from .alignment import WORD_START
from .letters import fold, write_back, write_back_pieces
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
    config, written = translator.config, translator.config.raw
    sub = translator.subwords
    sample = [sub.pieces([i])[0] for i in range(4, len(sub), max(len(sub) // 12, 1))][:12]
    return {
        "directory": str(directory),
        "model": dataclasses.asdict(config.model),
        "parameters": parameter_counts(translator.model),
        "vocabulary": {
            "pieces": len(sub),
            "target_pieces": len(translator.tgt_pieces),
            "sample": sample,
        },
        "corpus": written.get("corpus", {}),
        "training": dataclasses.asdict(config.training),
        "epochs": written.get("epochs", []),
        "best_valid_bleu": written.get("best_valid_bleu"),
        "train_seconds": written.get("train_seconds"),
        "steps": written.get("steps"),
        "files": {p.name: p.stat().st_size for p in sorted(directory.iterdir()) if p.is_file()},
    }


def read_history(directory: Path) -> dict[str, Any]:
    """The probe sentence's attention after every epoch, as training kept it (history.json)."""
    path = directory / HISTORY
    if not path.exists():
        raise ModelError(f"{path}: missing (the model was trained without a probe sentence)")
    history = read_json(path)
    for epoch in history.get("epochs", []):
        # before 2026-11-30 a probe cut at the length limit had its </s> but no attention row
        if len(epoch["weights"]) == len(epoch["target"]) - 1:
            epoch["target"] = epoch["target"][:-1]
    return history


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


@dataclass(frozen=True)
class Inspection:
    """One sentence as `s2a inspect` shows it: its translation, every step, diagnostics."""

    translation: Translation  # as `s2a translate` gives it, or the forced target
    steps: list[Step]
    diagnostics: dict[str, Any]  # see diagnostics(); empty without attention
    forced: bool  # the translation is a given target, force-decoded
    model_text: str  # the model's own words: the translation before the rules after search
    changes: list[str]  # what those rules changed in it (articles.py, letters.py), if anything


def inspect_sentence(
    translator: Translator, source: str, *, target: str | None = None, beam: int = 5
) -> Inspection:
    """Translate `source` as `s2a translate` does (or force-decode `target`) and explain it."""
    translation, steps = explain(translator, source, target, beam=beam)
    diag: dict[str, Any] = {}
    if translation.has_attention:
        src, _, weights = translation.word_attention
        diag = diagnostics([w.lstrip(WORD_START) for w in src], weights)
    own = translation.model_tokens[:-1]
    model_text = translator.subwords.text(own) if own else translation.text
    return Inspection(
        translation=translation,
        steps=steps,
        diagnostics=diag,
        forced=bool(target),
        model_text=model_text,
        changes=[] if target else _changes(translator, translation, model_text),
    )


def _changes(translator: Translator, translation: Translation, model_text: str) -> list[str]:
    """What the rules after the search changed in the model's words (letters.py, articles.py)."""
    _, given = fold(translation.source, translator.subwords.knows)  # as translate() read it
    letters = write_back(model_text, given)
    rules = (
        ("set a/an by the next word", letters != translation.text),
        ("wrote back the letters it read as base letters", letters != model_text),
    )
    return [rule for rule, changed in rules if changed]


@torch.inference_mode()
def explain(
    translator: Translator, source: str, target: str | None = None, *, beam: int = 5
) -> tuple[Translation, list[Step]]:
    """Translate `source` as translate does (or force-decode `target`); record every step.

    The steps replay the chosen pieces with teacher forcing: the same decoder states the
    search went through for them, so the same weights up to rounding.
    """
    sub = translator.subwords
    (line,) = translator.prepare([source])
    if len(line.parts) > 1:
        raise ValueError(
            f"too long to translate as one sentence: s2a translates it in {len(line.parts)} "
            "parts; inspect one part at a time"
        )
    ((_, src_ids),) = line.parts
    if not src_ids:
        raise ValueError("nothing to inspect: the sentence is empty")
    if target is None:  # the translation `s2a translate` gives, piece for piece
        translation = translator.translate([source], beam=beam)[0]
        own = translation.model_tokens or translation.tgt_tokens  # the pieces the search chose
        ids = [sub.sp.piece_to_id(p) for p in own[:-1]]
        return translation, _steps(translator, src_ids, ids)
    read, given = fold(normalize(target), sub.knows)  # the target as the model can write it
    ids = sub.encode([read])[0]
    steps = _steps(translator, src_ids, ids)
    translation = translator.rate(
        Translation(
            source=line.text,
            text=write_back(sub.decode(ids), given),
            score=sum(s.log_prob for s in steps) / len(steps),
            src_tokens=sub.pieces(src_ids) + [EOS_PIECE],
            tgt_tokens=write_back_pieces(sub.pieces(ids), given) + [EOS_PIECE],
            weights=[s.weights for s in steps],
        )
    )
    return translation, steps


def _steps(translator: Translator, src_ids: list[int], ids: list[int]) -> list[Step]:
    """Force-decode target pieces `ids` after source `src_ids`; one Step per piece and </s>."""
    model, sub, device = translator.model, translator.subwords, translator.device
    to_index = {p: i for i, p in enumerate(translator.tgt_pieces)}
    tgt = [to_index.get(p, 1) for p in ids]  # pieces the model cannot produce become <unk>
    tgt_pieces = sub.pieces(ids) + [EOS_PIECE]
    src = torch.tensor([src_ids + [EOS]], device=device)  # (1, src_len)
    encoded = model.encode(src, torch.tensor([src.size(1)]))
    tgt_in = torch.tensor([[BOS] + tgt], device=device)  # (1, tgt_len + 1)
    decoder = model.decoder
    # h, attentional: (1, tgt_len + 1, hidden); weights: (1, tgt_len + 1, src_len)
    h, attentional, weights, _ = decoder.run(tgt_in, encoded.init, encoded.states, encoded.mask)
    scores = decoder.attention.score(h, encoded.states)  # (1, tgt_len + 1, src_len)
    context, _ = decoder.attention(h, encoded.states, encoded.mask)  # for its size per step
    log_probs = output_log_probs(decoder.out(attentional))[0]  # (tgt_len + 1, vocab)
    steps = []
    for t, index in enumerate(tgt + [EOS]):
        top = log_probs[t].exp().topk(5)
        steps.append(
            Step(
                piece=tgt_pieces[t],
                log_prob=float(log_probs[t, index]),
                scores=scores[0, t].float().tolist(),
                weights=weights[0, t].float().tolist(),
                context_norm=float(context[0, t].norm()),
                state_norm=float(h[0, t].norm()),
                candidates=[
                    (_piece(translator, int(i)), float(p))
                    for p, i in zip(top.values, top.indices, strict=True)
                ],
            )
        )
    return steps


def _piece(translator: Translator, index: int) -> str:
    """The piece string of an output-vocabulary index."""
    if index in (PAD, EOS):
        return EOS_PIECE if index == EOS else "<pad>"
    return translator.subwords.pieces([translator.tgt_pieces[index]])[0]


def diagnostics(src: list[str], weights: list[list[float]]) -> dict[str, Any]:
    """Attention entropy and end-of-sentence soak, from word weights (coverage: confidence.py)."""
    if not weights:
        return {}
    entropy = [-sum(w * math.log(w) for w in row if w > 0) for row in weights]
    eos_share = sum(row[-1] for row in weights[:-1]) / max(len(weights) - 1, 1)
    return {
        "mean_entropy": sum(entropy) / len(entropy),
        "max_entropy": math.log(len(src)) if src else 0.0,  # a uniform row
        "eos_share": eos_share,
        "eos_soaks": eos_share > 0.5,
    }
