"""Scoring a model on a test set: BLEU, chrF, BLEU by source length (sacrebleu), and how well
its confidence ranks the lines (Spearman with sentence chrF, BLEU by confidence quartile)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import sacrebleu

from .data import languages
from .data.reading import BUCKETS, bucket_of
from .decoding.rules.pipeline import SPELLING, Pipeline
from .decoding.translator import Translator

__all__ = [
    "BUCKETS",
    "Scores",
    "bucket_of",
    "column_problem",
    "evaluate",
    "ranking",
    "report",
    "score",
    "spearman",
]


SCHEMA = 1  # of `s2a evaluate --format json`; bump when a field changes meaning or goes


@dataclass
class Scores:
    """What `s2a evaluate` reports for one model."""

    name: str  # what tables call it: the directory's name, or its path when names clash
    model: str  # the model directory
    sentences: int
    seconds: float
    bleu: float
    chrf: float
    signature: dict[str, str]  # sacrebleu's signatures: "bleu", "chrf"
    buckets: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> count, bleu
    # how well each signal ranks the lines: "log_prob" and "confidence" -> see ranking()
    confidence: dict[str, dict[str, Any]] = field(default_factory=dict)
    hypotheses: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready figures of one model (hypotheses left out)."""
        return {
            "model": self.model,
            "name": self.name,
            "bleu": figure(self.bleu),
            "chrf": figure(self.chrf),
            "signature": self.signature,
            "seconds": self.seconds,
            "sentences_per_second": self.sentences / max(self.seconds, 1e-9),
            "buckets": self.buckets,
            "confidence": self.confidence,
        }


def figure(value: float) -> float:
    """A BLEU or chrF as reports give it: 4 decimals (sacrebleu's float sums gave "bleu":
    100.00000000000004, and bucket figures 93.22110509199874 beside a rounded 93.2211)."""
    return round(value, 4)


def score(
    hypotheses: list[str], references: list[str], sources: list[str]
) -> tuple[float, float, dict[str, str], dict[str, dict[str, Any]]]:
    """Corpus BLEU, chrF, their sacrebleu signatures, and BLEU per source-length bucket."""
    bleu, chrf = sacrebleu.metrics.BLEU(), sacrebleu.metrics.CHRF()
    overall = bleu.corpus_score(hypotheses, [references])
    chrf_score = chrf.corpus_score(hypotheses, [references])
    signature = {"bleu": str(bleu.get_signature()), "chrf": str(chrf.get_signature())}
    buckets: dict[str, dict[str, Any]] = {}
    for name, _, _ in BUCKETS:
        index = [i for i, s in enumerate(sources) if bucket_of(s) == name]
        value = None
        if index:
            value = figure(
                sacrebleu.corpus_bleu(
                    [hypotheses[i] for i in index], [[references[i] for i in index]]
                ).score
            )
        buckets[name] = {"count": len(index), "bleu": value}
    return overall.score, chrf_score.score, signature, buckets


def evaluate(
    translator: Translator,
    pairs: list[tuple[str, str]],
    *,
    name: str,
    model: str,
    beam: int,
    batch_size: int,
) -> Scores:
    """Translate the sources of `pairs` and score them against the targets."""
    sources = [s for s, _ in pairs]
    references = [t for _, t in pairs]
    start = time.perf_counter()
    translations = translator.translate(sources, beam=beam, batch_size=batch_size)
    seconds = time.perf_counter() - start
    hypotheses = [t.text for t in translations]
    bleu, chrf, signature, buckets = score(hypotheses, references, sources)
    signals = {
        "log_prob": [t.score for t in translations],
        "confidence": [t.confidence for t in translations],
    }
    return Scores(
        name=name,
        model=model,
        sentences=len(pairs),
        seconds=seconds,
        bleu=bleu,
        chrf=chrf,
        signature=signature,
        buckets=buckets,
        confidence={k: ranking(v, hypotheses, references) for k, v in signals.items()},
        hypotheses=hypotheses,
    )


def sentence_chrf(hypotheses: list[str], references: list[str]) -> list[float]:
    """chrF of each line against its reference (sacrebleu, as the corpus chrF)."""
    chrf = sacrebleu.metrics.CHRF()
    return [chrf.sentence_score(h, [r]).score for h, r in zip(hypotheses, references, strict=True)]


def ranks(values: list[float]) -> list[float]:
    """The rank of each value from 1 up, ties sharing the mean of their ranks."""
    order = sorted(range(len(values)), key=values.__getitem__)
    out = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for k in range(start, end + 1):
            out[order[k]] = (start + end) / 2 + 1
        start = end + 1
    return out


def spearman(x: list[float], y: list[float]) -> float:
    """Spearman's rank correlation: Pearson's between the ranks (0 when one side is constant)."""
    rx, ry = ranks(x), ranks(y)
    n = len(rx)
    mx, my = sum(rx) / n, sum(ry) / n
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    vx, vy = sum((a - mx) ** 2 for a in rx), sum((b - my) ** 2 for b in ry)
    return cov / (vx * vy) ** 0.5 if vx and vy else 0.0


def quartiles(values: list[float]) -> list[list[int]]:
    """Line indices in four groups of (nearly) equal size, from the lowest values up."""
    order = sorted(range(len(values)), key=values.__getitem__)
    return [order[len(order) * q // 4 : len(order) * (q + 1) // 4] for q in range(4)]


def ranking(values: list[float], hypotheses: list[str], references: list[str]) -> dict[str, Any]:
    """How well `values` rank the lines: Spearman with sentence chrF, BLEU by quartile."""
    bleu = []
    for index in quartiles(values):
        refs = [[references[i] for i in index]]
        bleu.append(
            figure(sacrebleu.corpus_bleu([hypotheses[i] for i in index], refs).score)
            if index
            else None
        )
    return {
        "spearman_chrf": spearman(values, sentence_chrf(hypotheses, references)),
        "quartile_bleu": bleu,  # lowest quarter of the values first
        "gap": figure(bleu[3] - bleu[0]) if bleu[0] is not None and bleu[3] is not None else None,
    }


def report(results: list[Scores], **run: Any) -> dict[str, Any]:
    """The `--format json` object: one shape for one model or several (see the README)."""
    return {"schema": SCHEMA, **run, "models": [r.as_dict() for r in results]}


def column_problem(
    translator: Translator, pairs: list[tuple[str, str]], *, src_col: int, tgt_col: int
) -> str | None:
    """What looks wrong with the test file's column order for this model; None if nothing."""
    writable = set(translator.output_ids)
    spelling = Pipeline(setting=translator.setting, names=SPELLING)

    def output_share(texts: Sequence[str]) -> float:
        ids = [i for line in spelling.read(list(texts)) for i in line.parts[0].ids]
        return sum(i in writable for i in ids) / max(len(ids), 1)

    return languages.column_problem(
        [s for s, _ in pairs],
        [t for _, t in pairs],
        src_col=src_col,
        tgt_col=tgt_col,
        expected=translator.config.languages,
        output_share=output_share,
    )
