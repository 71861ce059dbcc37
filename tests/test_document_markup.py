"""Markup a document's words come with and that must come out as markup: emphasis the
translation left with no word, GitHub's task boxes and footnotes, front matter, escaped pipes
in a table, and subtitle position tags."""

from __future__ import annotations

from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from seq2attn_cli.decoding.translator import Translator

RENDER = MarkdownIt("commonmark").enable(["table", "strikethrough"]).render


@pytest.fixture(scope="module")
def tiny(tiny_model: Path) -> Translator:
    return Translator.load(tiny_model)


def test_emphasis_left_with_no_word_prints_no_stray_asterisks(shipped):
    # the model merges *italique*'s word into **gras**'s: the em has no word of its own
    for source, expected, html in [
        ("Un mot en **gras** et *italique*.\n", "A motorcyclist is **climbing** up.\n",
         "<p>A motorcyclist is <strong>climbing</strong> up.</p>\n"),
        ("* Deuxième élément avec **gras** et *italique*\n",
         "* Two fourth elements with **grassticks**\n",
         "<ul>\n<li>Two fourth elements with <strong>grassticks</strong></li>\n</ul>\n"),
    ]:  # fmt: skip
        out = shipped.translate_document(source, format="markdown")
        assert out == expected and RENDER(out) == html


def test_a_paragraph_written_over_two_lines_comes_out_over_two_lines(tiny):
    for source, expected in [
        ("je mange pain\nil voit chat\n", "I eats bread\nhe sees cat\n"),
        ("> je mange pain\n> il voit chat\n", "> I eats bread\n> he sees cat\n"),
        ("- je mange pain\n  il voit chat\n", "- I eats bread\n  he sees cat\n"),
        ("je mange pain\r\nil voit chat\r\n", "I eats bread\r\nhe sees cat\r\n"),  # as given
    ]:
        assert tiny.translate_document(source, format="markdown", beam=1) == expected


def test_an_html_paragraph_written_over_two_lines_comes_out_over_two_lines(tiny):
    for source, expected in [
        ("<p>je mange pain\nil voit chat</p>\n", "<p>I eats bread\nhe sees cat</p>\n"),
        ("<li>\n  je mange pain\n  il voit chat\n</li>",
         "<li>\n  I eats bread\n  he sees cat\n</li>"),
        ("<p>je mange pain<br>\nil voit chat</p>", "<p>I eats bread<br>\nhe sees cat</p>"),
        # no space before a line break that follows another break, or markup and its space
        ("<p>je mange pain\n<br>\nil voit chat</p>", "<p>I eats bread\n<br>\nhe sees cat</p>"),
        ("<p>je mange <img src=x>\nil voit chat</p>", "<p>I eats <img src=x>\nhe sees cat</p>"),
    ]:  # fmt: skip
        assert tiny.translate_document(source, format="html", beam=1) == expected


def test_markup_that_starts_the_line_after_a_break_is_kept(shipped):
    for source, expected, format in [
        ("<p>Je mange du pain.<br>\n<img src=x> Il voit le chat.</p>",
         "<p>I eat bread.<br>\n<img src=x> He sees the cat.</p>", "html"),
        ("Je mange du pain.  \n![](x.png) Il voit le chat.\n",
         "I eat bread.  \n![](x.png) He sees the cat.\n", "markdown"),
    ]:  # fmt: skip
        assert shipped.translate_document(source, format=format) == expected


def test_inline_code_is_read_as_a_word_in_its_place(shipped):
    # left out of what the model read, it went after the word aligned to the one before it:
    # "According `cd /tmp` to the government, the government will...", "(b`git pull`)"
    for source, expected, format in [
        ("Selon `cd /tmp`, le gouvernement va annoncer de nouvelles mesures.\n",
         "According to `cd /tmp`, the government will announce new measures.\n", "markdown"),
        ("<p>La documentation (<code>git pull</code>) explique comment installer le module.</p>",
         "<p>The documentation (<code>git pull</code>) explains how to install the module.</p>",
         "html"),
    ]:  # fmt: skip
        assert shipped.translate_document(source, format=format) == expected


def test_a_link_left_with_no_word_keeps_its_url_as_its_text(shipped):
    out = shipped.translate_document(
        "Un mot en **gras** et [italique](http://x.y/été).\n", format="markdown"
    )
    assert out == "A motorcyclist is **climbing** [http://x.y/été](http://x.y/été) up.\n"
    assert '<a href="http://x.y/%C3%A9t%C3%A9">http://x.y/été</a> up.' in RENDER(out)


def test_a_markdown_task_list_keeps_its_boxes(shipped):
    tasks = "- [ ] Acheter du pain\n- [x] Appeler maman\n1. [ ] Arroser les plantes **le soir**.\n"
    out = shipped.translate_document(tasks, format="markdown")
    assert out == (
        "- [ ] Bring some bread\n- [x] Call myman\n1. [ ] Water the plants **at night**.\n"
    )
    # GitHub reads a box where a list item's text starts with "[ ] " or "[x] "
    assert RENDER(out).count("<li>[ ] ") == 2 and "<li>[x] Call" in RENDER(out)


def test_markdown_footnotes_keep_their_references_and_labels(shipped):
    notes = "Une note[^1] et une autre[^deux].\n\n[^1]: La note est ici.\n[^deux]: Le chat dort.\n"
    out = shipped.translate_document(notes, format="markdown")
    assert out == (
        "A note[^1] and another[^deux].\n\n[^1]: The bill is here.\n[^deux]: The cat sleeps.\n"
    )


def test_a_footnote_that_reads_as_a_link_definition_is_still_translated(tiny):
    notes = 'il voit chat[^a]\n\n[^a]: je mange "pain"\n'  # a link definition's shape
    out = tiny.translate_document(notes, format="markdown", beam=1)
    assert out.startswith("he sees cat[^a]\n\n[^a]: I eats bread")


def test_markdown_front_matter_is_kept_as_it_was(tiny):
    front = "---\ntitle: je mange pain\ntags: [chat]\n---\n"
    out = tiny.translate_document(front + "\nil voit chat\n\n---\n", format="markdown", beam=1)
    assert out == front + "\nhe sees cat\n\n---\n"
    rule = "---\n\nil voit chat\n"  # a blank line after it: a thematic break, then text
    assert tiny.translate_document(rule, format="markdown", beam=1) == "---\n\nhe sees cat\n"
    bom = "\ufeff" + front + "il voit chat\n"  # saved by a Windows editor
    assert tiny.translate_document(bom, format="markdown", beam=1) == "\ufeff" + front + (
        "he sees cat\n"
    )
    toml = '+++\ntitle = "je mange pain"\nlang = "fr"\n+++\n'  # Hugo's: its keys were translated
    out = tiny.translate_document(toml + "\nil voit chat\n", format="markdown", beam=1)
    assert out == toml.replace('"fr"', '"en"') + "\nhe sees cat\n"
    heading = "---\n# il voit chat\n\nje mange pain\n\n---\n"  # a rule, then a heading
    out = tiny.translate_document(heading, format="markdown", beam=1)
    assert "he sees cat" in out and "I eats bread" in out


def test_a_definition_list_keeps_each_mark_at_its_line_s_start(tiny):
    terms = "il voit chat\n: je mange pain\n:   elle aime eau\n"  # pandoc's
    out = tiny.translate_document(terms, format="markdown", beam=1)  # the ":" had moved up a line
    assert out == "he sees cat\n: I eats bread\n:   she loves water\n"
    code = "il voit `chat\n: pain` eau\nje mange\n"  # a ": " inside code: no mark
    out = tiny.translate_document(code, format="markdown", beam=1)
    assert "`chat\n: pain`" in out and "\n: " not in out.replace("`chat\n: pain`", ""), out


def test_a_readme_s_html_blocks_are_translated_as_a_page_s(tiny):
    readme = (
        '<p align="center">\n  je mange pain <img src="a.png" alt="il voit chat">\n</p>\n\n'
        "<details>\n<summary>je mange</summary>\n\nil voit chat\n\n</details>\n"
        "<!-- je mange -->\n\n- <b>je</b> mange\n"
    )  # kept as given: the summary and the alt text were left in French
    out = tiny.translate_document(readme, format="markdown", beam=1)
    assert out == (
        '<p align="center">\n  I eats bread <img src="a.png" alt="he sees cat">\n</p>\n\n'
        "<details>\n<summary>I eats</summary>\n\nhe sees cat\n\n</details>\n"
        "<!-- je mange -->\n\n- <b>I</b> eats\n"
    )
    for kept in (  # written for a Markdown renderer, or opened by an inline tag: as given
        "<div>\nje mange [pain](https://x.fr) et `make test`.\n</div>\n",
        "<div>\n- je mange\n- il voit chat\n</div>\n",
        '<a href="https://x.fr">\n    je mange pain\n</a>\n',  # its spaces moved: a code block
    ):
        assert tiny.translate_document(kept, format="markdown", beam=1) == kept


def test_a_github_alert_keeps_its_mark(tiny):
    alert = "> [!WARNING]\r\n> je mange pain\r\n\n> [!NOTE]\n"  # translated: "> \[WARNINGC"
    out = tiny.translate_document(alert, format="markdown", beam=1)
    assert out == "> [!WARNING]\r\n> I eats bread\r\n\n> [!NOTE]\n"


def test_a_link_whose_text_starts_with_a_caret_is_a_link_not_a_footnote(tiny):
    out = tiny.translate_document("il voit [^chat](#top)\n", format="markdown", beam=1)
    assert "](#top)" in out and "[^chat]" not in out


def test_a_table_cell_with_an_escaped_pipe_is_translated_on_each_side(shipped):
    table = "| Chat | Rat |\n|------|-----|\n| Le chat \\| le rat | `a \\| b` |\n"
    out = shipped.translate_document(table, format="markdown")
    assert out == "| Check out | Go away |\n|------|-----|\n| The cat \\| The rat | `a \\| b` |\n"
    assert "<td>The cat | The rat</td>\n<td><code>a | b</code></td>" in RENDER(out)


def test_a_heading_or_cell_ends_with_no_mark_its_source_has_not(shipped):
    out = shipped.translate_document(
        "## Horaires\n\n| Plat |\n|---|\n| Soupe |\n", format="markdown"
    )
    assert out == "## Horary\n\n| Plats |\n|---|\n| See |\n"  # was "Horary!", "Plats!"
    out = shipped.translate_document(
        "# Projet Jardin 🌱\n\n| Description |\n|---|\n", format="markdown"
    )
    # the model reads "Projet Jardin" (edges.py): "Promise"; read with "URL", "Project"
    assert out == "# Promise Jardin 🌱\n\n| Degetment |\n|---|\n"  # "🌱.", "Degetment?"


def test_subtitle_position_tags_are_kept_and_the_words_around_them_translated(shipped):
    cues = (
        "1\n00:00:01,000 --> 00:00:02,000\n{\\an8}En haut de l'écran.\n\n"
        "2\n00:00:03,000 --> 00:00:04,000\n{\\an8}- Le chat dort.\n- Le chien mange.\n\n"
        "3\n00:00:05,000 --> 00:00:06,000\n{\\i1}Bonjour{\\i0} mon ami.\n"
    )
    assert shipped.translate_document(cues, format="srt") == (
        "1\n00:00:01,000 --> 00:00:02,000\n{\\an8}In the top of the screen.\n\n"
        "2\n00:00:03,000 --> 00:00:04,000\n{\\an8}- The cat sleeps.\n- The dog eats.\n\n"
        "3\n00:00:05,000 --> 00:00:06,000\n{\\i1}Good morning{\\i0} is my friend.\n"
    )


def test_inline_html_in_markdown_follows_its_words_as_in_a_page(shipped):
    # read as loose markup: "Good morning, <b> the world</b>.", "<span class="x"></span>"
    for line in [
        "Bonjour, <b>le monde</b>.",
        'Il fait <em>très</em> beau <span class="x">ici</span>.',
    ]:
        page = shipped.translate_document(f"<p>{line}</p>", format="html")
        assert shipped.translate_document(line, format="markdown") == page[3:-4]
    notes = shipped.translate_document("Appuyez sur <kbd>Entrée</kbd> ici.", format="markdown")
    assert "<kbd>Entrée</kbd>" in notes  # kept character for character, as in a page


def test_keys_joined_by_a_plus_stay_one_combination(shipped):
    # each placed apart, the "+" was lost and the keys swapped: "Call up<kbd>C</kbd> to <kbd>Ctrl"
    line = "Appuyez sur <kbd>Ctrl</kbd>+<kbd>C</kbd> pour copier."
    for format, text in [("html", f"<p>{line}</p>"), ("markdown", line)]:
        assert "<kbd>Ctrl</kbd>+<kbd>C</kbd> " in shipped.translate_document(text, format=format)
    assert "`a`/`b`" in shipped.translate_document("Tapez `a`/`b` puis `c`.", format="markdown")


def test_a_kept_element_in_markdown_is_its_source_character_for_character(shipped):
    notes = "Tapez <kbd>&amp; et \\* et [lien](http://x.org)</kbd> ici.\n\n"
    notes += "> Tapez <kbd>a\n> b</kbd> ici.\n"
    out = shipped.translate_document(notes, format="markdown")
    assert "<kbd>&amp; et \\* et [lien](http://x.org)</kbd>" in out  # not rebuilt from tokens
    assert "<kbd>a\n> b</kbd>" in out  # its line break as the quote writes it


def test_an_empty_element_marked_notranslate_keeps_the_rest_of_the_page_translated(shipped):
    page = (
        '<p>Entrez <input class="notranslate" placeholder="Votre nom"> ici.</p><p>Le chat dort.</p>'
    )
    out = shipped.translate_document(page, format="html")  # it had kept all after it as given
    assert out.endswith("<p>The cat sleeps.</p>") and 'placeholder="Votre nom"' in out
    notes = shipped.translate_document(page.replace("</p><p>", "\n\n")[3:-4], format="markdown")
    assert notes.endswith("The cat sleeps.")


def test_keys_joined_by_a_spaced_plus_and_a_meta_description_in_capitals(shipped):
    page = "<p>Appuyez sur <kbd>Ctrl</kbd> + <kbd>C</kbd> pour copier.</p>"
    assert "<kbd>Ctrl</kbd> + <kbd>C</kbd>" in shipped.translate_document(page, format="html")
    head = '<meta name="Description" content="Une page sur les chats."><metadata content="x">'
    out = shipped.translate_document(head, format="html")
    assert 'content="A page on cats."' in out and '<metadata content="x">' in out
