"""SentencePiece subwords: train a joint unigram model, and turn text into ids and back."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import groupby
from pathlib import Path

import sentencepiece as spm

from ..config import BOS, EOS, PAD, UNK
from ..errors import CorpusError
from .reading import space_quotes

EOS_PIECE = "</s>"  # how the end of a sentence shows among pieces (heatmaps, --align)


class Subwords:
    """A loaded SentencePiece model; ids 0-3 are pad, unk, bos, eos."""

    def __init__(self, *, model_proto: bytes) -> None:
        self.proto = model_proto
        self.sp = spm.SentencePieceProcessor(model_proto=model_proto)
        if (self.sp.pad_id(), self.sp.unk_id(), self.sp.bos_id(), self.sp.eos_id()) != (
            PAD,
            UNK,
            BOS,
            EOS,
        ):
            raise ValueError("spm.model does not use ids 0-3 for pad, unk, bos, eos")

    @classmethod
    def load(cls, path: str | Path) -> Subwords:
        """Load a SentencePiece model file (plain protobuf: nothing in it can run)."""
        return cls(model_proto=Path(path).read_bytes())

    def __len__(self) -> int:
        return self.sp.get_piece_size()

    def encode(self, texts: list[str]) -> list[list[int]]:
        """Ids of each text, without bos/eos."""
        return self.sp.encode(texts, out_type=int)

    def knows(self, char: str) -> bool:
        """Whether some piece holds the character (else it encodes to <unk>)."""
        return char.isspace() or self.sp.piece_to_id(char) != UNK

    def unknown(self, text: str) -> list[str]:
        """Runs of characters in `text` that no piece holds (they encode to <unk>), once each."""
        lost = {c for c in set(text) if not self.knows(c)}
        runs = ("".join(run) for is_lost, run in groupby(text, key=lost.__contains__) if is_lost)
        return list(dict.fromkeys(runs))

    def pieces(self, ids: list[int]) -> list[str]:
        """The piece strings of ids (e.g. '▁étudiant')."""
        return [self.sp.id_to_piece(i) for i in ids]

    def decode(self, ids: list[int]) -> str:
        """Detokenised text of ids; special ids are dropped."""
        return self.sp.decode([i for i in ids if i > EOS])

    def text(self, pieces: list[str]) -> str:
        """Detokenised text of piece strings; one the vocabulary lacks is spelled in pieces."""
        ids: list[int] = []
        for piece in pieces:
            i = self.sp.piece_to_id(piece)
            known = i != UNK or piece == self.sp.id_to_piece(UNK)
            ids += [i] if known else self.sp.encode(piece.replace("▁", " "))
        return self.decode(ids)


def train_subwords(
    texts: list[str], *, vocab_size: int, seed: int, spaced_quotes: bool = False, threads: int = 2
) -> Subwords:
    """Train a unigram SentencePiece model on `texts` (joint source+target), keeping case."""
    with tempfile.TemporaryDirectory() as tmp:
        corpus = os.path.join(tmp, "corpus.txt")
        with open(corpus, "w", encoding="utf-8") as f:
            for text in texts:
                f.write((space_quotes(text) if spaced_quotes else text) + "\n")
        prefix = os.path.join(tmp, "spm")
        spm.set_random_generator_seed(seed)  # same corpus + seed -> same pieces
        with _too_few_pieces(vocab_size):
            spm.SentencePieceTrainer.train(
                input=corpus,
                model_prefix=prefix,
                vocab_size=vocab_size,
                model_type="unigram",
                character_coverage=1.0,
                normalization_rule_name="identity",  # text is NFC already; keep case and forms
                pad_id=PAD,
                unk_id=UNK,
                bos_id=BOS,
                eos_id=EOS,
                hard_vocab_limit=False,  # small corpora get fewer pieces instead of an error
                input_sentence_size=2_000_000,
                shuffle_input_sentence=True,
                num_threads=threads,
                minloglevel=2,
            )
        proto = Path(prefix + ".model").read_bytes()
        return Subwords(model_proto=proto)


@contextmanager
def _too_few_pieces(vocab_size: int) -> Iterator[None]:
    """SentencePiece's refusal of a --vocab-size under one piece per character, in s2a's words
    (its own names an option s2a does not have: "--character_coverage")."""
    try:
        yield
    except RuntimeError as error:
        needed = re.search(r"smaller than required_chars\. \d+ vs (\d+)", str(error))
        if needed is None:
            raise
        raise CorpusError(
            f"--vocab-size {vocab_size} is too small for these corpora: a piece for each of "
            f"their characters and the special ones needs at least {needed[1]}"
        ) from None
