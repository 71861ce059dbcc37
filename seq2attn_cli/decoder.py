"""The decoder: previous target piece -> RNN state h_t -> attention -> [h_t; c_t] -> vocabulary.

Attention comes *after* the RNN step and nothing from it is fed back into the RNN, so
with teacher forcing the RNN runs over the whole target in one call and attention for
all steps is one batched matmul: no Python loop over time in training.
"""

from __future__ import annotations

import torch
from torch import nn

from .attention import Attention
from .config import PAD
from .dropout import Dropout
from .encoder import RNNS

State = torch.Tensor | tuple[torch.Tensor, torch.Tensor]  # GRU: h; LSTM: (h, c)


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
    ) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab, embed, padding_idx=PAD)
        self.dropout = Dropout(dropout)
        self.rnn = RNNS[cell](
            embed,
            hidden,
            num_layers=layers,
            batch_first=True,
            dropout=dropout if layers > 1 else 0.0,
        )
        self.attention = Attention(kind=attention, hidden=hidden)
        self.combine = nn.Linear(2 * hidden, hidden)  # the feed-forward layer over [h_t; c_t]
        self.out = nn.Linear(hidden, vocab)

    def forward(
        self, tgt_in: torch.Tensor, state: State, encoder_states: torch.Tensor, mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, State]:
        """Run every target step at once; return (logits, weights, last state)."""
        embedded = self.dropout(self.embedding(tgt_in))  # (batch, tgt_len, embed)
        h, state = self.rnn(embedded, state)  # (batch, tgt_len, hidden)
        logits, weights = self.predict(h, encoder_states, mask)
        return logits, weights, state

    def step(
        self, prev: torch.Tensor, state: State, encoder_states: torch.Tensor, mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, State]:
        """One decoding step for rows of previous pieces: (logits, weights, new state).

        The rows may be k beams per sentence (sentence-major) over one encoder row each:
        the k beams then attend like k query steps, sharing their sentence's states
        instead of k copies of them.
        """
        embedded = self.dropout(self.embedding(prev))[:, None]  # (rows, 1, embed)
        h, state = self.rnn(embedded, state)  # (rows, 1, hidden)
        sentences = encoder_states.size(0)
        h = h.view(sentences, -1, h.size(-1))  # (sentences, beams, hidden)
        logits, weights = self.predict(h, encoder_states, mask)
        return logits.flatten(0, 1), weights.flatten(0, 1), state  # (rows, vocab), (rows, src)

    def predict(
        self, h: torch.Tensor, encoder_states: torch.Tensor, mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Attention and output layer over decoder states h: (logits, weights)."""
        context, weights = self.attention(h, encoder_states, mask)  # (batch, tgt_len, hidden)
        attentional = torch.tanh(self.combine(torch.cat([h, context], dim=-1)))
        logits = self.out(self.dropout(attentional))  # (batch, tgt_len, vocab)
        return logits, weights  # weights: (batch, tgt_len, src_len)
