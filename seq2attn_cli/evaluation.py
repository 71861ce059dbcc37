"""Scoring a model on a test set: BLEU, chrF, and BLEU by source length (sacrebleu)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import sacrebleu

from .data import languages
from .data.reading import BUCKETS, bucket_of
from .decoding.translator import Translator

__all__ = ["BUCKETS", "Scores", "bucket_of", "column_problem", "evaluate", "report", "score"]


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
    hypotheses: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready figures of one model (hypotheses left out)."""
        return {
            "model": self.model,
            "name": self.name,
            "bleu": self.bleu,
            "chrf": self.chrf,
            "signature": self.signature,
            "seconds": self.seconds,
            "sentences_per_second": self.sentences / max(self.seconds, 1e-9),
            "buckets": self.buckets,
        }


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
            value = sacrebleu.corpus_bleu(
                [hypotheses[i] for i in index], [[references[i] for i in index]]
            ).score
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
    hypotheses = [t.text for t in translator.translate(sources, beam=beam, batch_size=batch_size)]
    seconds = time.perf_counter() - start
    bleu, chrf, signature, buckets = score(hypotheses, references, sources)
    return Scores(
        name=name,
        model=model,
        sentences=len(pairs),
        seconds=seconds,
        bleu=bleu,
        chrf=chrf,
        signature=signature,
        buckets=buckets,
        hypotheses=hypotheses,
    )


def report(results: list[Scores], **run: Any) -> dict[str, Any]:
    """The `--format json` object: one shape for one model or several (see the README)."""
    return {"schema": SCHEMA, **run, "models": [r.as_dict() for r in results]}


def column_problem(
    translator: Translator, pairs: list[tuple[str, str]], *, src_col: int, tgt_col: int
) -> str | None:
    """What looks wrong with the test file's column order for this model; None if nothing."""
    writable = set(translator.tgt_pieces)

    def output_share(texts: Sequence[str]) -> float:
        ids = [i for row in translator.subwords.encode(list(texts)) for i in row]
        return sum(i in writable for i in ids) / max(len(ids), 1)

    return languages.column_problem(
        [s for s, _ in pairs],
        [t for _, t in pairs],
        src_col=src_col,
        tgt_col=tgt_col,
        expected=translator.config.languages,
        output_share=output_share,
    )
