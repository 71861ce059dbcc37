"""Documents in, the same documents translated out: HTML pages, READMEs, subtitle files and
plain text keep their structure, their tags land on the translated words, and what must not
be translated (code, URLs, attributes, timings) comes out as it went in."""

from __future__ import annotations

import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from typer.testing import CliRunner

from seq2attn_cli.cli.app import app
from seq2attn_cli.decoding.explain.links import links
from seq2attn_cli.decoding.translator import Translator
from seq2attn_cli.documents import FORMATS, format_of, sentences_in, translated
from seq2attn_cli.errors import DocumentError

PAGE = """<!DOCTYPE html>
<html lang="fr">
<head><title>je mange pain</title><style>p { color: red; }</style></head>
<body>
<h1>il <b>voit</b> chat</h1>
<p>je <b>mange <i>pain</i></b> rouge</p>
<p>elle <a href="https://ex.com/?q=chat&amp;n=2" title="chien rouge">aime <em>eau</em></a></p>
<p>nous voit <code>pip install chat</code> maison<br>tu aime chien</p>
<table>
  <tr><th>chat</th><th>chien</th></tr>
  <tr><td>petit <b>chat</b></td><td>3 &amp; 4</td></tr>
</table>
<img src="chat.png" alt="grand chat">
<pre>je mange pain</pre>
<script>var s = "<b>je mange</b>";</script>
<p translate="no">je mange pain</p>
</body>
</html>
"""

README = """# nous **aime** chat

je mange _pain_ rouge\\
il voit [chien](https://ex.com/chien "chien")

- elle aime `eau` maison
- tu voit **grand chat**

| chat | chien |
|------|-------|
| petit *chat* | `x = 1` |

```python
print("je mange pain")
```
"""

SUBTITLES = """1
00:00:01,000 --> 00:00:03,500
je mange pain
il voit chat

2
00:00:04,000 --> 00:00:06,000
- tu aime chien
- nous aime <i>eau</i>

3
00:00:07,000 --> 00:00:09,000
elle voit <b>maison</b> rouge
"""


class Tags(HTMLParser):
    """The tags of a page in order, and whether each closes the one open before it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.open: list[str] = []
        self.mismatched = 0

    def handle_starttag(self, tag, attrs):
        self.tags.append(f"<{tag} {sorted(attrs)}>")
        if tag not in {"br", "img", "meta", "link", "hr", "input", "wbr"}:
            self.open.append(tag)

    def handle_endtag(self, tag):
        self.tags.append(f"</{tag}>")
        if not self.open or self.open.pop() != tag:
            self.mismatched += 1


def tags_of(page: str) -> Tags:
    parser = Tags()
    parser.feed(page)
    parser.close()
    return parser


@pytest.fixture(scope="module")
def tiny(tiny_model: Path) -> Translator:
    return Translator.load(tiny_model)


def test_formats_are_named_by_extension():
    assert FORMATS == ("text", "html", "markdown", "srt", "vtt")
    names = ["a.txt", "b.HTML", "c.htm", "d.md", "e.markdown", "f.srt", "g.VTT"]
    assert [format_of(n) for n in names] == [
        "text", "html", "html", "markdown", "markdown", "srt", "vtt"
    ]  # fmt: skip
    with pytest.raises(DocumentError, match="book.fr"):
        format_of("book.fr")


def test_a_page_keeps_every_tag_nested_and_translates_only_its_text(tiny):
    out = tiny.translate_document(PAGE, format="html", beam=1)
    source, target = tags_of(PAGE), tags_of(out)
    assert target.mismatched == 0 and not target.open
    # every tag once, attributes as they were but the translated alt and title, and the lang
    plain = [re.sub(r"\('(alt|title)', '[^']*'\)", "", t) for t in source.tags]
    plain = [t.replace("('lang', 'fr')", "('lang', 'en')") for t in plain]
    assert Counter(plain) == Counter(
        re.sub(r"\('(alt|title)', '[^']*'\)", "", t) for t in target.tags
    )
    assert 'href="https://ex.com/?q=chat&amp;n=2"' in out and 'title="dog red"' in out
    assert 'alt="big cat"' in out and "<title>I eats bread</title>" in out
    for kept in ("<pre>je mange pain</pre>", '<script>var s = "<b>je mange</b>";</script>',
                 "<code>pip install chat</code>", '<p translate="no">je mange pain</p>',
                 "p { color: red; }"):  # fmt: skip
        assert kept in out
    assert "<h1>he <b>sees</b> cat</h1>" in out
    assert "<td>small <b>cat</b></td>" in out and "<th>cat</th><th>dog</th>" in out
    assert "<p>I <b>eats <i>bread</i></b> red</p>" in out
    assert '">loves <em>water</em></a></p>' in out
    assert "house <code>pip install chat</code><br>you loves dog</p>" in out


def test_a_citation_mark_stays_whole_after_its_word(tiny):
    cited = '<p>je mange pain<sup><a href="#n1">[1]</a></sup><sup>[b]</sup> rouge</p>'
    out = tiny.translate_document(cited, format="html", beam=1)  # read as words: "bread1]"
    assert out == '<p>I eats bread<sup><a href="#n1">[1]</a></sup><sup>[b]</sup> red</p>'
    split = tiny.translate_document(
        "<p>je mange pain<sup>[<i>1</i>]</sup></p>", format="html", beam=1
    )
    assert split == "<p>I eats bread<sup>[<i>1</i>]</sup></p>"  # it crashed the document
    label = tiny.translate_document("<p><b>[pain]</b> je mange</p>", format="html", beam=1)
    assert "[pain]" not in label  # a label's word is no reference mark: translated


def test_a_readme_keeps_its_blocks_code_and_links(tiny):
    out = tiny.translate_document(README, format="markdown", beam=1)
    parse = MarkdownIt("commonmark").enable("table").parse
    assert [t.type for t in parse(out)] == [t.type for t in parse(README)]
    assert out.startswith("# we **loves** cat\n")
    assert '```python\nprint("je mange pain")\n```\n' in out
    assert 'I eats _bread_ red\\\nhe sees [dog](https://ex.com/chien "dog")\n' in out
    assert "- she loves house `eau`" in out and "- you sees **big cat**" in out
    assert "| small *cat* | `x = 1` |" in out and "|------|-------|" in out


def test_subtitles_keep_numbers_timings_and_lines(tiny):
    out = tiny.translate_document(SUBTITLES, format="srt", beam=1)
    cues = out.split("\n\n")
    assert len(cues) == 3
    assert cues[0] == "1\n00:00:01,000 --> 00:00:03,500\nI eats bread\nhe sees cat"
    assert cues[1].split("\n")[:2] == ["2", "00:00:04,000 --> 00:00:06,000"]
    assert [line[:2] for line in cues[1].split("\n")[2:]] == ["- ", "- "]
    assert "<i>water</i>" in cues[1] and "she sees <b>house</b> red" in cues[2]


WEB_SUBTITLES = """WEBVTT - un film

NOTE je mange pain: a note, not a cue

1
00:01.000 --> 00:03.500 align:start
je mange pain
il voit chat

00:00:04.000 --> 00:00:06.000
- tu aime chien
- nous aime <i>eau</i> &amp; pain

vu chat
"""


def test_web_subtitles_keep_their_header_notes_identifiers_timings_and_lines(tiny):
    out = tiny.translate_document(WEB_SUBTITLES, format="vtt", beam=1)
    blocks = out.split("\n\n")
    assert blocks[:2] == ["WEBVTT - un film", "NOTE je mange pain: a note, not a cue"]  # kept
    assert blocks[2] == "1\n00:01.000 --> 00:03.500 align:start\nI eats bread\nhe sees cat"
    assert blocks[3].split("\n")[0] == "00:00:04.000 --> 00:00:06.000"
    assert [line[:2] for line in blocks[3].split("\n")[1:]] == ["- ", "- "]
    assert "<i>water</i>" in blocks[3] and "&amp;" in blocks[3]  # escaped as HTML, as it came
    assert blocks[4] == "vu chat\n"  # no cue: as given, and named (below)


def test_web_subtitle_timestamps_and_spans_are_kept_as_written(tiny):
    cues = (
        "WEBVTT\n\n00:00.000 --> 00:02.000\nje mange<00:00.500> pain\n\n"
        "00:03.000 --> 00:05.000\n<v Marie>je mange <c.jaune>pain</c></v>\n\n"
        "NOTE 3\n00:06.000 --> 00:07.000\nil voit chat\n"  # a cue named NOTE 3, not a note
    )
    out = tiny.translate_document(cues, format="vtt", beam=1)
    assert out.count("<00:00.500>") == 1 and "&lt;" not in out  # it came out "&lt;:00.500"
    karaoke = (
        "WEBVTT\n\n00:03.500 --> 00:05.000\nBonjour à <00:03.800>tous et <00:04.200>à toutes.\n"
    )
    assert sentences_in(karaoke, format="vtt") == ["Bonjour à tous et à toutes."]  # was three
    assert "<v Marie>I eats <c.jaune>bread</c></v>" in out  # one sentence, its spans on words
    assert out.endswith("NOTE 3\n00:06.000 --> 00:07.000\nhe sees cat\n")
    last = tiny.translate_document(
        "WEBVTT\n\n00:00.000 --> 00:02.000\nje<00:00.500>mange\n", format="vtt", beam=1
    )
    assert (
        last.endswith("\n") and not last.endswith(" \n") and not last.endswith("\n ")
    )  # was "\n "


def test_a_web_subtitle_file_is_read_as_one_and_its_odd_block_named(tiny_model, tmp_path):
    (tmp_path / "film.vtt").write_text(WEB_SUBTITLES)
    result = s2a("--model", str(tiny_model), "--beam", "1", "-i", str(tmp_path / "film.vtt"))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("WEBVTT - un film\n")  # read line by line, it was translated
    warning = [line for line in result.stderr.splitlines() if "film.vtt" in line]
    assert len(warning) == 1 and "line 14: cue not read" in warning[0]
    (tmp_path / "not.vtt").write_text("je mange pain\n")
    refused = s2a("--model", str(tiny_model), "-i", str(tmp_path / "not.vtt"))
    assert refused.exit_code == 2 and "no WEBVTT line at the start" in refused.stderr


def test_plain_text_keeps_its_lines_and_translates_each_sentence(tiny):
    text = "je mange pain\n\n   elle aime eau\til voit chat\n"
    assert (
        tiny.translate_document(text, format="text", beam=1)
        == "I eats bread\n\n   she loves water\the sees cat\n"
    )


@pytest.mark.parametrize(
    "format, document, translation",
    [
        ("text", "je mange pain\n", "I eats bread\n"),
        ("markdown", "je mange pain\n", "I eats bread\n"),
        ("html", "<p>je mange pain</p>", "<p>I eats bread</p>"),
        ("srt", "1\n00:00:01,000 --> 00:00:02,000\nje mange pain\n", None),
        ("vtt", "WEBVTT\n\n00:01.000 --> 00:02.000\nje mange pain\n", None),
    ],
)
def test_a_document_s_byte_order_mark_starts_its_translation(tiny, format, document, translation):
    out = tiny.translate_document("\ufeff" + document, format=format, beam=1)
    plain = tiny.translate_document(document, format=format, beam=1)
    assert out == "\ufeff" + plain and plain == (translation or plain)  # Markdown's was lost
    assert "I eats bread" in plain


def test_sentences_of_a_line_are_translated_one_by_one(shipped):
    line = "Le chat dort. Il fait beau aujourd'hui !"
    one_by_one = [
        t.text for t in shipped.translate(["Le chat dort.", "Il fait beau aujourd'hui !"])
    ]
    assert shipped.translate_document(line + "\n", format="text") == " ".join(one_by_one) + "\n"


def test_words_and_tags_with_the_shipped_model(shipped):
    page = '<p>Le <b>chat</b> noir dort sur le <a href="/c">canapé</a>.</p>'
    assert shipped.translate_document(page, format="html") == (
        '<p>The black <b>cat</b> sleeps on the <a href="/c">couch</a>.</p>'
    )
    cue = "1\n00:00:09,000 --> 00:00:11,000\nLe <i>train</i> part\nà huit heures.\n"
    out = shipped.translate_document(cue, format="srt")
    assert out.startswith("1\n00:00:09,000 --> 00:00:11,000\nThe <i>train</i>")
    assert out.count("\n") == cue.count("\n")
    md = "Le **chien** mange du `pain` !\n"
    assert "The **dog** eats" in shipped.translate_document(md, format="markdown")


def test_a_tagged_noun_keeps_its_tag_and_the_article_it_brings_does_not_take_it(shipped):
    # issue #43: the step writing "a" attends to "étudiant" (0.94), more than "student" does
    page = "<p>Je suis <i>étudiant</i>.</p>\n<p>Elle est <b>médecin</b> à Lyon.</p>\n"
    result = s2a("--input-format", "html", stdin=page)  # the embedded model, beam 5
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (
        "<p>I'm a <i>student</i>.</p>\n<p>She is a <b>doctor</b> at Lyon.</p>\n"
    )
    assert shipped.translate_document(page, format="html") == result.stdout


def test_an_article_gives_way_to_the_noun_linked_to_the_same_word_but_keeps_its_own():
    # "Je suis étudiant." -> "I'm a student.": the embedded model's weights, rounded
    rows = [[0.16, 0.33, 0.08], [0.00, 0.04, 0.94], [0.04, 0.04, 0.65]]
    assert links(rows, ["I'm", "a", "student."]) == [[0], [0], [2]]
    # "le chat" -> "The cat": "The" is the only word linked to "le"
    assert links([[0.9, 0.1], [0.05, 0.95]], ["The", "cat"]) == [[0], [1]]


def test_an_article_wrapped_with_its_noun_in_french_stays_in_the_tag(shipped):
    for page, expected in [
        ("<p>J'ai vu <b>le chat</b> dans le jardin.</p>", "<b>the cat</b>"),
        ("<p>Je cherche <b>un appartement</b>.</p>", "<b>an apartment</b>"),
    ]:
        assert expected in shipped.translate_document(page, format="html")


# what a document holds that cannot be parsed is kept as it was, never dropped


def test_mismatched_unclosed_and_stray_tags_are_kept_as_they_were(tiny):
    for page in [
        "<p>je <b>mange <i>pain</b> rouge</i></p>",  # crossed
        "<p>je <b>mange pain",  # never closed
        "<p>je mange</b> pain</p>",  # closed, never opened
        "<p>chat < chien & eau <3 </p>",  # stray < and &
        "<p>il <x <b>voit</b> chat</p>",  # a broken tag
    ]:
        out = tiny.translate_document(page, format="html", beam=1)
        assert Counter(tags_of(out).tags) == Counter(tags_of(page).tags), (page, out)
    deep = "<p>" + "<b>" * 2000 + "je mange pain" + "</b>" * 2000 + "</p>"
    out = tiny.translate_document(deep, format="html", beam=1)
    assert out.count("<b>") == out.count("</b>") == 2000 and "I eats bread" in out


def test_broken_cues_are_kept_and_the_others_translated(tiny):
    broken = SUBTITLES.replace("00:00:04,000 -->", "00:00:0x,000 -->").replace("3\n", "trois\n")
    out = tiny.translate_document(broken, format="srt", beam=1)
    cues = out.split("\n\n")
    assert cues[1:] == broken.split("\n\n")[1:]  # as they were, untranslated
    assert cues[0].endswith("I eats bread\nhe sees cat")
    with pytest.raises(DocumentError, match="no subtitle cue"):
        tiny.translate_document("<html>je mange</html>", format="srt")


def test_a_cue_that_cannot_be_read_is_named_on_stderr_and_kept_as_given(tiny_model, tmp_path):
    broken = SUBTITLES.replace("00:00:04,000 -->", "00:00:0x,000 -->")
    (tmp_path / "film.srt").write_text(broken)
    result = s2a("--model", str(tiny_model), "--beam", "1", "-i", str(tmp_path / "film.srt"))
    assert result.exit_code == 0, result.stderr
    assert broken.split("\n\n")[1] in result.stdout  # as given, untranslated
    assert "00:00:0x,000" not in result.stdout.split("\n\n")[0]
    warning = [line for line in result.stderr.splitlines() if "film.srt" in line]
    assert len(warning) == 1 and "line 6:" in warning[0] and "00:00:0x,000" in warning[0]
    assert "kept as given, untranslated" in warning[0]


def test_broken_markdown_is_translated_without_losing_markup(tiny):
    text = "je **mange pain\n\n[chat](\n\n<div>je mange\n"
    out = tiny.translate_document(text, format="markdown", beam=1)
    assert out.count("\n") == text.count("\n") and "<div>I eats" in out  # read as a page


def test_binary_or_huge_documents_are_one_line_errors(tiny_model, tmp_path):
    binary = tmp_path / "page.html"
    binary.write_bytes(bytes(range(256)) * 40)
    huge = tmp_path / "big.md"
    huge.write_bytes(b"je mange pain. " * 700_000)  # 10 MB
    for path, message in [(binary, "not text"), (huge, "more than 4,000,000 characters")]:
        result = s2a("--model", str(tiny_model), "-i", str(path))
        assert result.exit_code == 2 and result.stdout == ""
        assert message in result.stderr and str(path) in result.stderr
        assert len(result.stderr.strip().split("\n")) == 1 and "Traceback" not in result.stderr
    with pytest.raises(DocumentError, match="not text"):
        translated(None, "\x00\x01" * 100, format="html")


def test_the_cli_picks_the_format_from_the_extension(tiny_model, tmp_path):
    for name, text, expected in [
        ("page.html", "<p>je <b>mange</b></p>\n", "<p>I <b>eats</b></p>\n"),
        ("notes.md", "# il **voit**\n", "# he **sees**\n"),
        ("film.srt", SUBTITLES.split("\n\n")[0] + "\n", "I eats bread\nhe sees cat\n"),
    ]:
        (tmp_path / name).write_text(text)
        result = s2a("--model", str(tiny_model), "--beam", "1", "-i", str(tmp_path / name))
        assert result.exit_code == 0, result.stderr
        assert result.stdout.endswith(expected)
    html = "je <b>mange</b> pain\n"
    forced = s2a("--model", str(tiny_model), "--beam", "1", "--input-format", "html", stdin=html)
    assert forced.stdout == "I <b>eats</b> bread\n"
    bad = s2a("--model", str(tiny_model), "--input-format", "pdf", "-i", "x.pdf")
    assert bad.exit_code == 2 and "--input-format must be one of" in bad.stderr


def test_a_txt_file_is_still_translated_line_by_line(tiny_model, tmp_path):
    (tmp_path / "notes.txt").write_text("je mange pain\n\nil voit chat\n")
    lines = s2a("--model", str(tiny_model), "--beam", "1", "-i", str(tmp_path / "notes.txt"))
    assert lines.stdout == "I eats bread\n\nhe sees cat\n"
    jsonl = s2a("--model", str(tiny_model), "-i", str(tmp_path / "notes.txt"), "--format", "jsonl")
    assert jsonl.exit_code == 0 and jsonl.stdout.count("\n") == 3


def s2a(*args: str, stdin: str = "") -> object:
    """`s2a translate ARGS` run in this process (the model loads in a fraction of a second)."""
    return CliRunner().invoke(app, ["translate", *args], input=stdin)


@pytest.mark.parametrize("source", ["page.fr.html", "notes.fr.md", "film.fr.srt"])
def test_the_example_documents_are_what_translate_writes_today(shipped, source):
    here = Path(__file__).parent.parent / "docs" / "documents"  # made by capture.py there
    text = (here / source).read_text(encoding="utf-8")
    written = shipped.translate_document(text, format=format_of(source))
    assert written == (here / source.replace(".fr.", ".en.")).read_text(encoding="utf-8")


def test_a_translated_page_says_it_is_in_the_target_language(tiny):
    page = '<html lang="fr" xml:lang="fr-CA"><p lang=fr>je mange pain</p><p lang="de">x</p></html>'
    out = tiny.translate_document(page, format="html", beam=1)  # screen readers read lang
    assert out.startswith('<html lang="en" xml:lang="en"><p lang=en>I eats bread</p>')
    assert '<p lang="de">' in out  # another language's passage keeps its name


def test_a_passage_marked_in_another_language_is_kept_as_written(tiny):
    page = (
        '<html lang="en"><body><p>je mange <span lang="en">bread</span> il voit '
        '<i lang="de-CH">Katze</i></p><p>il voit chat</p></body></html>'
    )
    out = tiny.translate_document(page, format="html", beam=1)  # translated, "weekend" was lost
    assert '<span lang="en">bread</span>' in out and '<i lang="de-CH">Katze</i>' in out
    assert "<p>he sees cat</p>" in out  # a French page a template calls lang="en": translated
    cues = (
        "WEBVTT\n\n00:00.000 --> 00:02.000\n<lang fr>je mange pain</lang>\n\n"
        "00:03.000 --> 00:04.000\n<lang en>Bread</lang> il voit chat\n"
    )
    out = tiny.translate_document(cues, format="vtt", beam=1)
    assert "<lang en>I eats bread</lang>" in out and "<lang en>Bread</lang>" in out


def test_a_ruby_keeps_its_reading_after_its_translated_base(tiny):
    page = "<p>je mange <ruby>pain<rp>(</rp><rt>pɛ̃</rt><rp>)</rp></ruby></p>"
    out = tiny.translate_document(page, format="html", beam=1)  # was <ruby><rt>bread</rt></ruby>
    assert out == "<p>I eats <ruby>bread<rp>(</rp><rt>pɛ̃</rt><rp>)</rp></ruby></p>"
    cue = "WEBVTT\n\n00:00.000 --> 00:02.000\nje mange <ruby>pain<rt>pɛ̃</rt></ruby>\n"
    out = tiny.translate_document(cue, format="vtt", beam=1)
    assert out.endswith("\nI eats <ruby>bread<rt>pɛ̃</rt></ruby>\n")


def test_translated_subtitles_and_front_matter_say_they_are_in_the_target_language(tiny):
    cues = "WEBVTT\nKind: captions\nLanguage: fr\n\n00:00.000 --> 00:02.000\nje mange pain\n"
    out = tiny.translate_document(cues, format="vtt", beam=1)  # YouTube's header kept "fr"
    assert out == "WEBVTT\nKind: captions\nLanguage: en\n\n00:00.000 --> 00:02.000\nI eats bread\n"
    notes = '---\ntitle: x\nlang: "fr-FR"\nlocale: fr\n---\n\nje mange pain\n'
    out = tiny.translate_document(notes, format="markdown", beam=1)
    assert out == '---\ntitle: x\nlang: "en"\nlocale: fr\n---\n\nI eats bread\n'


def test_a_page_s_placeholders_labels_and_description_are_translated(tiny):
    page = (
        '<head><meta name="description" content="je mange pain"><meta name="author" '
        'content="il voit chat"></head><input placeholder="il voit chat" aria-label="je mange">'
    )
    out = tiny.translate_document(page, format="html", beam=1)
    assert out == (
        '<head><meta name="description" content="I eats bread"><meta name="author" '
        'content="il voit chat"></head><input placeholder="he sees cat" aria-label="I eats">'
    )
    form = (
        '<textarea placeholder="il voit chat">je mange pain</textarea>'
        '<textarea class="notranslate" placeholder="il voit chat">je mange</textarea>'
        '<pre title="je mange">il voit chat</pre>'
        '<input type="submit" value="je mange"><input type="text" value="je mange">'
    )  # what was typed in a box is the user's; what the box asks for is the page's
    assert tiny.translate_document(form, format="html", beam=1) == (
        '<textarea placeholder="he sees cat">je mange pain</textarea>'
        '<textarea class="notranslate" placeholder="il voit chat">je mange</textarea>'
        '<pre title="I eats">il voit chat</pre>'
        '<input type="submit" value="I eats"><input type="text" value="je mange">'
    )
