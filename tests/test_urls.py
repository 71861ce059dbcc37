"""URLs and e-mail addresses come out exactly as given, where they belong in the sentence: in
line mode, documents, the server and the Python API (decoding/rules/urls.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from seq2attn_cli.cli.app import app
from seq2attn_cli.decoding.rules.edges import peeled
from seq2attn_cli.decoding.rules.stand_ins import put_back
from seq2attn_cli.decoding.rules.urls import stand_in_urls
from seq2attn_cli.decoding.search.hypothesis import Hypothesis
from seq2attn_cli.decoding.translator import Translator

URL = "https://www.example.com/page_1.html?a=1&b=2"
MAIL = "marie.dupont@example.fr"


@pytest.fixture(scope="module")
def tiny(tiny_model: Path) -> Translator:
    return Translator.load(tiny_model)


def s2a(*args: str, stdin: str = "") -> object:
    """`s2a translate ARGS` run in this process."""
    return CliRunner().invoke(app, ["translate", *args], input=stdin)


@pytest.mark.parametrize(
    "line, read, kept",
    [
        ("voir https://x.fr/a.", "voir URL.", ("https://x.fr/a",)),
        ("(voir https://x.fr/a)", "(voir URL)", ("https://x.fr/a",)),
        ("voir wiki/Paris_(France) ou https://fr.wikipedia.org/wiki/Paris_(France).",
         "voir wiki/Paris_(France) ou URL.", ("https://fr.wikipedia.org/wiki/Paris_(France)",)),
        (f"écrivez à {MAIL}, merci", "écrivez à URL, merci", (MAIL,)),
        ("www.example.org/a?b=1 !", "URL !", ("www.example.org/a?b=1",)),
        ("l'URL https://x.fr/a", "l'URL URL", (None, "https://x.fr/a")),  # the word itself
        ("3.14 à M.Dupont, a@b et www.", "3.14 à M.Dupont, a@b et www.", ()),
        ("voir service-public.fr.", "voir URL.", ("service-public.fr",)),
        ("sur Amazon.com/fr/livres, ou", "sur URL, ou", ("Amazon.com/fr/livres",)),
        ("fin du point.De plus, point.Com, 3.fr et le.fr@x.org", "fin du point.De plus, point.Com, "
         "3.fr et URL", ("le.fr@x.org",)),
    ],
)  # fmt: skip
def test_a_url_is_read_without_the_punctuation_after_it(line, read, kept):
    assert stand_in_urls(line).text == read and stand_in_urls(line).kept == kept
    assert put_back(read, stand_in_urls(line)) == line  # copied word for word, it is the line again


def test_a_url_comes_out_as_given_in_line_mode(tiny_model):
    args = s2a("--model", str(tiny_model), "--beam", "1", f"je mange {URL} pain")
    assert args.exit_code == 0 and args.stderr == ""  # no warning for its characters
    # the tiny model knows no word URL: the URL follows the word attending most to it
    assert args.stdout.count(URL) == 1 and args.stdout.startswith("I eats")
    piped = s2a("--model", str(tiny_model), stdin=f"il voit chat\nelle aime {MAIL}\n")
    assert piped.exit_code == 0 and piped.stderr == ""
    first, second = piped.stdout.splitlines()
    assert MAIL not in first and second.count(MAIL) == 1 and second.startswith("she")


def test_the_url_goes_where_the_model_writes_its_stand_in(shipped, model_writes):
    model_writes("See URL for details.")
    t = shipped.translate(f"Voir {URL} pour les détails.")
    assert t.text == f"See {URL} for details."
    assert t.source == f"Voir {URL} pour les détails."


def test_a_url_the_model_lost_follows_the_word_attending_to_it_and_aligns_with_itself(
    shipped, model_writes
):
    model_writes("See for details.")  # attention spread evenly: the first word attends most
    t = shipped.translate(f"Voir {URL} pour les détails.")
    assert t.text == f"See {URL} for details."
    _, target_words, _ = t.word_attention
    assert len(target_words) - 1 == len(t.text.split())  # the tokens' words are the text's
    assert (1, 1) in t.alignment and "URL" not in t.dropped
    page = f'<p>Voir <b class="u">{URL.replace("&", "&amp;")}</b> pour les détails.</p>'
    assert shipped.translate_document(page, format="html") == (
        f'<p>See <b class="u">{URL.replace("&", "&amp;")}</b> for details.</p>'
    )


def test_a_url_is_written_once_even_when_the_model_writes_its_stand_in_twice(shipped, model_writes):
    model_writes("Write to URL or go on URL URL's for more information.")
    t = shipped.translate(f"Écrivez à {MAIL} ou allez sur service-public.fr pour plus d'infos.")
    # attention spread evenly: each URL takes the first stand-in left, the extra one goes
    assert t.text == f"Write to {MAIL} or go on service-public.fr for more information."
    _, target_words, _ = t.word_attention
    assert len(target_words) - 1 == len(t.text.split())  # the tokens' words are the text's
    model_writes("See URL for URL.")
    assert shipped.translate(f"Voir {URL}.").text == f"See {URL} for."  # its full stop kept
    model_writes("See URL/URL.")  # one word, more stand-ins than URLs: out with what joins them
    assert shipped.translate(f"Voir {URL}.").text == f"See {URL}."


def test_a_garbled_stand_in_is_written_as_the_url_not_beside_it(shipped, model_writes):
    model_writes("Seen (RLL).")  # pieces of the word URL, attending to it
    t = shipped.translate("Voir (https://ex.com/a?b=1).")
    assert t.text == "Seen (https://ex.com/a?b=1)."
    model_writes("See URLs.")
    assert shipped.translate(f"Voir {URL}.").text == f"See {URL}."
    model_writes("Seen U.RL.")  # a mark inside it: the whole word, not "https://ex.com.RL."
    assert shipped.translate(f"Voir {URL}.").text == f"Seen {URL}."


def test_urls_and_addresses_with_the_shipped_model_come_out_once_each(shipped):
    lines = [
        f"Écrivez à {MAIL} si vous avez des questions.",
        "Le formulaire est disponible sur https://impots.gouv.fr/formulaires.",
        # the model writes its stand-in once too often ("URL's"), and garbles one ("RLL")
        f"Écrivez à {MAIL} ou allez sur service-public.fr pour plus d'informations.",
        "Voir (https://ex.com/a?b=1).",
    ]
    assert [t.text for t in shipped.translate(lines)] == [
        f"Write to {MAIL} if you have questions.",
        "The form is available on https://impots.gouv.fr/formulaires.",
        f"Write to {MAIL} or go on service-public.fr and the more information.",
        "Seen (https://ex.com/a?b=1).",
    ]
    page = f"<p>Écrivez à <b>{MAIL}</b> si vous avez des questions.</p>"
    assert shipped.translate_document(page, format="html") == (
        f"<p>Write to <b>{MAIL}</b> if you have questions.</p>"
    )


def test_documents_keep_urls_as_written(tiny):
    page = tiny.translate_document(
        f"<p>je mange {URL.replace('&', '&amp;')} pain</p><p>il voit <i>{MAIL}</i></p>",
        format="html",
        beam=1,
    )
    assert URL.replace("&", "&amp;") in page and MAIL in page
    notes = tiny.translate_document(f"je mange {URL} pain\n", format="markdown", beam=1)
    assert URL in notes  # its _ not escaped
    for notes in ("je mange @jean_dupont pain\n", "je mange **@jean_dupont** pain\n"):
        said = tiny.translate_document(notes, format="markdown", beam=1)
        assert "@jean_dupont" in said, said  # its marks apart from its core: "@jean\\_dupont"
    cue = f"1\n00:00:01,000 --> 00:00:02,000\nelle aime {MAIL}\n"
    assert MAIL in tiny.translate_document(cue, format="srt", beam=1)
    assert URL in tiny.translate_document(f"je mange {URL}\n", format="text", beam=1)


def test_the_server_keeps_urls_as_given(tiny):
    from test_server import client_for

    with client_for(tiny) as client:
        for form in ("text", "html"):
            asked = {"q": f"je mange {URL} pain", "source": "fr", "target": "en", "format": form}
            answer = client.post("/translate", json=asked).json()
            want = URL if form == "text" else URL.replace("&", "&amp;")
            assert want in answer["translatedText"] and "URL" not in answer["dropped"]


def test_jsonl_and_alignments_count_a_url_as_one_word(tiny_model):
    line = f"je mange {URL} pain"
    result = s2a("--model", str(tiny_model), "--format", "jsonl", "--align", line)
    record = json.loads(result.stdout)
    assert record["source"] == line and URL in record["translation"]
    assert "URL" not in record["dropped"]
    for pair in record["alignment"].split():
        i, j = map(int, pair.split("-"))
        assert i < len(line.split()) and j < len(record["translation"].split())


@pytest.mark.parametrize(
    "line, kept",
    [
        ("Bonjour %s, vous avez %d messages.", ("%s", "%d")),
        ("Le fichier %(path)s pèse %.1f Mo.", ("%(path)s", "%.1f")),
        ("Bienvenue {name} ! Voir {} et {{ user.name }}.", ("{name}", "{}", "{{ user.name }}")),
        ("La variable ${HOME} vaut $HOME.", ("${HOME}", "$HOME")),
        ("Contactez #PRS_ORG# demain.", ("#PRS_ORG#",)),
        ("Voir le § 3 et les §§ 3.2.", ("§ 3", "§§ 3.2")),  # read alone, the number was lost
        ("Appelez le 01 23 45 67 89 ou le +33 1 23 45 67 89.",  # "Call up 23 45 67 89."
         ("01 23 45 67 89", "+33 1 23 45 67 89")),
        ("Il a gagné 1 000 000 euros en 2019, 2020 et 2021.", ()),  # amounts and years
        ("Merci @jean_dupont ! #vacances #plage", ("@jean_dupont", "#vacances", "#plage")),
        ("Écrivez à a.b@c.fr, #PRS_ORG# ou R&#D.", ("a.b@c.fr", "#PRS_ORG#")),
        ("50 % d'entre eux, 20 %, 5 $ et #1 #2.", ()),  # a percentage, a price, numbers
        ("Le titre {#ancre} et {.note}.", ("{#ancre}", "{.note}")),  # Pandoc's attributes
        ("Ouvrez /etc/hosts, ~/notes.txt ou ./run.sh.", ("/etc/hosts", "~/notes.txt", "./run.sh")),
        ("Voir /r/france (/u/jean_dupont). Génial /s", ("/r/france", "/u/jean_dupont", "/s")),
        ("Et/ou 50 km/h, +/- 1/2, le 14/07/2001, a / b, </b>.", ("km/h",)),  # a unit, no path
        ("Ajoutez 200 g de farine, 45 m² et 3 kWh.", ("g", "m²", "kWh")),  # units, after a number
        # keyboard shortcuts, their French key names in English ("Press Ctrlol Catrlify.")
        ("Appuyez sur Ctrl+C puis ⌘ + V.", ("Ctrl+C", "⌘ + V")),
        ("Utilisez Maj+F10, CTRL + MAJ + D ou Ctrl+Alt+Suppr.",
         ("Shift+F10", "CTRL + SHIFT + D", "Ctrl+Alt+Del")),
        ("Alt + Impr écran, Ctrl + clic, Ctrl+Fin.", ("Alt + Print Screen", "Ctrl + click",
                                                     "Ctrl+End")),
        ("Maj, Alt et Fin ; 3 + 4 ; Ctrl++ ; la touche Maj enfoncée.", ()),  # no shortcut
        ("Le plan B, 3 M, 5 min, 2 gros, 9,99 €/mois.", ()),  # no unit's symbol
        ("Vendu 200 l'an dernier, les 2 m'ont aidé.", ()),  # an elision: "I took 200 l"
    ],
)  # fmt: skip
def test_a_placeholder_section_or_telephone_number_is_read_as_a_url(line, kept):
    assert stand_in_urls(line).kept == kept


def test_a_stand_in_of_several_words_is_as_many_words_in_alignments_and_documents(shipped):
    t = shipped.translate("Appelez le 01 23 45 67 89 pour plus d'informations.")
    assert "01 23 45 67 89" in t.text
    assert len(t.word_attention.src) - 1 == len(t.source.split())  # both sides, as written
    assert len(t.word_attention.tgt) - 1 == len(t.text.split())
    page = "<p>Voir le § 3 du <i>contrat</i> signé.</p>"  # the tag was one word early
    assert "<i>contract</i>" in shipped.translate_document(page, format="html")
    # a tag around one: the number's other words had no attention and went to the first word
    # ('<a href="tel:...">Contact</a> our team in 01 23 45 67 89.', "<b>Call the +33 1 ...</b>")
    page = '<p>Contactez-nous au <a href="tel:+33123456789">01 23 45 67 89</a>.</p>'
    assert '<a href="tel:+33123456789">01 23 45 67 89</a>.</p>' in shipped.translate_document(
        page, format="html"
    )
    notes = "Appelez le **+33 1 23 45 67 89** dès demain.\n"
    assert "**+33 1 23 45 67 89**" in shipped.translate_document(notes, format="markdown")


def test_a_keyboard_shortcut_comes_out_whole_and_in_english_with_the_shipped_model(shipped):
    # the model alone wrote "Use MajumF is10 or Altify4." and "Press Ctrlol Catrlify."
    assert "Shift+F10 or Alt+F4" in shipped.translate("Utilisez Maj+F10 ou Alt+F4.").text
    said = shipped.translate("Appuyez sur Ctrl+C puis Ctrl+V.")
    assert "Ctrl+C" in said.text and "Ctrl+V" in said.text and not said.dropped
    page = "<p>Appuyez sur <kbd>Ctrl</kbd>+<kbd>C</kbd> puis <b>Maj+Suppr</b>.</p>"
    assert "<kbd>Ctrl</kbd>+<kbd>C</kbd> and <b>Shift+Del</b>.</p>" in shipped.translate_document(
        page, format="html"
    )


def test_a_unit_s_symbol_comes_out_as_given_with_the_shipped_model(shipped):
    # the model alone wrote "The volume is 33.", "45 mold", "He's 1.8 kg." and "58.2 kmber"
    assert "3 m³" in shipped.translate("Le volume est de 3 m³.").text
    assert "45 m²" in shipped.translate("L'appartement fait 45 m².").text
    assert "1.85 m and weighs 78 kg" in shipped.translate("Il mesure 1,85 m et pèse 78 kg.").text


def test_a_path_comes_out_as_given_with_the_shipped_model(shipped):
    # the model alone wrote "Open up the file/hosts." and "Seeing/or/france and/ack/jedupont."
    assert shipped.translate("Ouvrez le fichier /etc/hosts.").text == "Open the /etc/hosts file."
    assert "/r/france" in shipped.translate("Voir /r/france et /u/jean_dupont.").text


def test_a_program_s_placeholders_come_out_as_given_with_the_shipped_model(shipped):
    # the model alone wrote "Welcome to a lot." and "Contact EPRICORGG for help."
    lines = ["Bienvenue {name} !", "Contactez #PRS_ORG# pour de l'aide.", "Bonjour %s."]
    assert [t.text for t in shipped.translate(lines)] == [
        "Welcome to {name}!", "Contact #PRS_ORG# for help.", "Good morning, %s."
    ]  # fmt: skip


def test_a_placeholder_the_model_lost_goes_after_a_word_not_into_another(shipped, monkeypatch):
    sub, text = shipped.subwords, "Third URL, your order is ready."  # "%s" left out
    indices = [shipped.output_index[i] for i in sub.encode([text])[0]]
    written = sub.pieces(sub.encode([text])[0]).index("▁U")  # "▁U R L"

    def search(model, src_ids, **_) -> list[Hypothesis]:  # "URL," attends to "%s" alone
        read = sub.pieces(list(src_ids[0]))
        last = len(read) - 1 - read[::-1].index("▁U")
        rows = [[1 / (len(read) + 1)] * (len(read) + 1) for _ in range(len(indices) + 1)]
        for at in range(written, written + 3):
            rows[at] = [float(k == last) for k in range(len(read) + 1)]
        return [Hypothesis(indices=indices, score=-0.5, weights=rows)]

    monkeypatch.setattr("seq2attn_cli.decoding.translator.translate_ids", search)
    t = shipped.translate("Bonjour {name}, votre commande n° %s est prête.")
    assert t.text == "Third {name} %s, your order is ready."  # was "Third {name %s}, ..."


def test_an_emoji_apart_from_the_words_comes_out_as_given_where_the_model_puts_it(shipped):
    # read as <unk>, the model made words up: "I like the clock and the clock."
    assert shipped.translate("J'aime les 🍕 et les 🍔.").text == "I like 🍕 and 🍔."
    assert shipped.translate("C'est 👍🏽 !").text == "It's 👍🏽!"  # a skin tone stays on its hand
    assert shipped.unreadable("J'aime les 🍕 et les 🍔.") == []  # nothing to warn about
    alone = shipped.translate("🍕 🍕")  # nothing else to read: written back, not translated
    assert alone.text == "🍕 🍕" and alone.confidence == 0.0
    family = shipped.translate("La famille 👨‍👩‍👧 est là.")  # the joiners kept: one emoji
    assert "👨‍👩‍👧" in family.text and "👨 " not in family.text
    scotland = "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"
    for line in (f"Vive l'Écosse {scotland} !", f"J'adore l'Écosse{scotland}."):  # spaced, glued
        flag = shipped.translate(line)  # its tags as spaces: the flag came out plain black
        assert scotland in flag.text and shipped.unreadable(line) == [], flag.text
    keycap = stand_in_urls("Étape 1️⃣ : ouvrez 2️⃣3️⃣.", shipped.subwords.knows)
    assert keycap.kept == ("1️⃣", "2️⃣3️⃣")  # its digit with it: "Pression ⃣" was written
    got = CliRunner().invoke(app, ["translate", "Le 🍰 est prêt."])
    assert got.stdout == "The 🍰 is ready.\n" and got.stderr == ""


@pytest.mark.parametrize(
    "read, kept, peeled_as",
    [
        ("URL Attention : route barrée.", ("⚠️",), ("Attention : route barrée.", 1, 0)),
        ("Merci pour tout URL", ("❤️",), ("Merci pour tout", 0, 1)),
        ("URL URL Super URL", ("🔥", "🔥", "👍"), ("Super", 2, 1)),
        ("URL est en panne.", ("https://x.fr",), ("URL est en panne.", 0, 0)),  # a URL: read
        ("URL merci ! URL URL", ("@marie", "#vacances", "#Bretagne"), ("merci !", 1, 2)),
        ("J'adore la URL", ("#Bretagne",), ("J'adore la URL", 0, 0)),  # a noun: "I love here"
        ("J'aime les URL", ("🍕",), ("J'aime les URL", 0, 0)),
        ("URL et URL", ("🍕", "🍔"), ("et URL", 1, 0)),  # after "et": a noun
        ("URL URL", ("🍕", "🍔"), ("URL URL", 0, 0)),  # nothing else to read: as it was
    ],
)  # fmt: skip
def test_symbols_at_a_line_s_ends_are_taken_off_what_the_model_reads(read, kept, peeled_as):
    assert peeled(read, kept, "URL") == peeled_as


def test_symbols_at_a_line_s_ends_leave_its_words_to_the_model_and_come_back_around(shipped):
    # read as the word URL, they took words with it: "Thank you for all ❤️.", "It's 👍."
    t = shipped.translate("Merci pour tout ❤️")
    assert t.text == "Thanks for everything ❤️." and t.alignment[-1] == (3, 3)
    assert t.word_attention.tgt[:-1] == ["Thanks", "for", "everything", "URL."]  # its pieces
    assert all(a.endswith(" ❤️.") for a in t.alternatives)
    assert shipped.translate("C'est génial 👍").text == "That's awesome 👍."
    warning = shipped.translate("⚠️ Attention : route barrée jusqu'à lundi.").text
    assert warning.startswith("⚠️ ") and "URL" not in warning  # was "URLbention ⚠️: roads"
    got = CliRunner().invoke(app, ["translate", "--align", "🔥 Merci pour tout"])
    assert got.stdout == "🔥 Thanks for everything.\t0-0 1-1 2-2 3-3\n"


def test_an_icon_font_s_private_use_character_comes_out_as_given(shipped):
    # Font Awesome's user icon: read as a blank before, it was left out without a word
    said = shipped.translate("Cliquez sur l'icône \uf007 pour ouvrir votre profil.")
    assert said.text.count("\uf007") == 1 and not said.dropped


def test_no_possessive_is_left_after_a_span_that_ends_a_clause(shipped):
    # the model wrote "Press URL and URL's URL.": the stand-in once too often, then "'s"
    assert shipped.translate("Appuyez sur Ctrl+C puis Ctrl+V.").text.endswith("and Ctrl+V.")
