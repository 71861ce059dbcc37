"""Text in, translations out: a loaded model with its tokenizer, ready to decode."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, overload

import torch

from ..checkpoint import EMBEDDED, load_model
from ..config import DECODE, UNK, StoredConfig
from ..data.reading import normalize
from ..data.subwords import EOS_PIECE, Subwords
from ..model.int8 import quantize
from ..model.seq2seq import Seq2Seq
from .explain.confidence import Unflagged, confidence, dropped, signals
from .rules.articles import agree
from .rules.letters import fold, write_back, write_back_pieces
from .rules.parts import PART_PIECES, joined, split
from .rules.urls import Hidden, hide, outside, with_urls
from .search.batched import translate_ids
from .search.hypothesis import Hypothesis
from .translation import Translation, distinct


@dataclass(frozen=True)
class Source:
    """One input line as the model takes it: cleaned, cut to its limit, long ones in parts."""

    text: str  # normalised, and cut to the model's max_chars: the line as the user gave it
    parts: list[tuple[str, list[int]]]  # (text as read, source ids) each; most lines: one
    truncated: bool  # the line was longer than max_chars
    given: dict[str, str]  # words with letters the model has no piece for: read -> as given
    hidden: Hidden  # the line with its URLs read as the word URL (urls.py)


class Translator:
    """A model, its subwords and its limits; translate() is the one thing it does."""

    def __init__(
        self, *, model: Seq2Seq, subwords: Subwords, config: StoredConfig, device: torch.device
    ) -> None:
        self.model = model
        self.subwords = subwords
        self.config = config
        self.device = device
        self.max_chars = config.training.max_chars  # the limits the model was trained within
        self.max_pieces = config.training.max_pieces
        self.part_pieces = min(self.max_pieces, PART_PIECES)  # longer lines: in parts
        self.tgt_pieces = model.tgt_pieces.tolist()
        self.english = config.languages[1] == "en"  # articles.agree is for English only
        self.judge = config.confidence  # how signals make a confidence (confidence.py)
        self.unflagged = Unflagged.of(config.languages[0] or "")  # what is never named dropped

    @classmethod
    def load(
        cls,
        directory: str | Path | None = None,
        *,
        device: torch.device | None = None,
        quantized: bool = True,
    ) -> Translator:
        """Load a model directory (the embedded one by default); int8 on CPU unless told not to."""
        device = device or torch.device("cpu")
        model, subwords, config = load_model(EMBEDDED if directory is None else directory)
        if device.type == "cpu" and quantized:
            model = quantize(model)
        return cls(model=model.to(device), subwords=subwords, config=config, device=device)

    def prepare(self, texts: list[str]) -> list[Source]:
        """Clean source lines, cut them to the model's limit and the long ones into parts."""
        cleaned = [normalize(t) for t in texts]
        cut = [t[: self.max_chars] for t in cleaned]
        hidden = [hide(t) for t in cut]  # urls.py
        folded = [fold(h.text, self.subwords.knows) for h in hidden]  # letters.py
        # one call for all: SentencePiece spends ~60 us per call on 1-line batches
        encoded = self.subwords.encode([read for read, _ in folded])
        return [
            Source(
                text=text,
                parts=[(read, ids)] if len(ids) <= self.part_pieces else self._parts(read),
                truncated=len(whole) > len(text),
                given=given,
                hidden=kept,
            )
            for whole, text, kept, (read, given), ids in zip(
                cleaned, cut, hidden, folded, encoded, strict=True
            )
        ]

    def unreadable(self, text: str) -> list[str]:
        """Runs of characters the model reads as nothing: no piece, and no base letter with one
        (a URL's are written back as given, urls.py)."""
        return self.subwords.unknown(fold(outside(text), self.subwords.knows)[0])

    def _parts(self, text: str) -> list[tuple[str, list[int]]]:
        """A long line cut into parts of at most part_pieces (parts.split), with their pieces."""

        def fits(part: str) -> bool:
            return len(self.subwords.encode([part])[0]) <= self.part_pieces

        pieces = split(text, fits)
        return list(zip(pieces, self.subwords.encode(pieces), strict=True))

    @overload
    def translate(self, texts: str, *, beam: int = ..., batch_size: int = ...) -> Translation: ...
    @overload
    def translate(
        self, texts: Sequence[str], *, beam: int = ..., batch_size: int = ...
    ) -> list[Translation]: ...
    def translate(
        self,
        texts: str | Sequence[str],
        *,
        beam: int = DECODE.beam,
        batch_size: int = DECODE.batch_size,
    ) -> Translation | list[Translation]:
        """Translate one sentence (a str) or each of a list of them; blank gives empty.

        A sentence's translation never depends on the others translated with it.
        """
        if isinstance(texts, str):
            return self.translate([texts], beam=beam, batch_size=batch_size)[0]
        if not isinstance(texts, Sequence) or not all(isinstance(t, str) for t in texts):
            raise TypeError(
                f"translate() takes a str (one sentence) or a list of str, not {_describe(texts)}"
            )
        if beam < 1 or batch_size < 1:
            raise ValueError(f"beam and batch_size must be at least 1, not {beam} and {batch_size}")
        lines = self.prepare(texts)
        todo = [
            (n, text, ids)
            for n, line in enumerate(lines)
            for text, ids in line.parts
            if self._readable(ids)
        ]
        hyps = translate_ids(
            self.model, [ids for _, _, ids in todo], beam=beam, batch_size=batch_size
        )
        done: list[list[Translation]] = [[] for _ in lines]
        for (n, text, ids), hyp in zip(todo, hyps, strict=True):
            done[n].append(self._translation(text, ids, hyp, lines[n].given))
        return [
            with_urls(self.rate(joined(line.text, found, truncated=line.truncated)), line.hidden)
            if found or not line.text.strip()
            else as_given(line.text, truncated=line.truncated)
            for line, found in zip(lines, done, strict=True)
        ]

    def _readable(self, ids: list[int]) -> bool:
        """Whether source pieces hold a letter or digit the model knows (not <unk>, U+FFFD)."""
        # fed only <unk>, word starts and punctuation ("😂😂!" is "▁ <unk> !"), the model
        # invents a sentence: "Come on.", "Take off!"
        pieces = self.subwords.pieces(ids)
        return any(
            i != UNK and any(c.isalnum() for c in p) for i, p in zip(ids, pieces, strict=True)
        )

    def translate_document(self, text: str, *, format: str = "text", beam: int = 5) -> str:
        """Translate a document (documents.FORMATS): its structure kept, its tags placed."""
        from ..documents import translate_document  # documents imports decoding, not back

        return translate_document(self, text, format=format, beam=beam)

    def rate(self, t: Translation) -> Translation:
        """`t` with its confidence and the source words it may have dropped (confidence.py)."""
        if not t.tgt_tokens:  # a blank line: nothing to translate, nothing to miss
            return dataclasses.replace(t, confidence=1.0)
        values = signals(t.src_tokens, t.tgt_tokens, t.weights, t.score)
        missed = []
        if t.has_attention:
            missed = dropped(t.src_tokens, t.weights, self.judge.threshold, self.unflagged)
        return dataclasses.replace(t, confidence=confidence(values, self.judge), dropped=missed)

    def _translation(
        self, text: str, ids: list[int], hyp: Hypothesis, given: dict[str, str]
    ) -> Translation:
        """One sentence's Translation from its search result, the rules after it applied."""
        own, pieces, written = self._written(hyp.tokens, given)
        return Translation(
            source=text,
            text=written,
            score=hyp.score,
            src_tokens=self.subwords.pieces(ids) + [EOS_PIECE],
            tgt_tokens=pieces + [EOS_PIECE],
            weights=hyp.weights,
            model_tokens=own + [EOS_PIECE] if pieces != own else [],
            alternatives=distinct(
                [self._written(h.tokens, given)[2] for h in hyp.runners_up], written
            ),
        )

    def _written(
        self, tokens: list[int], given: dict[str, str]
    ) -> tuple[list[str], list[str], str]:
        """A search result's own pieces, its pieces after the rules, and its text."""
        own = self.subwords.pieces([self.tgt_pieces[t] for t in tokens])
        agreed = agree(own) if self.english else own  # articles.py
        pieces = write_back_pieces(agreed, given)  # letters.py
        return own, pieces, write_back(self.subwords.text(agreed), given)


def as_given(text: str, *, truncated: bool) -> Translation:
    """A line with nothing the model can read (emoji, a script it has no pieces for), written
    back as given (cleaned as every line is: one line, NFC) rather than translated into an
    invented sentence; confidence 0."""
    return Translation(text, text, 0.0, [], [], [], truncated=truncated)


def _describe(value: Any) -> str:
    """A value's type for an error message; for a sequence, also its first non-str item's."""
    if isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        bad = next(v for v in value if not isinstance(v, str))
        return f"{type(value).__name__} holding {type(bad).__name__} {bad!r:.40}"
    return type(value).__name__
