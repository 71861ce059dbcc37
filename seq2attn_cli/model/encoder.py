"""The encoder: source pieces -> embeddings -> bidirectional RNN, keeping every state."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from ..config import PAD
from .dropout import Dropout
from .packed import packed_rnn

RNNS = {"gru": nn.GRU, "lstm": nn.LSTM}


class Encoder(nn.Module):
    """Reads a source sentence and returns one state per piece plus a summary of it all."""

    def __init__(
        self, *, vocab: int, embed: int, hidden: int, layers: int, cell: str, dropout: float
    ) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab, embed, padding_idx=PAD)
        self.dropout = Dropout(dropout)
        self.rnn = RNNS[cell](
            embed,
            hidden // 2,  # two directions, concatenated back to `hidden`
            num_layers=layers,
            batch_first=True,
            bidirectional=True,
            dropout=dropout if layers > 1 else 0.0,
        )

    def forward(
        self, src: torch.Tensor, src_lengths: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Return (encoder_states, final): every state, and the last states of both directions."""
        embedded = self.dropout(self.embedding(src))  # (batch, src_len, embed)
        packed = pack_padded_sequence(
            embedded, src_lengths.cpu(), batch_first=True, enforce_sorted=False
        )
        # training on CPU: torch's packed RNN backward costs the square of the length (packed.py)
        train_cpu = torch.is_grad_enabled() and embedded.device.type == "cpu"
        fp32 = type(self.rnn) in RNNS.values() and self.rnn.weight_hh_l0.dtype == torch.float32
        loop = train_cpu and fp32  # the loop computes in fp32 (and bf16 matmuls under autocast)
        packed_states, final = packed_rnn(self.rnn, packed) if loop else self.rnn(packed)
        encoder_states, _ = pad_packed_sequence(
            packed_states, batch_first=True, total_length=src.size(1)
        )  # (batch, src_len, hidden)
        if isinstance(final, tuple):  # LSTM: (h, c); the summary uses h
            final = final[0]
        layers = final.size(0) // 2
        final = final.view(layers, 2, src.size(0), -1)  # (layers, 2, batch, hidden // 2)
        final = torch.cat([final[:, 0], final[:, 1]], dim=-1)  # (layers, batch, hidden)
        return encoder_states, final
