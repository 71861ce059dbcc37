"""What counts as progress at a validation: the rule behind keeping the best model, halving
the learning rate (--lr-patience) and stopping early (--patience).

A better validation BLEU is progress. While BLEU is noise (below BLEU_FLOOR: the model writes
little a reference shares yet), a validation loss LOSS_GAIN lower is progress too: a small
model on a small corpus scores BLEU 0 for its first epochs while its loss falls, and was
stopped there (a user's try-out: step 25, "best validation BLEU 0.00", loss 3.44 -> 3.02;
left to run, BLEU 36.7), its lr halved at each epoch on the way. The floor was 1 until a
chance 1.56 on 20 held-out pairs (chrF 1.37, the run's worst) stopped another at step 24 while
its loss fell 1% an epoch; under 10 BLEU a translation is "almost useless" (Google Cloud's
reading of BLEU), so a score there is no measure of progress. Past the floor BLEU alone
decides: replayed on the long run's nine epochs, a loss 0.1% lower would have counted at
every one of them, and the lr would never have halved.
"""

from __future__ import annotations

import math

BLEU_FLOOR = 10.0
# a loss lower by less than this share of the lowest is no gain (torch's ReduceLROnPlateau
# reads a plateau so, there with 1e-4)
LOSS_GAIN = 1e-3


def progress(bleu: float, loss: float, best_bleu: float | None, best_loss: float | None) -> bool:
    """Whether a validation's BLEU and loss beat the best so far (None: none yet)."""
    if best_bleu is None or bleu > best_bleu:
        return True
    if max(bleu, best_bleu) >= BLEU_FLOOR or not math.isfinite(loss):
        return False
    return best_loss is None or loss < best_loss * (1 - LOSS_GAIN)


def lowest(loss: float, best_loss: float | None) -> float | None:
    """The lowest finite validation loss so far."""
    if not math.isfinite(loss):
        return best_loss
    return loss if best_loss is None else min(loss, best_loss)
