"""Scoring a model on a test set: BLEU and chrF overall and by source length."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import sacrebleu

from .translator import Translator

# source-length buckets in words, as in Bahdanau et al. (2015), Fig. 2
BUCKETS: list[tuple[str, int, int]] = [
    ("1-5", 1, 5),
    ("6-10", 6, 10),
    ("11-15", 11, 15),
    ("16-20", 16, 20),
    ("21-30", 21, 30),
    ("31+", 31, 10**9),
]


def bucket_of(source: str) -> str:
    """Name of the length bucket a source sentence falls in."""
    n = max(len(source.split()), 1)
    return next(name for name, lo, hi in BUCKETS if lo <= n <= hi)


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
