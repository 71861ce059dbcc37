"""The GRU and LSTM cells as plain math on pre-activations, forward and backward.

The input-feeding loop in recurrence.py calls these once a step. Inputs are the two pre-activations
torch's nn.GRU/nn.LSTM compute, `gi = x W_ih^T + b_ih` and `gh = h W_hh^T + b_hh`
(gates stacked in torch's order: r, z, n for the GRU; i, f, g, o for the LSTM), so the same
weights serve nn.GRU/nn.LSTM, these cells and int8 decoding alike.

The backward is split in two: `factors` turns what every step saved into the local
derivatives of all steps at once (a few large ops, after the forward loop), and `backward`
runs once a step with only the products that need the gradient flowing back in time.
Every step's elementwise ops cost ~10 us whatever their size: fewer ops a step is the gain.
"""

from __future__ import annotations

import torch

Tensors = tuple[torch.Tensor, ...]
RNNState = torch.Tensor | tuple[torch.Tensor, torch.Tensor]  # what nn.GRU / nn.LSTM take


class GRUCell:
    """h' = (1 - z) n + z h, n = tanh(gi_n + r gh_n) (torch's GRU)."""

    @staticmethod
    def forward(gi: torch.Tensor, gh: torch.Tensor, state: Tensors) -> tuple[Tensors, Tensors]:
        """(new state (h',), what `factors` needs)."""
        (h,) = state
        hidden = h.size(1)
        rz = torch.sigmoid(gi[:, : 2 * hidden] + gh[:, : 2 * hidden])  # (rows, 2 hidden)
        r, z = rz[:, :hidden], rz[:, hidden:]
        gh_n = gh[:, 2 * hidden :]
        n = torch.tanh(torch.addcmul(gi[:, 2 * hidden :], r, gh_n))
        return (torch.lerp(n, h, z),), (h, rz, n, gh_n)

    @staticmethod
    def factors(saved: Tensors) -> Tensors:
        """Local derivatives of every step from the stacked saved tensors, each (steps, rows, .)."""
        h, rz, n, gh_n = saved
        hidden = h.size(-1)
        r, z = rz[..., :hidden], rz[..., hidden:]
        to_n = (1 - z) * (1 - n * n)  # d pre_n / d h'
        to_z = (h - n) * z * (1 - z)  # d pre_z / d h'
        to_r = gh_n * r * (1 - r)  # d pre_r / d pre_n
        return to_n, to_z, to_r, r, z

    @staticmethod
    def backward(dstate: Tensors, f: Tensors) -> tuple[torch.Tensor, torch.Tensor, Tensors]:
        """(d gi, d gh, the part of d state that flows straight to the previous state)."""
        (dh,) = dstate
        to_n, to_z, to_r, r, z = f
        d_n, d_z = dh * to_n, dh * to_z
        d_r = d_n * to_r
        dgi = torch.cat([d_r, d_z, d_n], dim=1)  # (rows, 3 hidden)
        dgh = torch.cat([d_r, d_z, d_n * r], dim=1)  # (rows, 3 hidden)
        return dgi, dgh, (dh * z,)


class LSTMCell:
    """c' = f c + i g, h' = o tanh(c') (torch's LSTM)."""

    @staticmethod
    def forward(gi: torch.Tensor, gh: torch.Tensor, state: Tensors) -> tuple[Tensors, Tensors]:
        """(new state (h', c'), what `factors` needs)."""
        _, c = state
        hidden = c.size(1)
        pre = gi + gh  # (rows, 4 hidden)
        ifo = torch.sigmoid(pre)  # the g quarter is overwritten below
        g = torch.tanh(pre[:, 2 * hidden : 3 * hidden])
        i, f, o = ifo[:, :hidden], ifo[:, hidden : 2 * hidden], ifo[:, 3 * hidden :]
        c_new = torch.addcmul(f * c, i, g)
        tanh_c = torch.tanh(c_new)
        return (o * tanh_c, c_new), (c, ifo, g, tanh_c)

    @staticmethod
    def factors(saved: Tensors) -> Tensors:
        """Local derivatives of every step from the stacked saved tensors, each (steps, rows, .)."""
        c, ifo, g, tanh_c = saved
        hidden = c.size(-1)
        i, f, o = ifo[..., :hidden], ifo[..., hidden : 2 * hidden], ifo[..., 3 * hidden :]
        to_c = o * (1 - tanh_c * tanh_c)  # d c' / d h'
        # d pre_{i, f, g} / d c', side by side: (steps, rows, 3, hidden)
        to_ifg = torch.stack([g * i * (1 - i), c * f * (1 - f), i * (1 - g * g)], dim=-2)
        to_o = tanh_c * o * (1 - o)  # d pre_o / d h'
        return to_c, to_ifg, to_o, f

    @staticmethod
    def backward(dstate: Tensors, f: Tensors) -> tuple[torch.Tensor, torch.Tensor, Tensors]:
        """(d gi, d gh, the part of d state that flows straight to the previous state)."""
        dh, dc_next = dstate
        to_c, to_ifg, to_o, forget = f
        dc = torch.addcmul(dc_next, dh, to_c)  # (rows, hidden)
        d_ifg = (to_ifg * dc[:, None]).flatten(1)  # (rows, 3 hidden)
        dpre = torch.cat([d_ifg, dh * to_o], dim=1)  # (rows, 4 hidden)
        return dpre, dpre, (torch.zeros_like(dh), dc * forget)


CELLS = {"gru": GRUCell, "lstm": LSTMCell}


def cell_of(rnn: torch.nn.RNNBase) -> str:
    """The CELLS name of torch's module: "lstm" for nn.LSTM, else "gru"."""
    return "lstm" if isinstance(rnn, torch.nn.LSTM) else "gru"


def stack_saved(saved: list[Tensors]) -> Tensors:
    """Each step's saved tensors, stacked over time: one (steps, rows, .) tensor per kind."""
    return tuple(torch.stack(kind) for kind in zip(*saved, strict=True))
