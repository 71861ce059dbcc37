"""The column-order check: a few sentences name their language, and a swap names its fix."""

from __future__ import annotations

from seq2attn_cli.data.languages import column_problem, guess_language

FRENCH = [
    "Je suis étudiant.",
    "Où est la gare ?",
    "Il fait beau aujourd'hui.",
    "Nous avons mangé une pomme rouge.",
    "Je ne sais pas ce que tu veux dire.",
    "Elle lit un livre intéressant dans le jardin.",
]
ENGLISH = [
    "I'm a student.",
    "Where is the train station?",
    "It's fine today.",
    "We ate a red apple.",
    "I don't know what you mean.",
    "She reads an interesting book in the garden.",
]
GERMAN = [
    "Ich bin Student.",
    "Wo ist der Bahnhof?",
    "Das Wetter ist heute schön.",
    "Wir haben einen roten Apfel gegessen.",
    "Ich weiß nicht, was du meinst.",
    "Sie liest ein interessantes Buch im Garten.",
]


def test_a_few_sentences_name_their_language_or_script():
    assert guess_language(FRENCH) == "fr"
    assert guess_language(ENGLISH) == "en"
    assert guess_language(GERMAN) == "de"
    assert guess_language(["Где находится вокзал?", "Я студент."]) == "cyrillic"
    assert guess_language(["Ο σταθμός είναι εκεί."]) == "greek"


def test_unsure_is_none_never_a_guess():
    for texts in ([], ["Stop!"], ["12 345"], ["Paris London Berlin"]):
        assert guess_language(texts) is None


def test_swapped_columns_name_the_fix():
    problem = column_problem(ENGLISH, FRENCH, src_col=1, tgt_col=2, expected=("fr", "en"))
    assert "looks English" in problem and "--src-col 2 --tgt-col 1" in problem
    assert column_problem(FRENCH, ENGLISH, src_col=1, tgt_col=2, expected=("fr", "en")) is None


def test_a_source_in_another_language_is_named_without_a_swap():
    problem = column_problem(GERMAN, ENGLISH, src_col=1, tgt_col=2, expected=("fr", "en"))
    assert "German" in problem and "French" in problem and "--src-col" not in problem


def test_without_known_languages_the_share_the_model_can_write_decides():
    english_words = {w for s in ENGLISH for w in s.lower().split()}

    def share(texts):  # a stand-in for a model that writes English pieces only
        words = [w for s in texts for w in s.lower().split()]
        return sum(w in english_words for w in words) / len(words)

    swapped = column_problem(ENGLISH, FRENCH, src_col=3, tgt_col=4, output_share=share)
    assert "--src-col 4 --tgt-col 3" in swapped
    assert column_problem(FRENCH, ENGLISH, src_col=1, tgt_col=2, output_share=share) is None
    assert column_problem(ENGLISH, FRENCH, src_col=1, tgt_col=2) is None  # nothing to go by
