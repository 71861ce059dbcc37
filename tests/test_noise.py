"""Noisy copies (--noise-share): sources as people type them, each naming its pair."""

from __future__ import annotations

import random

from seq2attn_cli.data.noise import noisy_copies, strip_accents, typed


def test_noisy_copies_look_typed_and_name_their_pair():
    pairs = [
        ("Ma mère est très gentille.", "My mother is very kind."),
        ("J'ai faim.", "I'm hungry."),
    ]
    many = pairs * 200
    copies = noisy_copies([s for s, _ in many], share=1.0, rng=random.Random(0))
    sources = {s for _, s in copies}
    assert "ma mere est tres gentille" in sources  # no accents, lower case, no stop
    assert any("jai" in s.lower() or "j ai" in s.lower() for s in sources)
    assert all(s[0].lower() == many[i][0][0].lower() for i, s in copies)  # typed from pair i
    assert noisy_copies([s for s, _ in pairs], share=0.0, rng=random.Random(0)) == []


def test_typing_noise_changes_no_more_than_people_do():
    rng = random.Random(3)
    src = "La voiture rouge est devant la maison."
    for _ in range(200):
        noisy = typed(src, rng)
        assert abs(len(noisy) - len(src)) <= 2
        assert strip_accents(noisy.lower())[:2] == "la"
