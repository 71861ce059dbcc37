"""The words confidence.py never names as dropped: function words, idioms, grammar (torch-free)."""

from __future__ import annotations

from ...data.languages import STOP_SETS

# Words never named as dropped (decoding/explain/confidence.py): the stop words, and the function
# words among those flagged most often on the dev sets that a hand check found carried by the
# translation (forms of "être", pronouns, "est-ce" of "est-ce que"). Not "par", "comme",
# "lui", "dont": 8 of 12 such flags checked were really missing ("par hasard", "chez lui")
MORE_FUNCTION_WORDS = {"fr": "suis es sommes êtes se me te cela ceci ça est-ce"}
UNFLAGGED = {
    lang: stop | frozenset(MORE_FUNCTION_WORDS.get(lang, "").split())
    for lang, stop in STOP_SETS.items()
}
# Phrases a translation writes as one word or a few ("quelque chose" -> "something"): their
# words share the attention the phrase got, so "chose" is not dropped when "quelque" was read.
# Idioms only, from the words flagged most often on the dev sets: a phrase that translates
# word by word ("la semaine prochaine") keeps its words apart, so each can still be missed.
PHRASES = {
    lang: tuple(tuple(phrase.split()) for phrase in phrases.split(";"))
    for lang, phrases in {
        "fr": "quelque chose;tout le monde;s'il te plaît;s'il vous plaît;je vous prie;"
        "un autre;une autre;à la maison;que ce soit;à la fois;une fois;en effet;tout à fait;"
        "de toute évidence;sur le point;au sein;ce soir;petit déjeuner;lunettes de soleil;"
        "droits de l'homme;tout de suite;en fait;bien sûr;au moins;tout à l'heure;de nouveau;"
        "à nouveau;plus tard;pas du tout;de temps en temps;quand même;tout de même;au lieu;"
        "à cause;en retard;ou bien;de ce genre",
    }.items()
}
# Constructions that are grammar, not words to translate, whose words are never named as
# dropped ("en train de boire" -> "drinking"); a word ending in ' stands for any elided one
GRAMMAR = {"fr": (("en", "train", "de"), ("en", "train", "d'"))}
# Symbols that carry meaning, by target language: each with the words a translation may write
# for it instead ("&" -> "and", "12 €" -> "12 euros"). Punctuation to the attention check
# (confidence.is_word), so a translation without them ("J'ai payé 12,50 € hier." -> "I paid
# 12,50 yesterday.") is caught by what its text holds (confidence.missing_symbols). Every other
# currency sign (Unicode category Sc) must come out as itself.
SYMBOL_WORDS = {
    "en": {
        "&": ("and",),
        "%": ("percent", "per cent"),
        "€": ("euro", "euros", "EUR"),
        "$": ("dollar", "dollars", "USD", "CAD"),
        "£": ("pound", "pounds", "GBP"),
        "¥": ("yen", "JPY"),
        # "C#" came out "City", "a > b" "you're up", "2 + 2 = 4" "2 is 2 to 4": unwarned
        "#": ("sharp", "hash", "number"),
        "+": ("plus", "and"),
        "=": ("equal", "equals", "is", "are", "makes"),
        "<": ("less", "fewer", "under", "below", "smaller", "lower"),
        ">": ("greater", "more", "over", "above", "larger", "bigger", "higher"),
        "±": ("plus or minus", "about", "around", "roughly", "approximately"),
        "×": ("times", "by", "multiplied"),
        "÷": ("divided",),
    }
}
# Numbers a translation may write as words, by target language: a value's phrases, said with
# their words side by side ("twenty-one", not "twenty days and one"); a source number the text
# holds neither in digits nor so is missing (confidence.missing_numbers)
ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"
).split()
ONES_TH = (
    "zeroth first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth "
    "thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth"
).split()
TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
TENS_TH = "twentieth thirtieth fortieth fiftieth sixtieth seventieth eightieth ninetieth".split()


def english_number_words() -> dict[int, tuple[str, ...]]:
    """0 to 99 as cardinals and ordinals, the hundreds, a thousand, a million, a billion."""
    words = {n: (ONES[n], ONES_TH[n]) for n in range(20)}
    for tens, (ten, tenth) in enumerate(zip(TENS, TENS_TH, strict=True), start=2):
        words[tens * 10] = (ten, tenth)
        for one in range(1, 10):
            words[tens * 10 + one] = (f"{ten} {ONES[one]}", f"{ten} {ONES_TH[one]}")
    words |= {h * 100: (f"{ONES[h]} hundred", f"{ONES[h]} hundredth") for h in range(2, 10)}
    large = {100: "hundred", 1000: "thousand", 10**6: "million", 10**9: "billion"}
    return words | {n: (word, f"{word}th") for n, word in large.items()}


NUMBER_WORDS = {"en": english_number_words()}
