"""int8 inference: close to float, and a sentence's output never depends on its batch."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from seq2attn_cli.checkpoint import EMBEDDED
from seq2attn_cli.decoding.translator import Translator
from seq2attn_cli.model.int8 import Int8Linear, Int8RNN

# varied French, short to long, as users type it (casing, punctuation, apostrophes)
SENTENCES = [
    "Je suis étudiant.",
    "il pleut",
    "Où est la gare ?",
    "La voiture rouge est devant la maison.",
    "Je ne sais pas ce que tu veux dire.",
    "Tom a dit qu'il viendrait demain matin, mais il n'est jamais venu.",
    "Nous avons mangé du pain et bu de l'eau.",
    "Peux-tu m'aider à porter ces boîtes jusqu'à la voiture ?",
    "C'est le plus beau jour de ma vie !",
    "Elle lit un livre dans le jardin pendant que les enfants jouent.",
    "Merci.",
    "Je voudrais réserver une table pour quatre personnes ce soir à huit heures.",
]


@pytest.mark.parametrize("cell", [nn.GRU, nn.LSTM])
def test_int8_rnn_is_close_to_the_float_rnn(cell) -> None:
    torch.manual_seed(0)
    rnn = cell(16, 32, num_layers=2, batch_first=True, bidirectional=True).eval()
    x = torch.rand(5, 7, 16) * 2 - 1  # (batch, T, in) within [-1, 1]
    with torch.inference_mode():
        want, want_final = rnn(x)
        got, got_final = Int8RNN(rnn, input_bound=1.0)(x)
    if cell is nn.LSTM:
        want_final, got_final = want_final[0], got_final[0]
    assert got.shape == want.shape and got_final.shape == want_final.shape
    assert (got - want).abs().max() < 0.05
    assert (got_final - want_final).abs().max() < 0.05


def test_an_int8_linear_row_is_the_same_in_any_batch() -> None:
    torch.manual_seed(0)
    layer = Int8Linear.of(nn.Linear(64, 48), bound=1.0)
    x = torch.rand(33, 64) * 2 - 1
    whole = layer(x)
    for rows in (1, 2, 5, 17):
        assert torch.equal(layer(x[:rows]), whole[:rows])
    assert (whole - nn.functional.linear(x, *_float(layer, x))).abs().max() < 0.1


def _float(layer: Int8Linear, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The float weight and bias an Int8Linear was made from (unpacked)."""
    weight, bias = torch.ops.quantized.linear_unpack(layer.packed)
    return weight.dequantize(), bias


@pytest.fixture(scope="module")
def shipped() -> Translator:
    if not (EMBEDDED / "config.json").exists():
        pytest.skip("the embedded model is not in this checkout")
    return Translator.load(EMBEDDED)  # int8 on CPU, the default


@pytest.mark.parametrize("beam", [1, 5])
def test_a_sentence_translates_the_same_alone_and_in_any_batch(shipped, beam) -> None:
    alone = [shipped.translate(s, beam=beam) for s in SENTENCES]
    for batch_size in (64, 5):
        together = shipped.translate(SENTENCES, beam=beam, batch_size=batch_size)
        assert [t.text for t in together] == [t.text for t in alone]
        assert [t.score for t in together] == [t.score for t in alone]  # to the last bit
        assert [t.weights for t in together] == [t.weights for t in alone]
