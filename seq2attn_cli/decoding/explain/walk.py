"""One sentence decoded step by step with every vector, for the page that animates it.

The article draws a vector as a row of cells, brighter for higher values. A state of 512
numbers is too many cells for a screen, so each vector is pooled: cut into CELLS runs of
consecutive numbers, each shown as its mean. The mean is linear, so the pooled context is
exactly the weighted sum of the pooled encoder states: the page can build c_t from the rows
it shows. The steps are the ones `s2a inspect --steps` reports (inspection.steps_of), for
the pieces the beam search chose; none for a line s2a copies rather than searches.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import torch

from ...config import DECODE
from ..rules.pipeline import SPELLING, Pipeline
from ..translator import Translator
from .inspection import Step, chosen, steps_of, teacher_force

CELLS = 32  # cells a vector is drawn with; fewer numbers than this are drawn one a cell
START = "<s>"  # the first step's input: the start mark


def pool(vector: torch.Tensor, cells: int = CELLS) -> list[float]:
    """The means of `cells` runs of consecutive numbers (as equal in length as they can be)."""
    parts = vector.float().tensor_split(min(cells, vector.numel()))  # each (about d/cells,)
    return [float(part.mean()) for part in parts]


@dataclass(frozen=True)
class WalkStep:
    """One decoding step with its vectors pooled; `step` holds what inspect --steps shows."""

    step: Step
    # the piece read at this step: the start mark, then the piece chosen before (its embedding
    # is not shown: the page walks the vectors the decoder computes, not the ones it looks up)
    input: str
    state: list[float]  # h_t, pooled
    context: list[float]  # c_t, pooled
    attentional: list[float]  # tanh(combine([h_t; c_t])), the feed-forward output, pooled


@dataclass(frozen=True)
class Walk:
    """A sentence as the decoder goes through it: source, encoder states, every step."""

    attention: str  # general, dot, additive, or none: one context vector
    source: str  # the line as the model read it
    translation: str  # as `s2a translate` gives it
    model_text: str  # the model's own words, before the rules after the search
    changes: list[str]  # what the rules after the search changed, as `s2a inspect` says it
    source_pieces: list[str]  # then </s>
    encoder_states: list[list[float]]  # pooled; one per source piece, or one for "none"
    init: list[float]  # the decoder's first state (bridged from the encoder), pooled
    sizes: dict[str, int]  # numbers in each vector before pooling: state, embedding
    steps: list[WalkStep]

    def as_dict(self) -> dict[str, Any]:
        """The JSON-ready form POST /steps answers with."""
        return {
            "attention": self.attention,
            "source": self.source,
            "translation": self.translation,
            "model_text": self.model_text,
            "changes": self.changes,
            "source_pieces": self.source_pieces,
            "sizes": self.sizes,
            "cells": len(self.init),
            "encoder_states": [_rounded(row) for row in self.encoder_states],
            "init": _rounded(self.init),
            "steps": [_step_dict(s) for s in self.steps],
        }


def walk(translator: Translator, source: str, *, beam: int = DECODE.beam) -> Walk:
    """Translate `source` as translate does, then replay the chosen pieces with every vector."""
    translation, src_ids, ids = chosen(translator, source, beam=beam)
    forced = teacher_force(translator, src_ids, ids)
    # a line copied or written back took no step (inspection.explain): none to replay
    steps = steps_of(translator, forced, ids) if translation.searched else []
    inputs = [START] + [s.piece for s in steps[:-1]]
    encoder_states = forced.encoded.states[0]  # (src_len, hidden); (1, hidden) for "none"
    if not translation.src_tokens:  # written back as given ("🍕🍔"): the model read nothing
        encoder_states = encoder_states[:0]  # (0, hidden)
    if not translation.searched:  # copied ("1999") or written back: the model wrote nothing
        model_text = ""
    elif searched := translation.model_tokens:  # a rule changed the model's pieces: their text
        written = dataclasses.replace(translation, text=translator.subwords.text(searched[:-1]))
        model_text = Pipeline(setting=translator.setting, names=SPELLING).rewrite(written).text
    else:
        model_text = translation.text
    return Walk(
        attention=translator.config.model.attention,
        source=translation.source,
        translation=translation.text,
        model_text=model_text,
        changes=translator.pipeline().said(translation.changed_by),  # recorded, not guessed
        source_pieces=translation.src_tokens,
        encoder_states=[pool(row) for row in encoder_states],
        init=pool(forced.encoded.init.h[-1, 0]),  # the top layer's first state, (hidden,)
        sizes={"state": encoder_states.size(-1), "embedding": translator.config.model.embed},
        steps=[
            WalkStep(
                step=step,
                input=inputs[t],
                state=pool(forced.h[t]),
                context=pool(forced.context[t]),
                attentional=pool(forced.attentional[t]),
            )
            for t, step in enumerate(steps)
        ],
    )


def _step_dict(s: WalkStep) -> dict[str, Any]:
    """One step for JSON: the numbers inspect shows, then the pooled vectors."""
    return {
        "input": s.input,
        "state": _rounded(s.state),
        "scores": _rounded(s.step.scores, 6),
        "weights": _rounded(s.step.weights, 6),
        "context": _rounded(s.context),
        "attentional": _rounded(s.attentional),
        "candidates": [[piece, round(p, 6)] for piece, p in s.step.candidates],
        "chosen": s.step.piece,
        "log_prob": round(s.step.log_prob, 6),
    }


def _rounded(values: list[float], digits: int = 4) -> list[float]:
    """Values rounded for JSON (4 digits: more than a colour shows)."""
    return [round(v, digits) for v in values]
