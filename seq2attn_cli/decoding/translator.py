"""Text in, translations out: a loaded model with its tokenizer, ready to decode."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, overload

import torch

from ..checkpoint import EMBEDDED, load_model
from ..config import DECODE, UNK, StoredConfig
from ..data.subwords import EOS_PIECE, Subwords
from ..model.int8 import is_quantized, quantize
from ..model.seq2seq import Seq2Seq
from .columns import columns_of, in_columns
from .rules.capitals import Capitals
from .rules.clean import copied, longest_line, worded
from .rules.letters import fold
from .rules.markers import Markers
from .rules.parts import sentences_of
from .rules.pipeline import Part, Pipeline, Setting
from .rules.symbols import set_aside
from .rules.urls import stand_in_urls
from .search.batched import translate_ids
from .search.hypothesis import Hypothesis
from .translation import Translation


class Translator:
    """A model, its subwords and its limits; translate() is the one thing it does."""

    def __init__(
        self,
        *,
        model: Seq2Seq,
        subwords: Subwords,
        config: StoredConfig,
        device: torch.device,
        threads: int = 1,
    ) -> None:
        self.model = model
        self.subwords = subwords
        self.config = config
        self.device = device
        self.threads = threads  # batches searched side by side on a CPU (search/batched.py)
        self.max_chars = config.training.max_chars  # the limits the model was trained within
        self.max_pieces = config.training.max_pieces
        self.output_ids = model.output_ids.tolist()  # output index -> SentencePiece id
        self.output_index = {piece_id: i for i, piece_id in enumerate(self.output_ids)}
        setting = Setting(
            subwords=subwords,
            languages=config.languages,
            spaced_quotes=config.model.spaced_quotes,
            max_chars=config.training.max_chars,
            max_pieces=config.training.max_pieces,
            confidence=config.confidence,
        )
        self.setting = setting
        self.rules = Pipeline(setting=setting)  # around the search: rules/pipeline.py

    @classmethod
    def load(
        cls,
        directory: str | Path | None = None,
        *,
        device: torch.device | None = None,
        quantized: bool = True,
        threads: int = 1,
    ) -> Translator:
        """Load a model directory (the embedded one by default); int8 on CPU unless told not to.

        `threads`: batches searched side by side on a CPU, each on one thread (search/batched.py).
        """
        device = device or torch.device("cpu")
        model, subwords, config = load_model(EMBEDDED if directory is None else directory)
        if precision(device, quantized=quantized) == "int8":
            model = quantize(model)
        return cls(
            model=model.to(device), subwords=subwords, config=config, device=device, threads=threads
        )

    @property
    def longest_line(self) -> int:
        """The longest line `translate` takes whole, in characters (rules/clean.py)."""
        return longest_line(self.max_chars)

    @property
    def precision(self) -> str:
        """What decoding's matmuls run in: "int8" or the float weights' dtype ("float32")."""
        if is_quantized(self.model):
            return "int8"
        return str(self.model.decoder.embedding.weight.dtype).removeprefix("torch.")

    def unreadable(self, text: str) -> list[str]:
        """Runs of characters the model reads as nothing: no piece, and no base letter with one
        (a URL's, symbols and a sentence's marker are written back as given: rules/urls.py,
        symbols.py, markers.py; a line in capitals is read in sentence case: capitals.py)."""
        knows = self.subwords.knows
        read = stand_in_urls(text, knows)
        glued = set_aside(read.text, knows).read  # symbols glued to a word or a stand-in
        # a line in capitals is read in sentence case: its capitals are no missing pieces
        glued = Capitals(encode=self.subwords.encode).read(glued)[0]
        blanked = read.pattern.sub(" ", glued) if read.kept else glued  # the stand-ins: out
        blanked = " ".join(Markers().read(part)[0] for part in sentences_of(blanked))  # markers
        return self.subwords.unknown(fold(blanked, knows)[0])

    @overload
    def translate(
        self,
        texts: str,
        *,
        beam: int = ...,
        batch_size: int = ...,
        glossary: Mapping[str, str] | None = ...,
    ) -> Translation: ...
    @overload
    def translate(
        self,
        texts: Sequence[str],
        *,
        beam: int = ...,
        batch_size: int = ...,
        glossary: Mapping[str, str] | None = ...,
    ) -> list[Translation]: ...
    def translate(
        self,
        texts: str | Sequence[str],
        *,
        beam: int = DECODE.beam,
        batch_size: int = DECODE.batch_size,
        glossary: Mapping[str, str] | None = None,
    ) -> Translation | list[Translation]:
        """Translate one sentence (a str) or each of a list of them; blank gives empty.

        A sentence's translation never depends on the others translated with it. `glossary`:
        French term -> English, written as given (rules/glossary.py; GlossaryError if bad).
        """
        if isinstance(texts, str):
            return self.translate([texts], beam=beam, batch_size=batch_size, glossary=glossary)[0]
        if not isinstance(texts, Sequence) or not all(isinstance(t, str) for t in texts):
            raise TypeError(
                f"translate() takes a str (one sentence) or a list of str, not {_describe(texts)}"
            )
        _check_counts(beam=beam, batch_size=batch_size)
        # a line's tab-separated columns, each translated as a line alone (columns.py)
        columns = [columns_of(text, self.longest_line) for text in texts]
        flat = [column.text for line in columns for column in line]
        done = iter(self._translate_lines(flat, beam, batch_size, glossary))
        written = [in_columns(cs, [next(done) for _ in cs]) for cs in columns]
        return [self._unread_said(t) for t in written]

    def _translate_lines(
        self, texts: list[str], beam: int, batch_size: int, glossary: Mapping[str, str] | None
    ) -> list[Translation]:
        """Each line (no tab in it) translated: read by the rules, searched, written back."""
        rules = self.pipeline(glossary)
        lines = rules.read(texts)
        readable = [(n, part) for n, line in enumerate(lines) for part in line.parts]
        readable = [(n, part) for n, part in readable if self._readable(part.ids)]
        copies = [not worded(part.read) for _, part in readable]  # rules/clean.py
        hyps = translate_ids(
            self.model,
            [part.ids for (_, part), copy in zip(readable, copies, strict=True) if not copy],
            beam=beam,
            batch_size=batch_size,
            threads=self.threads,
        )
        searched = iter(hyps)
        done: list[list[Translation]] = [[] for _ in lines]
        for (n, part), copy in zip(readable, copies, strict=True):  # in order, as they come
            if copy:
                done[n].append(rules.write_part(part, self.copy_of(part), []))
            else:
                done[n].append(rules.write_part(part, *self.searched(part.ids, next(searched))))
        return [rules.write(line, found) for line, found in zip(lines, done, strict=True)]

    def _unread_said(self, t: Translation) -> Translation:
        """`t` with what of its line (as far as it was read: a line too long is cut) the model
        could not read and the translation does not hold among its dropped words ("☃" of
        "l☃à"): Python and the server said nothing of what the command line warns about."""
        lost = [r for r in self.unreadable(t.source) if r not in t.text and r not in t.dropped]
        return dataclasses.replace(t, dropped=[*t.dropped, *lost]) if lost else t

    def pipeline(
        self, glossary: Mapping[str, str] | None = None, *, names: Sequence[str] | None = None
    ) -> Pipeline:
        """The rules around the search (rules/pipeline.py), with the glossary's if one is
        given, or only the named ones."""
        if glossary is not None and not isinstance(glossary, Mapping):
            raise TypeError(
                f"glossary must map French terms to English ones (a dict), not "
                f"{type(glossary).__name__}"
            )
        if not glossary and names is None:
            return self.rules
        setting = dataclasses.replace(self.setting, glossary=glossary or None)
        return Pipeline(setting=setting, names=names)

    def _readable(self, ids: list[int]) -> bool:
        """Whether source pieces hold a letter or digit the model knows (not <unk>, U+FFFD)."""
        # fed only <unk>, word starts and punctuation ("😂😂!" is "▁ <unk> !"), the model
        # invents a sentence: "Come on.", "Take off!"
        pieces = self.subwords.pieces(ids)
        return any(
            i != UNK and any(c.isalnum() for c in p) for i, p in zip(ids, pieces, strict=True)
        )

    def translate_document(
        self,
        text: str,
        *,
        format: str = "text",
        beam: int = DECODE.beam,
        glossary: Mapping[str, str] | None = None,
    ) -> str:
        """Translate a document (documents.FORMATS): its structure kept, its tags placed."""
        from ..documents import translated  # documents imports decoding, not back

        if not isinstance(text, str):
            raise TypeError(
                f"translate_document() takes a str (the document), not {type(text).__name__}"
            )
        _check_counts(beam=beam)
        return translated(self, text, format=format, beam=beam, glossary=glossary).text

    def copy_of(self, part: Part) -> Translation:
        """A part that holds no word, copied as the model reads it (rules/clean.py)."""
        pieces = self.subwords.pieces(part.ids)
        # what no piece holds (<unk>) is copied as the line gave it: "5🍕" stays "5🍕" (the
        # pieces spell "5 ⁇"); searched, it had come out "5,000.", copied as read "5"
        text = part.read if UNK in part.ids else self.subwords.text(pieces)
        return copied(text, pieces + [EOS_PIECE], attends=self.config.model.attends)

    def searched(self, ids: list[int], hyp: Hypothesis) -> tuple[Translation, list[Translation]]:
        """What the search wrote for source `ids`, before the rules: its best translation and
        the beam's runners-up (without attention)."""
        src_pieces = self.subwords.pieces(ids) + [EOS_PIECE]
        attends = self.config.model.attends

        def written(h: Hypothesis, weights: list) -> Translation:
            pieces = self.subwords.pieces([self.output_ids[i] for i in h.indices])
            text = self.subwords.text(pieces)
            return Translation(
                text, text, h.score, src_pieces, pieces + [EOS_PIECE], weights, attends=attends
            )

        return written(hyp, hyp.weights), [written(h, []) for h in hyp.runners_up]


def precision(device: torch.device, *, quantized: bool) -> str:
    """The weights' precision for decoding on `device`: int8 on a CPU unless told not to.

    int8 is the fastest a CPU decodes in, measured: on AVX-512 BF16 without AMX the output
    layer's matmul (1 thread, 160 rows x 512 x 6,736) took 3.6 ms in int8, 6.5 in bf16, 14.6
    in fp32; on an AMX host beam 5 ran 508 sentences/s in int8 against 380 in bf16 (issue #46).
    CUDA and MPS decode in float32 (quantized ops are CPU-only).
    """
    return "int8" if device.type == "cpu" and quantized else "float32"


def _check_counts(**counts: Any) -> None:
    """Each count (beam, batch_size) a whole number of at least 1: TypeError or ValueError."""
    for name, value in counts.items():
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"{name} must be a whole number, not {type(value).__name__} {value!r}")
        if value < 1:
            raise ValueError(f"{name} must be at least 1, not {value}")


def _describe(value: Any) -> str:
    """A value's type for an error message; for a sequence, also its first non-str item's."""
    if isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        bad = next(v for v in value if not isinstance(v, str))
        return f"{type(value).__name__} holding {type(bad).__name__} {bad!r:.40}"
    return type(value).__name__
