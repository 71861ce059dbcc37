"""The input-feeding decoder's teacher-forced loop, with a hand-written backward.

With input feeding each step needs the one before, so training loops over time in Python.
Under autograd that loop records ~35 small ops a step, casts every weight to bf16 again at
every step, and adds each step's weight gradient into `.grad` on its own. Here the whole
loop is one autograd node:
- the input-side matmul of every step is one matmul before the loop (`gi`, by the caller);
- weights are cast to the compute dtype once per call, not once per step;
- the backward runs the steps in reverse for the gradients of states only; the local
  derivatives of all steps come first, in a few large ops (cells.py), and every weight
  gradient is one matmul over all steps after the loop.
The decoder without input feeding keeps torch's nn.GRU/nn.LSTM over the whole sequence: the
same kind of loop was no faster there (AVX-512 BF16 host, in-process A/B: 0.66-1.2x on
Tatoeba-sized batches). The encoder's loop over packed sequences is packed.py.
The cell math runs in fp32; only the matmul operands are in the compute dtype (bf16 under
autocast), as autocast would have them. What each trick bought is in bench/README.md.
"""

from __future__ import annotations

from typing import Any

import torch

from .cells import CELLS, Tensors, stack_saved


def compute_dtype(like: torch.Tensor) -> torch.dtype:
    """The matmul dtype autocast would pick here, else the weights' own."""
    kind = like.device.type
    return torch.get_autocast_dtype(kind) if torch.is_autocast_enabled(kind) else like.dtype


def _mm(x: torch.Tensor, w_t: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """x W^T + bias with W^T and bias in the compute dtype; the result in fp32."""
    return torch.addmm(bias, x.to(w_t.dtype), w_t).float()


def _back(grad: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """grad W: the input gradient of x W^T, in fp32 (W in the compute dtype)."""
    return (grad.to(w.dtype) @ w).float()


def _weight_grad(grads: torch.Tensor, inputs: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The sum over steps and rows of grad^T input, as one matmul: (out, in)."""
    g = grads.reshape(-1, grads.size(-1)).to(dtype)  # (steps * rows, out)
    x = inputs.reshape(-1, inputs.size(-1)).to(dtype)  # (steps * rows, in)
    return (g.t() @ x).float()


class Attend:
    """Scaled dot-product attention of one query row per sentence, forward and backward.

    `general` attention arrives as keys projected once per batch (W^T k instead of W h_t at
    every step), the 1/sqrt(d) scale folded in. The products run in fp32 with the keys laid
    out for row-vector-times-matrix products: for these batched matrix-vector products that
    took 44 us where bf16 took 91-130 and fp32 in the other layout 492 (48 x 32 x 512).
    """

    def __init__(self, *, score_keys: torch.Tensor, keys: torch.Tensor, mask: torch.Tensor):
        scale = keys.size(-1) ** -0.5
        self.score_keys = score_keys.float() * scale  # (rows, src_len, hidden)
        self.score_keys_t = self.score_keys.transpose(1, 2).contiguous()  # (rows, H, src_len)
        self.keys = keys.float()  # (rows, src_len, hidden)
        self.keys_t = self.keys.transpose(1, 2).contiguous()  # (rows, hidden, src_len)
        pad = torch.zeros(mask.shape, device=keys.device).masked_fill_(~mask, float("-inf"))
        self.pad = pad[:, None]  # (rows, 1, src_len): -inf on padding

    def forward(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(weights, context) for decoder states h: (rows, hidden)."""
        scores = torch.baddbmm(self.pad, h[:, None], self.score_keys_t)  # (rows, 1, src_len)
        weights = torch.softmax(scores, dim=-1)  # (rows, 1, src_len)
        context = torch.bmm(weights, self.keys)  # (rows, 1, hidden)
        return weights[:, 0], context[:, 0]

    def backward(
        self, d_context: torch.Tensor, d_weights: torch.Tensor | None, weights: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(d h, d scores); d scores is kept for the keys' gradient, one bmm after the loop."""
        dw = torch.bmm(d_context[:, None], self.keys_t)[:, 0]  # (rows, src_len)
        if d_weights is not None:
            dw = dw + d_weights
        d_scores = weights * (dw - (weights * dw).sum(-1, keepdim=True))  # (rows, src_len)
        dh = torch.bmm(d_scores[:, None], self.score_keys)[:, 0]  # (rows, hidden)
        return dh, d_scores


class _FedRecurrence(torch.autograd.Function):
    """The input-feeding decoder over time: cell, attention, attentional vector fed back."""

    @staticmethod
    def forward(ctx, cell: str, gi, score_keys, keys, mask, feed, w_if, w_hh, b_hh, w_c, b_c,
                *state):  # fmt: skip
        # gi: (steps, rows, gates * hidden), the embeddings' part; keys: (rows, src_len, hidden)
        Cell, dt = CELLS[cell], compute_dtype(w_hh)
        ctx.set_materialize_grads(False)
        ctx.dtypes = (gi.dtype, keys.dtype, w_hh.dtype)  # what each gradient is returned in
        with torch.autocast(gi.device.type, enabled=False):
            w = {k: v.detach().to(dt) for k, v in
                 {"if": w_if, "hh": w_hh, "c": w_c, "b_hh": b_hh, "b_c": b_c}.items()}  # fmt: skip
            attend = Attend(score_keys=score_keys.detach(), keys=keys.detach(), mask=mask)
            gi, state, feed = gi.to(dt), tuple(s.float() for s in state), feed.float()
            h0, feed0, states, saved, steps = state[0], feed, [], [], []
            for t in range(gi.size(0)):
                gi_t = torch.addmm(gi[t], feed.to(dt), w["if"].t()).float()  # (rows, G H)
                state, cell_saved = Cell.forward(gi_t, _mm(state[0], w["hh"].t(), w["b_hh"]), state)
                weights, context = attend.forward(state[0])
                hc = torch.cat([state[0], context], dim=1)  # (rows, 2 hidden) [h_t; c_t]
                feed = torch.tanh(_mm(hc, w["c"].t(), w["b_c"]))  # (rows, hidden) attentional
                states.append(state), saved.append(cell_saved), steps.append((weights, hc, feed))
            stacked = stack_saved(states)  # per tensor of the state (h, c): (steps, rows, H)
            weights, hc, attentional = stack_saved(steps)  # (steps, rows, src_len / 2H / H)
            ctx.factors = Cell.factors(stack_saved(saved))
        ctx.cell, ctx.w, ctx.attend = Cell, w, attend
        h_prev = torch.cat([h0[None], stacked[0][:-1]])  # (steps, rows, hidden) the h each read
        feed_prev = torch.cat([feed0[None], attentional[:-1]])  # the attentional vector each read
        ctx.save_for_backward(h_prev, feed_prev, hc, weights, attentional)
        return (*stacked, attentional, weights)

    @staticmethod
    def backward(ctx, *grads_out):
        *d_states, d_attentional, d_weights = grads_out
        Cell, w, attend, f = ctx.cell, ctx.w, ctx.attend, ctx.factors
        h_prev, feed_prev, hc, weights, attentional = ctx.saved_tensors
        steps, rows, hidden = attentional.shape
        zeros = attentional.new_zeros(rows, hidden)
        dstate = tuple(zeros for _ in d_states)
        dfeed, tanh_grad = zeros, 1 - attentional * attentional  # (steps, rows, hidden)
        kept: dict[str, list[torch.Tensor]] = {k: [] for k in ("gi", "gh", "u", "s", "c")}
        for t in reversed(range(steps)):
            du = dfeed if d_attentional is None else dfeed + d_attentional[t].float()
            du = du * tanh_grad[t]  # (rows, hidden): d of tanh's input
            dhc = _back(du, w["c"])  # (rows, 2 hidden): d [h_t; c_t]
            dw_t = None if d_weights is None else d_weights[t].float()
            dh_att, d_scores = attend.backward(dhc[:, hidden:], dw_t, weights[t])
            dstate = _add_step(dstate, d_states, t)
            dh = dstate[0] + dhc[:, :hidden] + dh_att
            dgi, dgh, dprev = Cell.backward((dh, *dstate[1:]), tuple(x[t] for x in f))
            dstate = (dprev[0] + _back(dgh, w["hh"]), *dprev[1:])
            dfeed = _back(dgi, w["if"])
            for key, value in zip(kept, (dgi, dgh, du, d_scores, dhc[:, hidden:]), strict=True):
                kept[key].append(value)
        d = {key: torch.stack(values[::-1]) for key, values in kept.items()}  # (steps, rows, .)
        weight_grads = _fed_weight_grads(ctx, d, h_prev, feed_prev, hc)
        key_grads = _key_grads(ctx, d, hc[..., :hidden], weights)
        ctx.factors = ctx.attend = None
        d_gi = d["gi"].to(ctx.dtypes[0])  # (steps, rows, gates * hidden)
        return (None, d_gi, *key_grads, None, dfeed, *weight_grads, *dstate)


def _add_step(dstate: Tensors, d_states: tuple, t: int) -> Tensors:
    """The gradients flowing into step t's state: from step t + 1, and from its own output."""
    return tuple(
        d if dp is None else d + dp[t].float() for d, dp in zip(dstate, d_states, strict=True)
    )


def _fed_weight_grads(
    ctx: Any, d: dict[str, torch.Tensor], h_prev: torch.Tensor, feed_prev: torch.Tensor,
    hc: torch.Tensor,
) -> list[torch.Tensor]:  # fmt: skip
    """d w_if, d w_hh, d b_hh, d w_c, d b_c: one matmul or sum each over all steps."""
    dt, dtype = ctx.w["hh"].dtype, ctx.dtypes[2]
    d_w_if = _weight_grad(d["gi"], feed_prev, dt)
    d_w_hh = _weight_grad(d["gh"], h_prev, dt)
    d_w_c = _weight_grad(d["u"], hc, dt)
    d_b_hh, d_b_c = d["gh"].sum((0, 1)), d["u"].sum((0, 1))
    return [g.to(dtype) for g in (d_w_if, d_w_hh, d_b_hh, d_w_c, d_b_c)]


def _key_grads(
    ctx: Any, d: dict[str, torch.Tensor], hs: torch.Tensor, weights: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """(d score_keys, d keys): sums over steps of d scores (x) h and weights (x) d context."""
    scale = ctx.attend.keys.size(-1) ** -0.5
    d_scores = d["s"].permute(1, 2, 0)  # (rows, src_len, steps)
    d_score_keys = torch.bmm(d_scores, hs.transpose(0, 1)) * scale  # (rows, src_len, hidden)
    # (rows, src_len, steps) @ (rows, steps, hidden)
    d_keys = torch.bmm(weights.permute(1, 2, 0), d["c"].transpose(0, 1))
    return d_score_keys.to(ctx.dtypes[1]), d_keys.to(ctx.dtypes[1])


def fed_recurrence(
    cell: str, gi: torch.Tensor, state: Tensors, feed: torch.Tensor, *, keys: torch.Tensor,
    score_keys: torch.Tensor, mask: torch.Tensor, rnn: Any, combine: Any,
) -> tuple[Tensors, torch.Tensor, torch.Tensor]:  # fmt: skip
    """Run the input-feeding decoder over time-major gi: (state tensors, attentional, weights).

    Every output is time-major, one row a step: the state tensors (h, and c for an LSTM) and the
    attentional vectors (steps, rows, hidden), the weights (steps, rows, src_len). `rnn` holds
    the cell's weights in nn.GRU/nn.LSTM's layout; gi is the embeddings' part of the input
    pre-activation (with b_ih), the fed part's weights being w_ih's last columns. Scores are
    h_t . score_keys (Attention.score_keys), contexts weighted sums of the keys.
    """
    w_if = rnn.weight_ih_l0[:, -feed.size(-1) :]  # (gates * hidden, hidden): the fed columns
    *states, attentional, weights = _FedRecurrence.apply(
        cell, gi, score_keys, keys, mask, feed, w_if, rnn.weight_hh_l0, rnn.bias_hh_l0,
        combine.weight, combine.bias, *state,
    )  # fmt: skip
    return tuple(states), attentional, weights
