"""How sure a translation is, and which source words it may have dropped, from its one search.

An attention model leaves behind what it takes to judge its own output (Rikters & Fishel 2017,
"Confidence through attention"): the log-probability of its words, and attention that covered
each source word once, or missed a word, or kept coming back to the same words, or spread
over everything. Each is a signal below; a logistic fit on validation sets
(scripts/fit_confidence.py, stored in config.json's "confidence" part) weighs them into one
number in [0, 1]. Plain lists in, plain numbers out: no torch, no second pass.
"""

from __future__ import annotations

import dataclasses
import math
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...config import ConfidenceConfig
from ..translation import Translation
from .alignment import WORD_START, Words, group_pieces, is_special
from .wordlists import GRAMMAR, NUMBER_WORDS, PHRASES, SYMBOL_WORDS, UNFLAGGED

if TYPE_CHECKING:
    from ..rules.pipeline import Setting

# The signals, each a float per translation; the coefficients are keyed by these names.
SIGNALS = (
    # log of the mean surprisal (-log-probability) per output piece: log(-Translation.score);
    # with `length`, a fit can weigh a line's total surprisal against its length freely
    "surprise",
    "length",  # log of the number of output pieces
    # surprise means different things at different lengths: news lines are long and their
    # chrF rises with length, everyday ones short; these two let the fit bend between them
    # (Spearman with sentence chrF on newstest2013 0.362 -> 0.376, Tatoeba test 0.544 -> 0.541)
    "surprise_length",  # surprise x length
    "length_squared",  # length x length
    "uncovered",  # mean over source words of how far their coverage falls short of 1
    "repeated",  # mean over source words of how far their coverage goes past 1
    "spread",  # mean entropy of a step's attention, over the entropy of a uniform one
    "copied",  # share of the output's words that are source words, as written there
    "length_ratio",  # |log(output pieces / source pieces)|
)


def words(src_pieces: list[str]) -> Words:
    """Source words and their piece indices: the runs between spaces, with the punctuation
    around them apart ("Pierre" and "."; "aujourd'hui" and "là-bas" stay whole).

    </s> and other control tokens are left out.
    """
    found: list[str] = []
    groups: list[list[int]] = []
    for group in group_pieces(src_pieces).groups:
        # <unk> and control tokens: nothing a reader could find missing
        texts = [
            "" if is_special(p) else p.removeprefix(WORD_START)
            for p in (src_pieces[j] for j in group)
        ]
        inner = [k for k, text in enumerate(texts) if is_word(text)]
        cuts = [0, inner[0], inner[-1] + 1, len(group)] if inner else [0, len(group)]
        for start, stop in zip(cuts, cuts[1:], strict=False):
            if "".join(texts[start:stop]):
                found.append("".join(texts[start:stop]))
                groups.append(group[start:stop])
    return Words(found, groups)


def coverage(src_pieces: list[str], weights: list[list[float]]) -> tuple[list[str], list[float]]:
    """Source words and each one's attention summed over the output's steps.

    The </s> step is left out: attention spent deciding to stop does not translate a word.
    """
    found, groups = words(src_pieces)
    rows = weights[:-1]
    # columns through zip, not rows indexed per word: signals and dropped words of 2,000
    # newstest2013 lines took 0.73 s instead of 0.89 (2 threads, idle)
    columns = zip(*rows, strict=True) if rows else [()] * len(src_pieces)
    sums = [sum(column) for column in columns]  # (src_len,)
    return found, [sum(sums[j] for j in g) for g in groups]


def is_word(text: str) -> bool:
    """Whether a source word holds a letter or a digit (punctuation cannot be dropped)."""
    return any(c.isalnum() for c in text)


@dataclass(frozen=True)
class Unflagged:
    """What the attention of a source language cannot show missing (wordlists.py)."""

    words: frozenset[str] = frozenset()  # function words: never named as dropped
    phrases: tuple[tuple[str, ...], ...] = ()  # idioms: their words share the whole's attention
    grammar: tuple[tuple[str, ...], ...] = ()  # constructions: their words are never named

    @classmethod
    def of(cls, language: str) -> Unflagged:
        """The rules for a language code ("fr"); none for a language without lists."""
        return cls(
            words=UNFLAGGED.get(language, frozenset()),
            phrases=PHRASES.get(language, ()),
            grammar=GRAMMAR.get(language, ()),
        )


MEANING = "&%#+=<>±×÷"  # the symbols besides currency signs that a translation must keep


def is_symbol(text: str) -> bool:
    """Whether `text` is a symbol that carries meaning: a currency sign, "&", "%", "#" (C#) or
    a sign of arithmetic ("+", "=", ">"...)."""
    return len(text) == 1 and (text in MEANING or unicodedata.category(text) == "Sc")


def missing_symbols(
    src_pieces: list[str], text: str, words: Mapping[str, tuple[str, ...]]
) -> list[str]:
    """The source's symbols (is_symbol) that `text` has neither as themselves nor as a word."""
    source = "".join(p for p in src_pieces if not is_special(p))
    missing = []
    for symbol in dict.fromkeys(c for c in source if is_symbol(c)):
        said = (
            re.search(rf"\b{re.escape(w)}\b", text, re.IGNORECASE) for w in words.get(symbol, ())
        )
        if symbol not in text and not any(said):
            missing.append(symbol)
    return missing


# a number as a source or a translation writes it: 35 000, 35,000, 3,5, 3.5, 2019
NUMBER = re.compile(r"\d+(?:[ ,.]\d{3}(?!\d))*(?:[,.]\d+)?")


def is_number(text: str) -> bool:
    """Whether a word holds a digit: judged by what the translation holds, not by attention."""
    return any(c.isdigit() for c in text)


def missing_numbers(
    src_pieces: list[str], text: str, words: Mapping[int, tuple[str, ...]]
) -> list[str]:
    """The source's numbers that `text` holds neither in digits (in any grouping: "35 000" as
    "35,000", "XIXe" read as "19e" as "19th") nor in words (`words`: "second", "twenty-one",
    "a thousand"; "thirty-five thousand" for 35 000 is named)."""
    source = "".join(p for p in src_pieces if not is_special(p)).replace(WORD_START, " ")
    written = {value for n in NUMBER.findall(text) for value in values(n)}
    said = f" {' '.join(re.findall(r'[a-z]+', text.lower()))} "  # "Twenty-one" -> " twenty one "
    missing = []
    for number in dict.fromkeys(n.strip() for n in NUMBER.findall(source)):
        says = values(number)
        phrases = [p for v in says if v.isdigit() for p in words.get(_small(v), ())]
        if not says & written and not any(f" {p} " in said for p in phrases):
            missing.append(number)
    return missing


def _small(value: str) -> int:
    """A whole number's value, or -1 past ten digits (int() refuses 4,300 digits; a line held
    them)."""
    return int(value) if len(value) <= 10 else -1


def values(number: str) -> set[str]:
    """What a number may say, its grouping and decimal mark either way: "35 000" and "35,000"
    say 35000, "1,5" and "1.50" 1.5 (not 15), "15,000" 15000 or 15."""
    head, tail = re.fullmatch(r"(.*?)(?:[,.](\d+))?", number).groups()  # type: ignore[union-attr]
    whole = re.sub(r"\D", "", head)
    if tail is None:
        return {whole}
    decimal = f"{whole}.{tail.rstrip('0')}".rstrip(".")
    return {whole + tail, decimal} if len(tail) == 3 else {decimal}


def dropped(
    src_pieces: list[str], weights: list[list[float]], threshold: float, rules: Unflagged
) -> list[str]:
    """Source words whose attention over the whole output stayed under `threshold`."""
    return [word for word, covered in candidates(src_pieces, weights, rules) if covered < threshold]


def candidates(
    src_pieces: list[str], weights: list[list[float]], rules: Unflagged
) -> list[tuple[str, float]]:
    """The source words that can be dropped, each with its attention over the output.

    A word of an idiom has the attention of the whole: the decoder reads an idiom where it
    likes ("quelque chose" -> "something" looks at "quelque" alone; on the Tatoeba test split,
    Multi30k val and newstest2013, "chose" was the word flagged most, 60 times of 1,141).
    """
    found, covered = coverage(src_pieces, weights)
    lower = [w.lower() for w in found]
    for start, phrase in matches(lower, rules.phrases):
        end = start + len(phrase)
        whole = sum(covered[start:end])
        covered[start:end] = [max(c, whole) for c in covered[start:end]]
    grammar = {  # "d'" in "en train d'écrire" stands for the elision: "écrire" can be missed
        start + k
        for start, phrase in matches(lower, rules.grammar)
        for k, p in enumerate(phrase)
        if not p.endswith("'")
    }
    return [
        (w, c)
        for k, (w, c) in enumerate(zip(found, covered, strict=True))
        if k not in grammar and can_drop(w, rules.words)
    ]


def matches(
    words: list[str], phrases: tuple[tuple[str, ...], ...]
) -> list[tuple[int, tuple[str, ...]]]:
    """Each phrase found in lower-case `words`, with where it starts. A phrase word ending in '
    matches any word elided so ("d'" matches "d'écrire"); a phrase's first word is exact."""
    by_first: dict[str, list[tuple[str, ...]]] = {}
    for phrase in phrases:
        by_first.setdefault(phrase[0], []).append(phrase)
    found = []
    for start, word in enumerate(words):  # one lookup a word: most start no phrase
        for phrase in by_first.get(word, ()):
            rest = words[start + 1 : start + len(phrase)]
            if len(rest) == len(phrase) - 1 and all(
                w.startswith(p) if p.endswith("'") else w == p
                for w, p in zip(rest, phrase[1:], strict=True)
            ):
                found.append((start, phrase))
    return found


def can_drop(word: str, stop: frozenset[str]) -> bool:
    """Whether a source word's low attention can mean it was left out.

    Function words (`stop`: Unflagged.words, auxiliaries and pronouns included; "d'être"
    counts as "être") and words of one or two letters ("de", "l'", "en") are not: the model
    reads them together with their neighbours and rarely looks at them alone, so their low
    attention says nothing (of 50 words flagged on the dev sets and checked by hand, 6 were
    auxiliaries the translation carried, none missing).
    """
    head, _, tail = word.lower().rpartition("'")
    elided = head and (len(head) <= 2 or head in stop)  # d'être, l'arme; not quelqu'un, can't
    bare = tail if elided else word.lower()
    return is_word(word) and not is_number(word) and len(bare) > 2 and bare not in stop


def signals(
    src_pieces: list[str],
    tgt_pieces: list[str],
    weights: list[list[float]],
    score: float,
    *,
    attends: bool,
) -> dict[str, float]:
    """Every signal of SIGNALS for one translation (attention ones 0 without `attends`)."""
    src_words, tgt_words = group_pieces(src_pieces).words, group_pieces(tgt_pieces).words
    values = dict.fromkeys(SIGNALS, 0.0)
    values["surprise"] = math.log(max(-score, 1e-6))
    values["length"] = math.log(max(len(tgt_pieces), 1))
    values["surprise_length"] = values["surprise"] * values["length"]
    values["length_squared"] = values["length"] ** 2
    source = {w.lower() for w in src_words if is_word(w) and not is_special(w)}
    said = [w.lower() for w in tgt_words if is_word(w) and not is_special(w)]
    values["copied"] = sum(w in source for w in said) / max(len(said), 1)
    values["length_ratio"] = abs(math.log(max(len(tgt_pieces), 1) / max(len(src_pieces), 1)))
    if len(tgt_pieces) < 2 or not weights or not attends:
        return values  # nothing said, or no attention (`--attention none`)
    _, covered = coverage(src_pieces, weights)
    if covered:
        values["uncovered"] = sum(max(0.0, 1 - c) for c in covered) / len(covered)
        values["repeated"] = sum(max(0.0, c - 1) for c in covered) / len(covered)
    if len(src_pieces) > 1:
        entropy = [-sum(w * math.log(w) for w in row if w > 0) for row in weights[:-1]]
        values["spread"] = sum(entropy) / len(entropy) / math.log(len(src_pieces))
    return values


def confidence(values: Mapping[str, float], config: ConfidenceConfig) -> float:
    """The logistic of the fitted linear sum of the signals: a number in [0, 1]."""
    z = config.bias + sum(c * values[name] for name, c in config.coefficients.items())
    return 1 / (1 + math.exp(-min(max(z, -50.0), 50.0)))


def check(config: ConfidenceConfig) -> None:
    """Raise ValueError unless every coefficient names a signal and every number is finite
    (the messages name config.json's keys: the coefficients are its "weights")."""
    if not isinstance(config.coefficients, dict):
        raise ValueError("confidence: weights must be an object of signal names and numbers")
    unknown = sorted(set(config.coefficients) - set(SIGNALS))
    if unknown:
        raise ValueError(f"confidence: unknown signal {unknown[0]!r}; known: {', '.join(SIGNALS)}")
    numbers = [config.bias, config.threshold, *config.coefficients.values()]
    if not all(type(v) in (int, float) and math.isfinite(v) for v in numbers):
        raise ValueError("confidence: bias, threshold and weights must be finite numbers")


@dataclass(frozen=True)
class Judge:
    """A step of the rules' pipeline (rules/pipeline.py) that writes no text: a translation
    given its confidence and the source words it may have dropped."""

    config: ConfidenceConfig  # how signals make a confidence (config.json's "confidence")
    unflagged: Unflagged  # what is never named dropped
    symbol_words: Mapping[str, tuple[str, ...]]  # the target's words for a symbol (wordlists.py)
    number_words: Mapping[int, tuple[str, ...]]  # the target's words for numbers (wordlists.py)
    name: str = "confidence"
    did: str = "judged its confidence"

    @classmethod
    def of(cls, setting: Setting) -> Judge:
        """The judge of a model (rules.pipeline.Setting): its fit, its source's word lists."""
        source, target = setting.languages
        return cls(
            config=setting.confidence,
            unflagged=Unflagged.of(source or ""),
            symbol_words=SYMBOL_WORDS.get(target or "", {}),
            number_words=NUMBER_WORDS.get(target or "", {}),
        )

    def read(self, text: str) -> tuple[str, None]:
        """The line as it is."""
        return text, None

    def write(self, t: Translation, memo: None) -> Translation:
        """`t` with its confidence and the source words it may have dropped."""
        if not t.tgt_tokens:  # a blank line: nothing to translate, nothing to miss
            return dataclasses.replace(t, confidence=1.0)
        values = signals(t.src_tokens, t.tgt_tokens, t.weights, t.score, attends=t.attends)
        missed = []
        if t.has_attention:
            missed = dropped(t.src_tokens, t.weights, self.config.threshold, self.unflagged)
        if self.symbol_words:  # a target without a list: its words for "&" unknown ("et")
            missed += missing_symbols(t.src_tokens, t.text, self.symbol_words)
        if self.number_words:
            missed += missing_numbers(t.src_tokens, t.text, self.number_words)
        return dataclasses.replace(t, confidence=confidence(values, self.config), dropped=missed)
