"""Looking inside a translation: what each decoding step did, and attention diagnostics.

Follows the walkthrough of attention step by step: the decoder state h_t scores every
encoder state, softmax turns the scores into weights, the weighted sum is the context
c_t, and [h_t; c_t] goes through the feed-forward layer to a distribution over pieces.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import torch

from ...config import BOS, DECODE, EOS, PAD, UNK
from ...data.reading import normalize
from ...model.seq2seq import Encoded, output_log_probs
from ..columns import columns_of
from ..rules.clean import clean
from ..rules.parts import sentences_of
from ..rules.pipeline import FORCED, GIVEN, Pipeline
from ..translator import EOS_PIECE, Translation, Translator
from .alignment import WORD_START


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
    diagnostics: dict[str, Any]  # see diagnostics(); empty without attention or search
    forced: bool  # the translation is a given target, force-decoded
    model_text: str  # the model's own words: the translation before the rules after search
    changes: list[str]  # what those rules did, as `s2a inspect` says it (Translation.changed_by)


def inspect_sentence(
    translator: Translator,
    source: str,
    *,
    target: str | None = None,
    beam: int = DECODE.beam,
    glossary: Mapping[str, str] | None = None,
) -> Inspection:
    """Translate `source` as `s2a translate` does (or force-decode `target`) and explain it."""
    translation, steps = explain(translator, source, target, beam=beam, glossary=glossary)
    diag: dict[str, Any] = {}
    if translation.has_attention and translation.searched:
        src, _, weights = translation.word_attention
        diag = diagnostics([w.lstrip(WORD_START) for w in src], weights)
    searched = (translation.model_tokens or translation.tgt_tokens)[:-1]  # the search's pieces
    return Inspection(
        translation=translation,
        steps=steps,
        diagnostics=diag,
        forced=bool(target),
        model_text=translator.subwords.text(searched),
        changes=[] if target else translator.pipeline(glossary).said(translation.changed_by),
    )


@torch.inference_mode()
def explain(
    translator: Translator,
    source: str,
    target: str | None = None,
    *,
    beam: int = DECODE.beam,
    glossary: Mapping[str, str] | None = None,
) -> tuple[Translation, list[Step]]:
    """Translate `source` as translate does (or force-decode `target`); record every step.

    The steps replay the chosen pieces with teacher forcing: the same decoder states the
    search went through for them, so the same weights up to rounding.
    """
    if target is None:  # the translation `s2a translate` gives, piece for piece
        translation, src_ids, ids = chosen(translator, source, beam=beam, glossary=glossary)
        if not translation.searched:  # written back or copied: the model took no step
            return translation, []
        return translation, steps_of(translator, teacher_force(translator, src_ids, ids), ids)
    pipeline = translator.pipeline(glossary, names=GIVEN)  # as `s2a align`: the target is for all
    source = clean(source, translator.max_chars).text  # read whole: what the model takes
    src_ids = pipeline.whole(pipeline.read([source])[0])
    if not src_ids:
        raise ValueError("nothing to inspect: the sentence is empty")
    rules = Pipeline(setting=translator.setting, names=FORCED)  # the target as the model reads it
    given = normalize(target)
    (line,) = rules.read([given])
    ids = line.parts[0].ids
    steps = steps_of(translator, teacher_force(translator, src_ids, ids), ids)
    pieces = translator.subwords.pieces(ids)
    forced = Translation(
        source=source,
        text=translator.subwords.text(pieces),
        score=sum(s.log_prob for s in steps) / len(steps),
        src_tokens=translator.subwords.pieces(src_ids) + [EOS_PIECE],
        tgt_tokens=pieces + [EOS_PIECE],
        weights=[s.weights for s in steps],
        attends=translator.config.model.attends,
    )
    # its text the target as given: the pieces spell a letter the model cannot write (an emoji,
    # <unk>) as nothing ("I like 🍕." was shown "I like .")
    return dataclasses.replace(rules.write(line, [forced]), text=given), steps


class Chosen(NamedTuple):
    """A line translated as translate does, with the ids the search read and wrote."""

    translation: Translation
    src_ids: list[int]  # the SentencePiece ids the model read
    ids: list[int]  # the SentencePiece ids of the pieces the search chose, without </s>


def chosen(
    translator: Translator,
    source: str,
    *,
    beam: int = DECODE.beam,
    glossary: Mapping[str, str] | None = None,
) -> Chosen:
    """`source` translated as translate does, with the ids read and chosen."""
    src_ids = _one_part(translator, source, glossary)
    translation = translator.translate([source], beam=beam, glossary=glossary)[0]
    searched = translation.model_tokens or translation.tgt_tokens  # the pieces the search chose
    ids = [translator.subwords.sp.piece_to_id(p) for p in searched[:-1]]
    return Chosen(translation, src_ids, ids)


def _one_part(
    translator: Translator, source: str, glossary: Mapping[str, str] | None = None
) -> list[int]:
    """The source ids of a line; a line translated in parts or empty is refused."""
    columns = [c.text for c in columns_of(source, translator.longest_line) if c.text.strip()]
    if len(columns) > 1:  # each translated alone (columns.py): no one attention to show
        raise ValueError(
            f"{len(columns)} columns (a tab between them), which s2a translates one at a time; "
            f"inspect one column at a time: {' | '.join(columns)}"
        )
    (line,) = translator.pipeline(glossary).read([source])
    parts = [part.text for part in line.parts]  # as the cut read them (parts.py)
    sentences = sentences_of(" ".join(parts))
    if len(sentences) > 1:  # each translated alone: no one attention to show
        raise ValueError(
            f"{len(sentences)} sentences, which s2a translates one at a time; inspect one "
            f"sentence at a time: {' | '.join(parts)}"
        )
    if len(parts) > 1:
        raise ValueError(
            f"too long to translate as one sentence: s2a translates it in {len(line.parts)} "
            f"parts; inspect one part at a time: {' | '.join(parts)}"
        )
    src_ids = line.parts[0].ids
    if not src_ids:
        raise ValueError("nothing to inspect: the sentence is empty")
    return src_ids


class Forced(NamedTuple):
    """Everything the decoder computed for given target pieces, step by step (batch of 1)."""

    encoded: Encoded  # what the decoder reads from the source
    targets: list[int]  # output index of each step's piece, </s> last
    h: torch.Tensor  # (tgt_len + 1, hidden) decoder RNN states h_t
    scores: torch.Tensor  # (tgt_len + 1, src_len) raw attention scores
    weights: torch.Tensor  # (tgt_len + 1, src_len) their softmax
    context: torch.Tensor  # (tgt_len + 1, hidden) c_t
    attentional: torch.Tensor  # (tgt_len + 1, hidden) tanh(combine([h_t; c_t]))
    log_probs: torch.Tensor  # (tgt_len + 1, vocab) next-piece log-probabilities


@torch.inference_mode()
def teacher_force(translator: Translator, src_ids: list[int], ids: list[int]) -> Forced:
    """Run the decoder over target pieces `ids` (then </s>) after source `src_ids`."""
    model, device = translator.model, translator.device
    tgt = [translator.output_index.get(i, UNK) for i in ids]  # pieces it cannot write: <unk>
    src = torch.tensor([src_ids + [EOS]], device=device)  # (1, src_len)
    encoded = model.encode(src, torch.tensor([src.size(1)]))
    tgt_in = torch.tensor([[BOS] + tgt], device=device)  # (1, tgt_len + 1)
    decoder = model.decoder
    # h, attentional: (1, tgt_len + 1, hidden); weights: (1, tgt_len + 1, src_len)
    h, attentional, weights, _ = decoder.run(tgt_in, encoded.init, encoded.states, encoded.mask)
    scores = decoder.attention.score(h, encoded.states)  # (1, tgt_len + 1, src_len)
    context, _ = decoder.attention(h, encoded.states, encoded.mask)  # (1, tgt_len + 1, hidden)
    return Forced(
        encoded=encoded,
        targets=tgt + [EOS],
        h=h[0],
        scores=scores[0].float(),
        weights=weights[0].float(),
        context=context[0],
        attentional=attentional[0],
        log_probs=output_log_probs(decoder.out(attentional))[0],
    )


def steps_of(translator: Translator, forced: Forced, ids: list[int]) -> list[Step]:
    """One Step per target piece of `ids` and the final </s>, from the decoder's numbers."""
    pieces = translator.subwords.pieces(ids) + [EOS_PIECE]
    steps = []
    for t, index in enumerate(forced.targets):
        top = forced.log_probs[t].exp().topk(5)
        steps.append(
            Step(
                piece=pieces[t],
                log_prob=float(forced.log_probs[t, index]),
                scores=forced.scores[t].tolist(),
                weights=forced.weights[t].tolist(),
                context_norm=float(forced.context[t].norm()),
                state_norm=float(forced.h[t].norm()),
                candidates=[
                    (_piece(translator, int(i)), float(p))
                    for p, i in zip(top.values, top.indices, strict=True)
                ],
            )
        )
    return steps


def _piece(translator: Translator, index: int) -> str:
    """The piece string of an output index."""
    if index in (PAD, EOS):
        return EOS_PIECE if index == EOS else "<pad>"
    return translator.subwords.pieces([translator.output_ids[index]])[0]


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
