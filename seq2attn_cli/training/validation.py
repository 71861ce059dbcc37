"""Validation during training: loss, greedy BLEU/chrF per validation set, the probe's attention."""

from __future__ import annotations

import math
from typing import TypedDict

import sacrebleu
import torch

from ..config import BOS, EOS
from ..data.batching import make_batch
from ..data.corpus import Prepared, ValidSet
from ..data.subwords import EOS_PIECE
from ..decoding.rules.pipeline import VALIDATION, Pipeline, Setting
from ..decoding.search.batched import translate_ids
from ..decoding.translation import Translation
from ..model.seq2seq import Seq2Seq
from .loss import label_smoothed_loss


class SetScores(TypedDict):
    """One validation set's figures after an epoch (config.json's epochs keep them)."""

    name: str
    loss: float  # without label smoothing
    ppl: float
    bleu: float  # greedy search
    chrf: float


class Sample(TypedDict):
    """A validation line as the model translates it, shown after the epoch."""

    source: str
    reference: str
    hypothesis: str


class Validation(TypedDict):
    """Every validation set's figures, their means (what keeps the best model) and samples."""

    valid_loss: float
    valid_ppl: float
    valid_bleu: float
    valid_chrf: float
    sets: list[SetScores]
    samples: list[Sample]


class Probe(TypedDict):
    """The probe sentence as the model translates it after an epoch (history.json)."""

    source: list[str]  # its pieces, </s> last
    target: list[str]  # the pieces greedy search wrote, </s> last
    weights: list[list[float]]  # attention, one row per target piece


def validate(model: Seq2Seq, data: Prepared, device: torch.device) -> Validation:
    """Figures of every validation set, their means (what keeps the best model) and samples."""
    model.eval()
    with torch.inference_mode():
        sets = [_validate_one(model, data, v, device) for v in data.valid]
    model.train()
    scores = [s for s, _ in sets]
    mean = {key: sum(s[key] for s in scores) / len(sets) for key in ("loss", "bleu", "chrf")}
    return {
        "valid_loss": mean["loss"],
        "valid_ppl": math.exp(min(mean["loss"], 50)),
        "valid_bleu": mean["bleu"],
        "valid_chrf": mean["chrf"],
        "sets": scores,
        "samples": [sample for _, s in sets for sample in s[: 3 if len(sets) == 1 else 1]],
    }


def _validate_one(
    model: Seq2Seq, data: Prepared, valid: ValidSet, device: torch.device
) -> tuple[SetScores, list[Sample]]:
    """Loss (no smoothing), perplexity, greedy BLEU and chrF of one validation set."""
    total, tgt_count = 0.0, 0
    index = list(range(len(valid.src)))
    for start in range(0, len(index), 64):
        batch = make_batch(valid.src, valid.tgt, index[start : start + 64], bos=BOS, eos=EOS)
        logits, _ = model(batch.src.to(device), batch.src_lengths, batch.tgt_in.to(device))
        total += float(label_smoothed_loss(logits, batch.tgt_out.to(device), 0.0))
        tgt_count += batch.tgt_count
    hyps = translate_ids(model, valid.src, beam=1, batch_size=128)
    output_ids = model.output_ids.tolist()
    searched = [data.subwords.pieces([output_ids[i] for i in h.indices]) for h in hyps]
    rules = _rules(data)  # the pieces written as s2a translate writes them
    texts = [rules.rewrite(_written(data, p)).text for p in searched]
    refs = [t for _, t in valid.pairs]
    loss = total / max(tgt_count, 1)
    scores: SetScores = {
        "name": valid.name,
        "loss": loss,
        "ppl": math.exp(min(loss, 50)),
        "bleu": sacrebleu.corpus_bleu(texts, [refs]).score,
        "chrf": sacrebleu.corpus_chrf(texts, [refs]).score,
    }
    samples: list[Sample] = [
        {"source": s, "reference": r, "hypothesis": h}
        for (s, r), h in list(zip(valid.pairs, texts, strict=True))[:3]
    ]
    return scores, samples


def _rules(data: Prepared) -> Pipeline:
    """The rules validation runs (rules/pipeline.py: VALIDATION), as this model has them."""
    languages = data.stats["languages"]
    setting = Setting(
        subwords=data.subwords,
        languages=(languages["source"], languages["target"]),
        spaced_quotes=data.spaced_quotes,
        max_chars=0,  # the lines were cut as the corpus was read
        max_pieces=0,
    )
    return Pipeline(setting=setting, names=VALIDATION)


def _written(data: Prepared, pieces: list[str]) -> Translation:
    """What the search wrote, as text, before any rule."""
    text = data.subwords.text(pieces)
    return Translation(text, text, 0.0, [], pieces + [EOS_PIECE], [])


def probe_attention(model: Seq2Seq, data: Prepared, text: str) -> Probe:
    """Translate the probe sentence and keep its pieces and attention weights."""
    (line,) = _rules(data).read([text])  # read as validation's sources were
    src = line.parts[0].ids
    model.eval()
    with torch.inference_mode():
        hyp = translate_ids(model, [src], beam=1, batch_size=1)[0]
    model.train()
    output_ids = model.output_ids.tolist()
    return {
        "source": data.subwords.pieces(src) + [EOS_PIECE],
        "target": data.subwords.pieces([output_ids[i] for i in hyp.indices]) + [EOS_PIECE],
        "weights": [[round(w, 4) for w in row] for row in hyp.weights],
    }
