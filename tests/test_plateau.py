"""What counts as progress at a validation: a better BLEU; while BLEU is noise (below 10), a
loss 0.1% lower too (training/plateau.py)."""

from __future__ import annotations

from seq2attn_cli.training.plateau import progress
from seq2attn_cli.training.run import RunState


def test_a_better_bleu_is_progress_and_past_the_floor_only_that():
    assert progress(20.1, 3.0, 20.0, 2.0)  # a better BLEU, whatever the loss
    assert not progress(20.0, 1.0, 20.0, 2.0)  # past the floor a lower loss is no progress
    assert progress(0.0, 2.99, 0.0, 3.0)  # BLEU noise: a loss 0.3% lower is
    assert not progress(0.0, 2.999, 0.0, 3.0)  # but not 0.03% (a plateau's drift)
    assert not progress(0.5, float("nan"), 0.5, 3.0)  # a loss that is not a number is none
    assert progress(12.0, 9.0, None, None)  # the first validation always is


def test_a_chance_bleu_under_10_does_not_stop_a_model_whose_loss_falls():
    # a user's try-out: epoch 4 scored BLEU 1.56 (chrF 1.37) on 20 pairs, then 0.00 with the
    # loss falling 3.927 -> 3.863 -> 3.827: that run stopped at step 24
    assert progress(0.0, 3.863, 1.56, 3.927)
    assert not progress(9.0, 3.0, 9.5, 3.0)  # and a BLEU under 10 with no lower loss is none


def test_an_older_resume_checkpoint_keeps_its_patience():
    counters = {
        "best_bleu": 0.0,
        "bad_epochs": 3,
        "epochs": [{"valid_loss": 3.1}, {"valid_loss": 3.0}],
    }
    state = RunState.of(counters)  # it stored no loss: its lowest is read from its epochs
    assert (state.best_loss, state.saved_loss, state.bad_epochs) == (3.0, 3.0, 3)
    assert not progress(0.0, 3.0, state.best_bleu, state.best_loss)  # no free reset
