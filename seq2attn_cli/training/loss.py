"""The training loss: label-smoothed cross-entropy with a hand-written backward."""

from __future__ import annotations

import torch

from ..config import PAD

# Rows of logits turned to fp32 at a time. A whole batch's fp32 logits (1,536 x 6,736: 41 MB)
# is a fresh mmap on every step, and its page faults made each pass over it 3-5x slower than
# over a reused buffer: the loss took 64 ms of a 460 ms step, chunked 20 (AVX-512 BF16 host).
CHUNK = 256


class _SmoothedCrossEntropy(torch.autograd.Function):
    """Summed label-smoothed cross-entropy whose backward is softmax minus smoothed target.

    Only the log-normaliser of each row is kept; the backward recomputes the softmax a chunk
    of rows at a time, writing the gradient straight into the logits' dtype.
    """

    @staticmethod
    def forward(ctx, logits: torch.Tensor, target: torch.Tensor, smoothing: float) -> torch.Tensor:
        lse = torch.empty(logits.size(0), device=logits.device)  # (tokens,) log normalisers
        loss = logits.new_zeros((), dtype=torch.float32)
        real = target != PAD  # (tokens,)
        for start in range(0, logits.size(0), CHUNK):
            rows = slice(start, start + CHUNK)
            x = logits[rows].float()  # (chunk, vocab)
            lse[rows] = torch.logsumexp(x, dim=-1)
            nll = lse[rows] - x.gather(1, target[rows, None]).squeeze(1)  # -log p(target)
            uniform = lse[rows] - x.mean(dim=-1)  # -mean over the vocabulary of log p
            loss += (((1 - smoothing) * nll + smoothing * uniform) * real[rows]).sum()
        ctx.save_for_backward(logits, target, lse)
        ctx.smoothing = smoothing
        return loss

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> tuple[torch.Tensor, None, None]:
        logits, target, lse = ctx.saved_tensors
        eps, vocab = ctx.smoothing, logits.size(-1)
        out = torch.empty_like(logits)
        scale = ((target != PAD) * grad).float()[:, None]  # (tokens, 1)
        for start in range(0, logits.size(0), CHUNK):
            rows = slice(start, start + CHUNK)
            g = (logits[rows].float() - lse[rows, None]).exp_()  # the softmax (chunk, vocab)
            g.sub_(eps / vocab)  # minus the smoothed target: eps / vocab everywhere ...
            at = torch.arange(g.size(0), device=g.device)
            g[at, target[rows]] -= 1.0 - eps  # ... and 1 - eps more on the target
            out[rows] = g.mul_(scale[rows])
        return out, None, None


def label_smoothed_loss(
    logits: torch.Tensor, target: torch.Tensor, smoothing: float
) -> torch.Tensor:
    """Summed label-smoothed cross-entropy over the non-pad targets."""
    vocab = logits.size(-1)
    return _SmoothedCrossEntropy.apply(logits.reshape(-1, vocab), target.reshape(-1), smoothing)
