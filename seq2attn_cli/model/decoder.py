"""The decoder: previous target piece -> RNN state h_t -> attention -> [h_t; c_t] -> vocabulary.

By default attention comes *after* the RNN step and nothing from it is fed back into the
RNN, so with teacher forcing the RNN runs over the whole target in one call and attention
for all steps is one batched matmul: no Python loop over time in training.

With input feeding (Luong et al. 2015, `--input-feed`) step t's RNN also reads step t-1's
attentional vector tanh(W [h; c]), so the RNN knows what the last step attended to. Each
step then needs the one before: attention runs inside the loop over time. Teacher forcing
runs recurrence.py's loop (one autograd node with a hand-written backward); decoding runs
`rnn_step`, one step at a time, on the same weights.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import nn

from ..config import PAD
from .attention import Attention
from .cells import RNNState, cell_of
from .dropout import Dropout
from .encoder import RNNS
from .recurrence import fed_recurrence


class DecoderState(NamedTuple):
    """The decoder's state between steps; each tensor (layers or 1, rows, hidden), so beams
    select all tensors alike (seq2seq.select_state)."""

    h: torch.Tensor  # the RNN's hidden state, (layers, rows, hidden)
    c: torch.Tensor | None = None  # the LSTM's cell state; None for a GRU
    # with input feeding: the last step's attentional vector, (1, rows, hidden); else None
    feed: torch.Tensor | None = None

    @classmethod
    def of(cls, rnn: RNNState, feed: torch.Tensor | None = None) -> DecoderState:
        """The state from what nn.GRU / nn.LSTM return, and the attentional vector fed."""
        return cls(*rnn, feed=feed) if isinstance(rnn, tuple) else cls(rnn, feed=feed)

    def rnn(self) -> RNNState:
        """What nn.GRU / nn.LSTM read: h, or (h, c)."""
        return self.h if self.c is None else (self.h, self.c)


class Decoder(nn.Module):
    """Turns target prefixes and encoder states into next-piece logits and attention weights."""

    def __init__(
        self,
        *,
        vocab: int,
        embed: int,
        hidden: int,
        layers: int,
        cell: str,
        attention: str,
        dropout: float,
        input_feed: bool,
    ) -> None:
        super().__init__()
        self.input_feed = input_feed
        self.embedding = nn.Embedding(vocab, embed, padding_idx=PAD)
        self.dropout = Dropout(dropout)
        self.rnn = RNNS[cell](
            embed + (hidden if input_feed else 0),
            hidden,
            num_layers=layers,
            batch_first=True,
            dropout=dropout if layers > 1 else 0.0,
        )
        self.attention = Attention(kind=attention, hidden=hidden)
        self.combine = nn.Linear(2 * hidden, hidden)  # the feed-forward layer over [h_t; c_t]
        self.out = nn.Linear(hidden, vocab)

    def forward(
        self,
        tgt_in: torch.Tensor,
        state: DecoderState,
        encoder_states: torch.Tensor,
        mask: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor, DecoderState]:
        """Run every target step (teacher forcing); return (logits, weights, last state)."""
        _, attentional, weights, state = self.run(tgt_in, state, encoder_states, mask)
        return self.out(self.dropout(attentional)), weights, state  # (batch, tgt_len, vocab)

    def run(
        self,
        tgt_in: torch.Tensor,
        state: DecoderState,
        encoder_states: torch.Tensor,
        mask: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, DecoderState]:
        """Every target step: (RNN states h, attentional vectors, weights, last state)."""
        embedded = self.dropout(self.embedding(tgt_in))  # (batch, tgt_len, embed)
        if not self.input_feed:  # all steps in one RNN call and one attention matmul
            h, rnn = self.rnn(embedded, state.rnn())  # (batch, tgt_len, hidden)
            state = DecoderState.of(rnn)
            attentional, weights = self.attend(h, encoder_states, mask)
            return h, attentional, weights, state
        loop = isinstance(self.rnn, nn.RNNBase)  # float weights (int8.py has its own)
        if loop and self.rnn.num_layers == 1 and self.attention.kind != "additive":
            return self._run_fed(embedded, state, encoder_states, mask)
        # int8, several layers or additive attention: step by step, as decoding runs
        return self._run_steps(embedded, state, encoder_states, mask)

    def _run_fed(
        self,
        embedded: torch.Tensor,
        state: DecoderState,
        encoder_states: torch.Tensor,
        mask: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, DecoderState]:
        """Every target step with input feeding, in recurrence.py's loop (one layer)."""
        rnn_state = [s for s in (state.h, state.c) if s is not None]  # each (1, batch, hidden)
        w_ih = self.rnn.weight_ih_l0[:, : embedded.size(-1)]  # the embeddings' columns
        gi = nn.functional.linear(embedded, w_ih, self.rnn.bias_ih_l0).transpose(0, 1)
        # gi: (tgt_len, batch, gates * hidden)
        steps, attentional, weights = fed_recurrence(
            cell_of(self.rnn), gi,
            tuple(s[0] for s in rnn_state), state.feed[0], keys=encoder_states, mask=mask,
            score_keys=self.attention.score_keys(encoder_states), rnn=self.rnn,
            combine=self.combine,
        )  # fmt: skip
        state = DecoderState(*(s[-1:] for s in steps), feed=attentional[-1:])  # each (1, batch, H)
        # (batch, tgt_len, hidden), (batch, tgt_len, hidden), (batch, tgt_len, src_len)
        h, attentional, weights = (x.transpose(0, 1) for x in (steps[0], attentional, weights))
        return h, attentional, weights, state

    def _run_steps(
        self,
        embedded: torch.Tensor,
        state: DecoderState,
        encoder_states: torch.Tensor,
        mask: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, DecoderState]:
        """Every target step, one `rnn_step` at a time: what decoding does, step by step."""
        steps = []
        for t in range(embedded.size(1)):
            *outputs, state = self.rnn_step(embedded[:, t : t + 1], state, encoder_states, mask)
            steps.append(outputs)
        # (batch, tgt_len, hidden), (batch, tgt_len, hidden), (batch, tgt_len, src_len)
        h, attentional, weights = (torch.cat(column, dim=1) for column in zip(*steps, strict=True))
        return h, attentional, weights, state

    def step(
        self,
        prev: torch.Tensor,
        state: DecoderState,
        encoder_states: torch.Tensor,
        mask: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor, DecoderState]:
        """One decoding step for rows of previous pieces: (logits, weights, new state)."""
        embedded = self.dropout(self.embedding(prev))[:, None]  # (rows, 1, embed)
        _, attentional, weights, state = self.rnn_step(embedded, state, encoder_states, mask)
        logits = self.out(self.dropout(attentional))  # (rows, 1, vocab)
        return logits[:, 0], weights[:, 0], state  # (rows, vocab), (rows, src_len)

    def rnn_step(
        self,
        embedded: torch.Tensor,
        state: DecoderState,
        encoder_states: torch.Tensor,
        mask: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, DecoderState]:
        """One RNN step and its attention: (h, attentional, weights, new state), each (rows, 1, .).

        The rows may be k beams per sentence (sentence-major) over one encoder row each:
        the k beams then attend like k query steps, sharing their sentence's states
        instead of k copies of them.
        """
        if self.input_feed:  # feed: (1, rows, hidden)
            embedded = torch.cat([embedded, state.feed.transpose(0, 1)], dim=-1)  # (rows, 1, E+H)
        h, rnn = self.rnn(embedded, state.rnn())  # (rows, 1, hidden)
        sentences = encoder_states.size(0)
        queries = h.view(sentences, -1, h.size(-1))  # (sentences, beams, hidden)
        attentional, weights = self.attend(queries, encoder_states, mask)
        attentional = attentional.reshape(h.shape)  # (rows, 1, hidden)
        weights = weights.reshape(h.size(0), 1, -1)  # (rows, 1, src_len)
        feed = attentional.transpose(0, 1) if self.input_feed else None  # fed before dropout
        return h, attentional, weights, DecoderState.of(rnn, feed=feed)

    def attend(
        self, h: torch.Tensor, encoder_states: torch.Tensor, mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Attention and the feed-forward layer over decoder states h: (attentional, weights)."""
        context, weights = self.attention(h, encoder_states, mask)  # (batch, tgt_len, hidden)
        attentional = torch.tanh(self.combine(torch.cat([h, context], dim=-1)))
        return attentional, weights  # (batch, tgt_len, hidden), (batch, tgt_len, src_len)
