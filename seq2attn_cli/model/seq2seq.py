"""Wires encoder, bridge and decoder into one model: the whole of s2a's neural network."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from ..config import BOS, PAD, ModelConfig
from .decoder import Decoder, DecoderState
from .encoder import Encoder


class Encoded(NamedTuple):
    """What the decoder needs from the source, for every decoding step."""

    states: torch.Tensor  # (batch, src_len, hidden); (batch, 1, hidden) for attention "none"
    mask: torch.Tensor  # (batch, src_len) True on real pieces
    init: DecoderState  # the decoder's first state, bridged from the encoder's final states


class Seq2Seq(nn.Module):
    """Bidirectional RNN encoder + attentional RNN decoder."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.config = config
        c = config
        self.encoder = Encoder(
            vocab=c.src_vocab,
            embed=c.embed,
            hidden=c.hidden,
            layers=c.layers,
            cell=c.cell,
            dropout=c.dropout,
        )
        self.bridge = nn.Linear(c.hidden, c.hidden)  # encoder summary -> decoder's first state
        self.decoder = Decoder(
            vocab=c.tgt_vocab,
            embed=c.embed,
            hidden=c.hidden,
            layers=c.layers,
            cell=c.cell,
            attention="dot" if c.attention == "none" else c.attention,
            dropout=c.dropout,
            input_feed=c.input_feed,
        )
        # output index -> SentencePiece id; the output layer covers target-side pieces only
        # (model files name it tgt_pieces: checkpoint.STORED_NAMES)
        self.register_buffer("output_ids", torch.arange(c.tgt_vocab), persistent=True)

    def encode(self, src: torch.Tensor, src_lengths: torch.Tensor) -> Encoded:
        """Encode a padded source batch."""
        states, final = self.encoder(src, src_lengths)  # (batch, src_len, hidden)
        h0 = torch.tanh(self.bridge(final))  # (layers, batch, hidden)
        init = DecoderState(
            h=h0,
            c=torch.zeros_like(h0) if self.config.cell == "lstm" else None,
            # input feeding: nothing attended before the first step, (1, batch, hidden)
            feed=torch.zeros_like(h0[-1:]) if self.config.input_feed else None,
        )
        if not self.config.attends:
            # the classic bottleneck: the decoder sees one vector, the top layer's summary;
            # attending over a single state gives it weight 1 at every step
            states = final[-1].unsqueeze(1)  # (batch, 1, hidden)
            mask = torch.ones(src.size(0), 1, dtype=torch.bool, device=src.device)
        else:
            mask = (
                torch.arange(src.size(1), device=src.device) < src_lengths.to(src.device)[:, None]
            )
        return Encoded(states=states, mask=mask, init=init)

    def forward(
        self, src: torch.Tensor, src_lengths: torch.Tensor, tgt_in: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Teacher-forced logits (batch, tgt_len, vocab) and weights (batch, tgt_len, src_len)."""
        encoded = self.encode(src, src_lengths)
        logits, weights, _ = self.decoder(tgt_in, encoded.init, encoded.states, encoded.mask)
        return logits, weights

    def step(
        self, prev: torch.Tensor, state: DecoderState, encoded: Encoded
    ) -> tuple[torch.Tensor, torch.Tensor, DecoderState]:
        """Log-probabilities of the next piece for each row, its attention, and the new state.

        Rows are k beams per encoded sentence when there are k times more of them.
        """
        logits, weights, state = self.decoder.step(prev, state, encoded.states, encoded.mask)
        return output_log_probs(logits), weights, state


def output_log_probs(logits: torch.Tensor) -> torch.Tensor:
    """Log-softmax over the output vocabulary; PAD and BOS can never be produced."""
    logits = logits.float()
    logits[..., PAD] = float("-inf")
    logits[..., BOS] = float("-inf")
    return torch.log_softmax(logits, dim=-1)


def select_state(state: DecoderState, index: torch.Tensor) -> DecoderState:
    """Keep (and reorder) the batch rows `index` of a decoder state."""
    return DecoderState(*(None if s is None else s.index_select(1, index) for s in state))


def select_encoded(encoded: Encoded, index: torch.Tensor) -> Encoded:
    """Keep (and reorder) the batch rows `index` of an encoded source."""
    return Encoded(
        states=encoded.states.index_select(0, index),  # (len(index), src_len, hidden)
        mask=encoded.mask.index_select(0, index),  # (len(index), src_len)
        init=select_state(encoded.init, index),
    )


class _Uninitialised(TorchFunctionMode):
    """Modules built for their shapes: torch.nn.init's functions leave their tensor as it is,
    and torch.arange of integers gives an empty tensor of its length.

    On the meta device nn.init.normal_ (nn.Embedding's) imports torch._dynamo: 2.1 s under
    load, as long as importing torch itself, on every model load; torch.arange (the output
    ids) imports sympy: 0.48 s of a one-sentence translate's 2.5 s (-X importtime)."""

    def __torch_function__(
        self, func: Callable, types: tuple, args: tuple = (), kwargs: dict | None = None
    ) -> Any:
        kwargs = kwargs or {}
        if getattr(func, "__module__", None) == "torch.nn.init":
            return args[0] if args else kwargs["tensor"]
        if func is torch.arange and all(type(a) is int for a in args):
            return torch.empty(len(range(*args)), dtype=kwargs.get("dtype", torch.long))
        return func(*args, **kwargs)


def unset(c: ModelConfig) -> Seq2Seq:
    """A model of config c's shapes whose numbers are left unset, for weights to be loaded
    into: no random initialisation to throw away (0.15 s of loading the shipped model)."""
    with _Uninitialised():
        return Seq2Seq(c)


def state_size(c: ModelConfig) -> int:
    """Numbers in a model's state (parameters and buffers), counted on the model built on
    torch's meta device: shapes without memory, so a stranger's config allocates nothing."""
    with torch.device("meta"):
        return sum(t.numel() for t in unset(c).state_dict().values())
