"""Which target words each source word is linked to, by attention: where a document's tags
and a glued symbol go (documents/placement.py, rules/symbols.py).

Each target word is linked to the source word of whose attention it takes the largest share
(as `s2a align --method shared` reads rows), and a source word that no target word took is
linked to the target word that attends to it most. An English article, preposition or
auxiliary linked to a source word together with a content word gives way to it (*médecin*:
*a doctor*, linked *doctor*): the step writing an article attends to the noun it announces
(bench/tag_placement.py measures the rule).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from difflib import SequenceMatcher
from itertools import accumulate
from typing import Any

from ...align.methods import by_share, row_best
from .alignment import is_special

# English words that lean on the word they come with: articles, prepositions, auxiliaries.
# On the 210 tags of bench/tag_placement_test.tsv (embedded model, beam 5), giving way:
# none / articles / these: 198 / 203 / 204 on just the right words (#43)
LEANING = frozenset(
    "a an the "
    "about after at before between by during for from in into of on onto over through to "
    "under with "
    "am are be been being can could did do does had has have is may might must shall should "
    "was were will would".split()
)
# leading marks, word, trailing marks; a currency sign before a number is the word's ("€16")
CORE = re.compile(r"^(\W*?)([€$£¥]?\w(?:.*\w)?|)(\W*)$", re.S)


def aligned_targets(words: list[str], translation: Any) -> tuple[list[str], list[list[int]]]:
    """The target words, and for each source word (ours) the target words aligned to it."""
    if not translation.has_attention:  # --attention none: by relative position
        tgt = translation.text.split()
        n = max(len(words), 1)
        return tgt, [[min(len(tgt) - 1, i * len(tgt) // n)] if tgt else [] for i in range(n)]
    model_words, model_tgt, weights = translation.word_attention
    model_words = model_words[:-1]  # without </s>
    # the words of the text: <unk> pieces are not written, so they are not words of it
    shown = [j for j, word in enumerate(model_tgt[:-1]) if not is_special(word)]
    rows = [weights[j][:-1] for j in shown]  # (tgt_words, src_words)
    tgt = translation.text.split()
    if not tgt or not model_words or not rows:
        return tgt, [[] for _ in words]
    written = word_map([model_tgt[j] for j in shown], tgt)  # each row's word of the text
    linked = links(rows, [tgt[k] for k in written])
    aligned = [sorted({written[j] for j in found}) for found in linked]
    return tgt, [aligned[m] for m in word_map(words, model_words)]


def links(rows: list[list[float]], targets: list[str]) -> list[list[int]]:
    """For each source word (column), the target words (rows) linked to it, as said above."""
    linked: list[list[int]] = [[] for _ in rows[0]]
    for i, j in sorted(row_best(by_share(rows))):
        linked[i].append(j)
    for i, found in enumerate(linked):
        if not found and i and not any(row[i] for row in rows):  # no attention at all: a copy
            found += linked[i - 1]  # for a stand-in's word ("01 23 45 67 89": stand_ins._spread)
        elif not found:  # no target word takes most of its share from it
            found.append(max(range(len(rows)), key=lambda j, i=i: rows[j][i]))
    return [[j for j in found if not leans(targets[j])] or found for found in linked]


def leans(word: str) -> bool:
    """Whether a target word is an article, a preposition or an auxiliary (LEANING)."""
    return CORE.match(word).group(2).lower() in LEANING  # type: ignore[union-attr]


def word_map(words: list[str], model_words: list[str]) -> list[int]:
    """Index of the model's word holding each of ours (cleaning may join "pommes !"), words
    the same but for marks matched in order, a stand-in in a symbol's place ("URL" for "⚠️")
    one for one; by letters where the words cannot be matched so."""
    if not model_words:
        return [0] * len(words)
    if len(words) == len(model_words):
        return list(range(len(words)))
    keys = SequenceMatcher(None, [_key(w) for w in words], [_key(w) for w in model_words], False)
    found = [0] * len(words)
    for tag, i1, i2, j1, j2 in keys.get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            found[i1:i2] = range(j1, j2)
        elif j2 > j1:  # "pommes", "!" for "pommes!": by the letters each holds
            found[i1:i2] = [j1 + k for k in _by_letters(words[i1:i2], model_words[j1:j2])]
        else:  # words the model's lack (a spaced ":"): the model's word before them
            found[i1:i2] = [max(j1 - 1, 0)] * (i2 - i1)
    return found


def _by_letters(words: list[str], model_words: list[str]) -> list[int]:
    """Index of the model's word holding each of ours, counting the letters before it."""
    ends = list(accumulate(_letters(w) for w in model_words))
    found, seen = [], 0
    for word in words:
        k = bisect_right(ends, seen) if _letters(word) else bisect_left(ends, seen)
        found.append(min(k, len(model_words) - 1))
        seen += _letters(word)
    return found


def _key(word: str) -> str:
    """A word's letters and digits, in lower case: what cleaning keeps of it."""
    return "".join(c for c in word.lower() if c.isalnum())


def _letters(word: str) -> int:
    """How many letters and digits a word holds (cleaning keeps them)."""
    return len(_key(word))
