"""The fast CPU dropout: same expectation as torch's, and no effect outside training."""

from __future__ import annotations

import torch

from seq2attn_cli.model.dropout import Dropout


def test_dropout_drops_about_p_and_keeps_the_mean():
    torch.manual_seed(0)
    x = torch.ones(400, 500)
    y = Dropout(0.2).train()(x)
    dropped = (y == 0).float().mean().item()
    assert abs(dropped - 51 / 256) < 0.005  # p rounded to 51/256
    assert abs(y.mean().item() - 1.0) < 0.01  # inverted dropout keeps the expectation
    assert torch.allclose(torch.unique(y), torch.tensor([0.0, 256 / 205]))  # kept: scaled


def test_dropout_is_the_identity_in_eval_and_at_zero():
    x = torch.randn(3, 7)
    assert torch.equal(Dropout(0.5).eval()(x), x)
    assert torch.equal(Dropout(0.0).train()(x), x)


def test_dropout_gradient_flows_only_through_kept_elements():
    torch.manual_seed(1)
    x = torch.randn(64, 33, requires_grad=True)  # numel not a multiple of 8
    y = Dropout(0.3).train()(x)
    y.sum().backward()
    kept = y.detach() != 0
    assert torch.allclose(x.grad[kept], torch.full_like(x.grad[kept], 256 / (256 - 77)))
    assert (x.grad[~kept] == 0).all()


def test_dropout_masks_differ_between_calls_but_follow_the_seed():
    x = torch.ones(1000)
    torch.manual_seed(3)
    a, b = Dropout(0.5).train()(x), Dropout(0.5).train()(x)
    torch.manual_seed(3)
    assert not torch.equal(a, b) and torch.equal(Dropout(0.5).train()(x), a)
