"""Measuring a model: validation during training, and test sets (BLEU, chrF, by length)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import sacrebleu
import torch

from .config import BOS, EOS, TrainConfig
from .corpus import Prepared
from .data import BUCKETS, bucket_of, make_batch
from .loss import label_smoothed_loss
from .search import translate_ids
from .seq2seq import Seq2Seq
from .translator import Translator

__all__ = ["BUCKETS", "Scores", "bucket_of", "evaluate", "probe_attention", "score", "validate"]


@dataclass
class Scores:
    """What `s2a evaluate` reports for one model."""

    model: str
    sentences: int
    seconds: float
    bleu: float
    chrf: float
    signature: str
    buckets: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> count, bleu
    hypotheses: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready figures (hypotheses left out)."""
        return {k: v for k, v in self.__dict__.items() if k != "hypotheses"}


def score(
    hypotheses: list[str], references: list[str], sources: list[str]
) -> tuple[float, float, str, dict[str, dict[str, Any]]]:
    """Corpus BLEU, chrF, BLEU's signature, and BLEU per source-length bucket."""
    bleu = sacrebleu.metrics.BLEU()
    overall = bleu.corpus_score(hypotheses, [references])
    chrf = sacrebleu.metrics.CHRF().corpus_score(hypotheses, [references])
    buckets: dict[str, dict[str, Any]] = {}
    for name, _, _ in BUCKETS:
        index = [i for i, s in enumerate(sources) if bucket_of(s) == name]
        value = None
        if index:
            value = sacrebleu.corpus_bleu(
                [hypotheses[i] for i in index], [[references[i] for i in index]]
            ).score
        buckets[name] = {"count": len(index), "bleu": value}
    return overall.score, chrf.score, str(bleu.get_signature()), buckets


def evaluate(
    translator: Translator, pairs: list[tuple[str, str]], *, name: str, beam: int, batch_size: int
) -> Scores:
    """Translate the sources of `pairs` and score them against the targets."""
    sources = [s for s, _ in pairs]
    references = [t for _, t in pairs]
    start = time.perf_counter()
    hypotheses = [t.text for t in translator.translate(sources, beam=beam, batch_size=batch_size)]
    seconds = time.perf_counter() - start
    bleu, chrf, signature, buckets = score(hypotheses, references, sources)
    return Scores(
        model=name,
        sentences=len(pairs),
        seconds=seconds,
        bleu=bleu,
        chrf=chrf,
        signature=signature,
        buckets=buckets,
        hypotheses=hypotheses,
    )


def validate(
    model: Seq2Seq, data: Prepared, cfg: TrainConfig, device: torch.device
) -> dict[str, Any]:
    """Validation loss, perplexity, greedy BLEU/chrF and three sample translations."""
    model.eval()
    total, tokens = 0.0, 0
    with torch.inference_mode():
        index = list(range(len(data.valid_src)))
        for start in range(0, len(index), 64):
            batch = make_batch(
                data.valid_src, data.valid_tgt, index[start : start + 64], bos=BOS, eos=EOS
            )
            logits, _ = model(batch.src.to(device), batch.src_lengths, batch.tgt_in.to(device))
            total += float(label_smoothed_loss(logits, batch.tgt_out.to(device), 0.0))
            tokens += batch.tgt_tokens
        hyps = translate_ids(model, data.valid_src, beam=1, batch_size=128)
    pieces = model.tgt_pieces.tolist()
    texts = [data.subwords.decode([pieces[t] for t in h.tokens]) for h in hyps]
    refs = [t for _, t in data.valid_pairs]
    loss = total / max(tokens, 1)
    model.train()
    return {
        "valid_loss": loss,
        "valid_ppl": math.exp(min(loss, 50)),
        "valid_bleu": sacrebleu.corpus_bleu(texts, [refs]).score,
        "valid_chrf": sacrebleu.corpus_chrf(texts, [refs]).score,
        "samples": [
            {"source": s, "reference": r, "hypothesis": h}
            for (s, r), h in list(zip(data.valid_pairs, texts, strict=True))[:3]
        ],
    }


def probe_attention(model: Seq2Seq, data: Prepared, text: str) -> dict[str, Any]:
    """Translate the probe sentence and keep its pieces and attention weights."""
    src = data.subwords.encode([text])[0]
    model.eval()
    hyp = translate_ids(model, [src], beam=1, batch_size=1)[0]
    model.train()
    pieces = model.tgt_pieces.tolist()
    return {
        "source": data.subwords.pieces(src) + ["</s>"],
        "target": data.subwords.pieces([pieces[t] for t in hyp.tokens]) + ["</s>"],
        "weights": [[round(w, 4) for w in row] for row in hyp.weights],
    }
