"""The rules around the search: one list, read in order, written back in reverse, recorded."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest

from seq2attn_cli.decoding.rules import pipeline
from seq2attn_cli.decoding.rules.capitals import in_capitals
from seq2attn_cli.decoding.rules.markers import Markers
from seq2attn_cli.decoding.rules.numbers import Numbers
from seq2attn_cli.decoding.rules.pipeline import FORCED, RULES, SPELLING, VALIDATION, Pipeline
from seq2attn_cli.decoding.translation import Translation


def test_the_rules_are_listed_once_in_the_order_they_read_a_line():
    names = [kind.name for kind in RULES]
    assert names == [
        "clean", "urls", "symbols", "capitals", "glossary", "confidence", "letters", "parts",
        "markers", "quotes", "articles", "numbers",
    ]  # fmt: skip
    for subset in (VALIDATION, FORCED, SPELLING):  # named subsets name rules that exist
        assert set(subset) <= set(names)


def test_each_rule_reads_and_writes_or_cuts_and_joins():
    for kind in RULES:
        assert kind.name and kind.did and callable(kind.of)
        assert (hasattr(kind, "read") and hasattr(kind, "write")) or hasattr(kind, "cut")
    assert [kind.name for kind in RULES if hasattr(kind, "cut")] == ["parts"]


def test_a_subset_naming_no_rule_is_refused(shipped):
    with pytest.raises(ValueError, match="no rule named artcles"):
        Pipeline(setting=shipped.setting, names=("artcles",))


def test_a_rule_that_does_not_apply_to_the_model_is_left_out(shipped):
    french = dataclasses.replace(shipped.setting, languages=("en", "fr"), spaced_quotes=False)
    names = [rule.name for rule in Pipeline(setting=french).rules]
    assert "articles" not in names and "quotes" not in names  # English output, spaced quotes
    assert "numbers" not in names  # from French into English only
    assert [rule.name for rule in shipped.rules.rules] == [
        kind.name
        for kind in RULES
        if kind.name != "glossary"  # with a glossary only
    ]


@pytest.mark.parametrize(
    ("source", "written", "changed_by"),
    [
        ("Nous avons vu une pomme.", "We saw a apple.", ["articles"]),
        ("Erdoğan a vu www.example.com hier.", "Erdogan saw URL yesterday.", ["letters", "urls"]),
        ("Il a vu Paris.", "He saw Paris.", []),
        ("- Il a vu Paris.", "He saw Paris.", ["markers"]),
    ],
)
def test_a_translation_records_the_rules_whose_write_changed_it(
    shipped, model_writes, source, written, changed_by
):
    model_writes(written)
    assert shipped.translate(source).changed_by == changed_by


@pytest.mark.parametrize(
    ("source", "translation"),
    [
        ("- Ouvrez le fichier.", "- Open the file."),  # the model alone lost the dash
        ("• Ouvrez le fichier.", "• Open the file."),  # and wrote "•'s file."
        ("2) Ouvrez le fichier.", "2) Open the file."),
        ("— Bonjour, dit-il.", "— Hello, he said."),
    ],
)
def test_a_line_s_list_marker_or_dash_is_written_back_before_its_translation(
    shipped, model_writes, source, translation
):
    model_writes(translation.partition(" ")[2])
    (line,) = shipped.rules.read([source])
    read = shipped.subwords.text(shipped.subwords.pieces(line.parts[0].ids))
    assert read == source.partition(" ")[2]  # the model reads no marker
    t = shipped.translate(source)
    assert t.text == translation and "markers" in t.changed_by and t.source == source
    words = t.text.split()  # the pieces' words are the text's: alignments and tags find them
    assert len(t.word_attention.tgt) == len(words) + 1 and (0, 0) in t.alignment


def test_a_line_in_capitals_is_read_in_sentence_case_and_written_in_capitals(shipped, model_writes):
    model_writes("Warning: do not open URL.")
    (line,) = shipped.rules.read(["ATTENTION : NE PAS OUVRIR HTTPS://X.FR/A. MERCI."])
    assert line.parts[0].text == "Attention: ne pas ouvrir URL."  # the model read "ATTION"
    t = shipped.translate("ATTENTION : NE PAS OUVRIR HTTPS://X.FR/A.")
    assert t.text == "WARNING: DO NOT OPEN HTTPS://X.FR/A." and "capitals" in t.changed_by


def test_an_acronym_in_a_line_in_capitals_stays_in_capitals(shipped):
    (line,) = shipped.rules.read(["UE ET OTAN : JE VAIS À LA SNCF."])  # read "ue": "USE AND"
    assert line.parts[0].text == "UE et OTAN: je vais à la SNCF."


@pytest.mark.parametrize("line", ["ONU et OTAN.", "OK", "ONU !", "Le PDG de la SNCF."])
def test_a_line_with_small_letters_or_one_word_is_not_in_capitals(line):
    assert not in_capitals(line)


@pytest.mark.parametrize("source", ["A. Dupont ouvre.", "2019. Il ouvre.", "-5 degrés."])
def test_an_initial_a_year_or_a_sign_is_no_marker(source):
    assert Markers().read(source) == (source, "")


@pytest.mark.parametrize(
    ("written", "english"),
    [
        ("It rose by 3,5% to 35 000.", "It rose by 3.5% to 35,000."),
        ("He paid 1 234,56 euros.", "He paid 1,234.56 euros."),
        ("He paid 234,56 euros.", "He paid 234.56 euros."),  # the end of the source's number
        ("In 2019, 2020 and 15,000.", "In 2019, 2020 and 15,000."),  # a list; fifteen thousand?
    ],
)
def test_numbers_copied_from_french_are_written_in_english_form(
    shipped, model_writes, written, english
):
    model_writes(written)
    t = shipped.translate("Il a payé 1 234,56 euros, 3,5 %, 35 000, 2019, 2020 et 15,000.")
    assert t.text == english and ("numbers" in t.changed_by) == (written != english)


@pytest.mark.parametrize(
    ("source", "read"),
    [
        ("Au XIXe siècle, puis la Ve.", "Au 19e siècle, puis la 5e."),
        (
            "Il fait 20 °C, 70°F, -1° et 21°, n° 5.",
            "Il fait 20 degrés Celsius, 70 degrés Fahrenheit, -1 degré et 21 degrés, n° 5.",
        ),
        ("L'article 3, 2° du code; €2,5 millions.", "L'article 3, 2° du code; €2,5 millions."),
        (
            "Le litre à 1,859 €, 12 € 50 % moins cher.",
            "Le litre à 1,859 euros, 12 euros 50 % moins cher.",
        ),
        (
            "Le roi François Ier et Louis XIV. Vie, De, Ce.",
            "Le roi François Ier et Louis XIV. Vie, De, Ce.",
        ),
    ],
)
def test_a_roman_ordinal_and_degrees_are_read_as_the_model_knows_them(source, read):
    assert Numbers().read(source)[0] == read


@pytest.mark.parametrize(
    ("source", "read"),
    [
        ("Le 1er prix.", "Le premier prix."),  # "The 1 is price."
        (
            "C'est la 1re fois, la 1ère, la 1ere.",
            "C'est la première fois, la première, la première.",
        ),
        (
            "Le 1er janvier, le 1er mai 2020, le 1er janv.",
            "Le 1er janvier, le 1er mai 2020, le 1er janvier.",
        ),
        ("21er, 1,1er", "21er, 1,1er"),  # not one
        (
            "L'article 1er, le paragraphe 1er, l'art. 1er",
            "L'article 1er, le paragraphe 1er, l'art. 1er",
        ),
    ],
)
def test_first_in_digits_is_read_as_its_word_but_before_a_month(source, read):
    assert Numbers().read(source)[0] == read


def test_first_in_digits_comes_out_as_first(shipped):
    assert shipped.translate("Le 1er prix.").text == "The first prize."  # "The 1 is price."


@pytest.mark.parametrize(
    ("source", "read"),
    [
        ("Le train part à 14h30.", "Le train part à 14:30."),  # the model wrote "at 2:30"
        ("Ouvert de 9h à 19h, il est 17h.", "Ouvert de 9:00 à 19:00, il est 17:00."),
        (
            "Entre 06h45 et 7h40, vers 10h (heure locale).",
            "Entre 6:45 et 7:40, vers 10:00 (heure locale).",
        ),
        ("9h00 et 12h00, 9h-18h", "9:00 et 12:00, 9:00-18:00"),
        # hours of time, not of the day, and a spaced time, whose words alignments count
        ("Le film dure 2h, à 2h de Paris, 24h/24.", "Le film dure 2h, à 2h de Paris, 24h/24."),
        ("Entre 2h et 3h de route, à 23 h 45.", "Entre 2h et 3h de route, à 23 h 45."),
    ],
)
def test_a_time_of_day_is_read_as_english_writes_it(source, read):
    assert Numbers().read(source)[0] == read


@pytest.mark.parametrize(
    ("source", "read"),
    [
        ("Le 14 sept. 2001, il est parti.", "Le 14 septembre 2001, il est parti."),  # "14 seven."
        ("Le 1er janv. à Paris, en Déc. 1999.", "Le 1er janvier à Paris, en décembre 1999."),
        ("C'est le 31 oct.", "C'est le 31 octobre."),  # its full stop also ends the sentence
        ("Ils étaient sept. Nous étions 7.", "Ils étaient sept. Nous étions 7."),  # a number
        ("Nous étions sept. 2000 personnes", "Nous étions sept. 2000 personnes"),  # seven
        ("Sept. 2001 fut terrible.", "septembre 2001 fut terrible."),  # "Seven 2001" capitalised
        ("En sept. 2001 puis le 14 juill. 2002", "En septembre 2001 puis le 14 juillet 2002"),
        ("Oct. 2001, le 3 Déc.", "octobre 2001, le 3 décembre."),
        ("Le 14 sept... Le 2 nov.", "Le 14 septembre... Le 2 novembre."),
    ],
)
def test_a_month_written_short_after_a_day_or_before_a_year_is_read_whole(source, read):
    assert Numbers().read(source)[0] == read


def test_a_number_grouped_by_dots_the_model_copies_is_grouped_by_commas(shipped, model_writes):
    model_writes("It cost 1.500 euros, 1.234,5 and 2.350.000, at 192.168.1.1, 0.125.")
    t = shipped.translate("Il a coûté 1.500 euros, 1.234,5 et 2.350.000, à 192.168.1.1, 0.125.")
    assert t.text == "It cost 1,500 euros, 1,234.5 and 2,350,000, at 192.168.1.1, 0.125."
    assert t.word_attention.tgt[:-1] == t.text.split()  # the pieces say so too


def test_a_roman_number_in_a_line_in_capitals_stays_one(shipped):
    (line,) = shipped.rules.read(["AU XIXE SIÈCLE, LOUIS XIV. LA VIE."])  # "TWENTYTH CENTURY"
    read = shipped.subwords.text(shipped.subwords.pieces(line.parts[0].ids))
    assert read.startswith("Au 19e siècle, ") and read.endswith(" XIV.")  # its first sentence


def test_an_ordinal_the_model_copies_is_written_in_english(shipped, model_writes):
    model_writes("He came 2e, then 21ème, in the 19e century, on the 2th floor.")
    t = shipped.translate("Il est arrivé 2e, puis 21ème, au XIXe siècle, au 2ème étage.")
    assert t.text == "He came 2nd, then 21st, in the 19th century, on the 2nd floor."
    assert t.word_attention.tgt[:-1] == t.text.split()  # the pieces say so too
    assert "▁XIXe" in t.src_tokens  # the source as given


def test_an_amount_is_read_with_its_sign_s_word_and_written_with_the_sign_before_it(
    shipped, model_writes
):
    (line,) = shipped.rules.read(["J'ai payé 12,50 € et 5 $."])
    read = shipped.subwords.text(shipped.subwords.pieces(line.parts[0].ids))
    assert read == "J'ai payé 12,50 euros et 5 dollars."  # as given: "I paid 12,50."
    model_writes("I paid 12,50 euros and 5 dollars.")
    assert shipped.translate("J'ai payé 12,50 € et 5 $.").text == "I paid €12.50 and $5."
    model_writes("I paid 12,50 Euros and 5 DOLLARS.")  # in any case
    t = shipped.translate("J'ai payé 12,50 € et 5 $.")
    assert t.text == "I paid €12.50 and $5." and "Euros" not in t.word_attention.tgt
    model_writes("He paid 1,250.50 pounds, not 1 250 euros.")  # the number matched by its digits
    assert (
        shipped.translate("Il a payé £1,250.50, pas 1 250 €.").text
        == "He paid £1,250.50, not €1,250."
    )


def test_an_amount_whose_sign_word_the_model_left_out_gets_its_sign(shipped, model_writes):
    model_writes("He raised 850,000 in 2023 (850,000.5 and 850,0001 are others).")
    t = shipped.translate("Il a levé 850 000 € en 2023.")
    assert t.text == "He raised €850,000 in 2023 (850,000.5 and 850,0001 are others)."
    assert t.word_attention.tgt[:-1] == t.text.split()  # the pieces say so too
    model_writes("He raised EUR 850,000.")  # a currency's code: as the model wrote it
    assert shipped.translate("Il a levé 850 000 €.").text == "He raised EUR 850,000."
    model_writes("On May 5, he paid five euros.")  # its currency named: no number signed
    assert shipped.translate("Le 5 mai, il a payé 5 €.").text == "On May 5, he paid five euros."


def test_the_words_of_numbers_and_amounts_written_in_english_are_those_of_the_pieces(
    shipped, model_writes
):
    model_writes("A fine of 1 500 euros, 3,5 and 35 000, was imposed.")
    t = shipped.translate("Une amende de 1 500 €, 3,5 et 35 000, a été infligée.")
    assert t.text == "A fine of €1,500, 3.5 and 35,000, was imposed."
    assert t.word_attention.tgt[:-1] == ["A", "fine", "of", "€1,500,", "3,5", "and", "35,000,",
                                          "was", "imposed."]  # fmt: skip


@pytest.mark.parametrize(
    ("source", "read"),
    [
        ("Le menu coûte 12€50, le café 2 € 50.", "Le menu coûte 12,50 euros, le café 2,50 euros."),
        ("Il a payé 10 € 20 fois.", "Il a payé 10 euros 20 fois."),  # not 10,20 euros
        ("Appelez le 0 800 123 456.", "Appelez le URL."),  # a telephone number, not 800,123,456
        ("Il a payé £1,250.50 et €15.000.", "Il a payé 1 250,50 pounds et 15 000 euros."),
        ("Un budget de €10 millions, ou $30,000.", "Un budget de €10 millions, ou $30,000."),
        ("Il coûte 9,99 €/mois.", "Il coûte 9,99 euros par mois."),  # was "9,99 eurosURL"
        (
            "Un budget de 3,5 M€, 850 k€, 2 Md€ ou 12 M$.",  # "3.5 MEP", "850 kit", "12th"
            "Un budget de 3,5 millions d'euros, 850 mille euros, 2 milliards d'euros ou 12 "
            "millions de dollars.",
        ),
        ("Il coûte 0,25 €/kWh.", "Il coûte 0,25 euros."),  # the unit's symbol written back
        ("Il gagne 30 000 €/an, 45 €/j.", "Il gagne 30 000 euros par an, 45 euros par jour."),
    ],
)
def test_an_amount_is_read_as_its_number_in_french_form_and_its_sign_s_word(shipped, source, read):
    (line,) = shipped.rules.read([source])
    assert shipped.subwords.text(shipped.subwords.pieces(line.parts[0].ids)) == read


def test_an_amount_in_millions_written_with_its_sign_comes_out_in_words(shipped):
    t = shipped.translate("Le budget est de 3,5 M€.")
    assert t.text == "The budget is 3.5 million euros." and "▁M€" in t.src_tokens  # as given
    t = shipped.translate("Le projet a coûté 12 M$ en 2023.")
    assert len(t.word_attention.src) - 1 == 8 and "▁M$" in t.src_tokens  # one word, as given
    assert shipped.translate("Il a levé 850 k€.").text == "He raised 850 thousand euros."
    capitals = shipped.translate("LE BUDGET EST DE 3,5 M€.").text  # read "3,5 m€": "3.5 MOLD"
    assert capitals == "THE BUDGET IS 3.5 MILLION EUROS."


def test_a_price_by_the_unit_keeps_its_unit(shipped):
    # read as a path: "9.99 /mois eurosLRL", "0.25 eurosLRL /kWh", "€2 /h"
    assert shipped.translate("Le forfait coûte 9,99 €/mois.").text.endswith("€9.99 per month.")
    t = shipped.translate("Le tarif est de 0,25 €/kWh.")
    assert t.text.endswith(" €0.25/kWh.") and "▁€/kWh" in t.src_tokens
    assert t.word_attention.tgt[:-1] == t.text.split()  # the pieces say so too
    assert shipped.translate("Le parking coûte 2 €/h.").text.endswith(" €2/h.")


def test_a_document_s_tags_stay_on_the_words_of_amounts_and_degrees(shipped):
    page = "<p>Le prix : 3 € le <b>kilo</b>, pas plus.</p>"  # was "€3 <b>the</b> kilo"
    assert "€3 the <b>kilo</b>" in shipped.translate_document(page, format="html")
    t = shipped.translate("Le prix : 3 € le kilo.")
    assert "▁€" in t.src_tokens and "▁€3" in t.tgt_tokens  # the sign, as given, on both sides
    page = "Le billet coûte **16 €** pour les adultes, [20 °C](https://m.fr) ici."
    done = shipped.translate_document(page, format="markdown")  # was "€**16 for** adults"
    assert "**€16**" in done and "[20 degrees Celsius](https://m.fr)" in done  # "Celsius" out
    assert "▁°C" in shipped.translate("Il fait 20 °C ici.").src_tokens  # one word, as given


def test_a_number_the_source_does_not_hold_is_left_as_the_model_wrote_it(shipped, model_writes):
    model_writes("It costs 2,5 dollars.")  # not a copy: the source says 3,5
    assert shipped.translate("Il coûte 3,5 dollars.").text == "It costs 2,5 dollars."


@dataclass(frozen=True)
class Shout:
    """A rule for the test: reads the line as it is, writes the translation in capitals."""

    name: str = "shout"
    did: str = "wrote it in capitals"

    @classmethod
    def of(cls, setting) -> Shout:
        return cls()

    def read(self, text: str) -> tuple[str, str]:
        return text, text.upper()

    def write(self, t: Translation, memo: str) -> Translation:
        return dataclasses.replace(t, text=t.text.upper())


@pytest.mark.parametrize(
    ("source", "translation"),
    [
        ("1999", "1999"),  # the model wrote "See."
        ("0,5", "0.5"),  # "Come on."
        ("12 000", "12,000"),
        ("8,97€", "€8.97"),  # "8, euros euros."
        ("4.5", "4.5"),  # a rating: "4.5."
        ("06 68 11 75 30", "06 68 11 75 30"),  # read as the stand-in URL
        ("2020-11-04", "2020-11-04"),  # "Is the 2020-14?"
        ("a) 1999", "a) 1999"),  # its marker set aside first (markers.py)
        ("B) 8,97€", "B) €8.97"),
        ("14:30", "14:30"),  # as "14h30" is read
        ("1/4 : 25 %", "1/4: 25%"),  # the percent sign as English writes it
    ],
)
def test_a_line_that_holds_no_word_is_copied_as_english_writes_it_not_translated(
    shipped, model_writes, source, translation
):
    model_writes("See.")  # whatever the search would write
    t = shipped.translate(source)
    assert t.text == translation and t.confidence > 0.99 and t.dropped == []
    assert t.model_tokens == ["</s>"] and "clean" in t.changed_by  # the search wrote nothing
    assert t.alignment and t.alternatives == []


def test_a_line_of_numbers_and_what_no_piece_holds_is_written_back_as_given(shipped):
    # read as "5<unk>", the search wrote "5,000." (a copy of what it read, "5")
    five = shipped.translate("5🍕")
    assert five.text == "5🍕" and not five.searched
    digits = shipped.translate("12 ٣٤")  # digits without a piece: copied as given, not searched
    assert digits.text == "12 ٣٤" and not digits.searched


def test_inspect_shows_no_steps_for_a_line_the_model_did_not_write(shipped):
    from seq2attn_cli.decoding.explain.inspection import inspect_sentence

    seen = inspect_sentence(shipped, "1999")
    assert seen.translation.text == "1999" and not seen.translation.searched
    assert seen.steps == [] and seen.diagnostics == {}


def test_a_sentence_of_numbers_in_a_line_is_copied_and_the_others_translated(shipped, model_writes):
    model_writes("I see.")
    t = shipped.translate("Je vois. 1999. Merci.")
    assert t.text == "I see. 1999. I see." and t.parts == 3
    assert t.score == pytest.approx(-0.5)  # the searched sentences' score: the copy took no step
    words = t.word_attention
    assert words.src[2] == words.tgt[2] == "1999." and (2, 2) in t.alignment  # attends to itself
    assert all(abs(sum(row) - 1) < 1e-6 for row in t.weights)


def test_a_line_of_numbers_is_copied_by_a_model_without_attention(shipped, monkeypatch):
    none = dataclasses.replace(shipped.config.model, attention="none")  # its one column
    monkeypatch.setattr(shipped, "config", dataclasses.replace(shipped.config, model=none))
    t = shipped.translate("1999")
    assert t.text == "1999" and not t.has_attention and len(t.weights) == len(t.tgt_tokens)
    assert all(list(row) == [1.0] for row in t.weights)


def test_a_new_rule_is_one_line_in_the_list(shipped, model_writes, monkeypatch):
    monkeypatch.setattr(pipeline, "RULES", (*RULES[:2], Shout, *RULES[2:]))  # after urls
    model_writes("Erdogan saw URL yesterday.")
    rules = Pipeline(setting=shipped.setting)
    (line,) = rules.read(["Erdoğan a vu www.example.com hier."])
    assert line.memos[2] == "ERDOĞAN A VU URL HIER."  # after urls read it
    monkeypatch.setattr(shipped, "rules", rules)
    t = shipped.translate("Erdoğan a vu www.example.com hier.")
    # written back last to first: letters, then shout, then urls (as given, not shouted)
    assert t.text == "ERDOĞAN SAW www.example.com YESTERDAY."
    assert t.changed_by == ["letters", "shout", "urls"]
    assert rules.said(t.changed_by)[1] == "wrote it in capitals"
