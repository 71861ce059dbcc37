"""The routes that translate and detect: /translate, /detect, /translate_file, /download_file.

Each reads its fields as LibreTranslate does (fields.py), refuses what it cannot do with
LibreTranslate's status and a one-line reason, and answers in LibreTranslate's shape.
"""

from __future__ import annotations

import asyncio
import re
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..decoding.explain.alignment import pharaoh
from ..decoding.rules.parts import by_rank
from ..decoding.translation import Translation, distinct
from ..decoding.translator import Translator
from .detect import UNDETERMINED, Detector, source_of
from .fields import (
    FILE_FIELDS,
    Asked,
    Limits,
    RateLimit,
    Refused,
    asked_of,
    check_key,
    check_known,
    check_languages,
    glossary_of,
    read_body,
    read_fields,
    texts_of,
    upload_of,
)
from .files import Downloads, text_of

if TYPE_CHECKING:  # server.py imports this module; documents, imported when a file comes
    from ..documents import Translated
    from .server import Batcher


# a line break as a client sends it: a browser's form sends \r\n, old Macs' text \r
LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(kw_only=True)
class Service:
    """What the routes share: the model, its languages, the search queue and the limits."""

    translator: Translator
    languages: tuple[str, str]
    beam: int
    limits: Limits
    api_key: str | None
    batcher: Batcher
    detector: Detector
    downloads: Downloads
    rate: RateLimit

    async def fields(self, request: Request) -> dict[str, Any]:
        """A request's fields, within the body and rate limits, with the API key checked."""
        self.rate.count(request.client.host if request.client else "")
        body = await read_body(request, self.limits.body_bytes)
        fields = await read_fields(request, body)
        check_key(fields, self.api_key)
        return fields

    async def translate(self, request: Request) -> JSONResponse:
        """POST /translate: q (a string or a list) in the model's target language."""
        asked = asked_of(await self.fields(request), languages=self.languages, beam=self.beam)
        texts = asked.texts
        read = [await self.words_of(t, "html") for t in texts] if asked.format == "html" else texts
        texts_of(read, self.limits, single=asked.single)
        auto = asked.source == "auto"
        detected = await self.detected(read, single=asked.single) if auto else None
        if asked.format == "html":
            pages = [await self.document(text, "html", asked.glossary) for text in texts]
            done, answers = [page for page, _ in pages], [sentences for _, sentences in pages]
            reply = reply_of(asked, done, [[] for _ in done], detected, None)
        else:
            answers = await self.lines(texts, asked.glossary)
            done = [
                joined(text, [t.text for t in a]) for text, a in zip(texts, answers, strict=True)
            ]
            others = [
                alternatives_of(text, answer, asked.alternatives)
                for text, answer in zip(texts, answers, strict=True)
            ]
            attention = [[attention_of(t) for t in a] for a in answers] if asked.attention else None
            reply = reply_of(asked, done, others, detected, attention)
        # beside LibreTranslate's fields: a text is as sure as its least sure line
        sure = [round(min((t.confidence for t in answer), default=1.0), 4) for answer in answers]
        dropped = [[w for t in answer for w in t.dropped] for answer in answers]
        reply["confidence"], reply["dropped"] = (
            (sure[0], dropped[0]) if asked.single else (sure, dropped)
        )
        return JSONResponse(reply)

    async def detect(self, request: Request) -> JSONResponse:
        """POST /detect: the languages q may be in, likeliest first (LibreTranslate's list)."""
        fields = await self.fields(request)
        check_known(fields, {"q", "api_key"})
        q = fields.get("q")
        if not q:
            raise Refused(400, "Invalid request: missing q parameter")
        if not isinstance(q, str):
            raise Refused(400, "Invalid request: q must be a string")
        texts_of([q], self.limits, single=True)
        found = asyncio.to_thread(self.detector.detect, q)
        return JSONResponse(await self.timed(found, "detecting a language"))

    async def translate_file(self, request: Request) -> JSONResponse:
        """POST /translate_file: a .txt, .html, .md, .srt or .vtt file, for /download_file."""
        fields = await self.fields(request)
        check_known(fields, FILE_FIELDS)
        upload = upload_of(fields)
        form = file_format(upload.filename or "")
        source = check_languages(fields, self.languages)
        glossary = glossary_of(fields.get("glossary"))  # a form's field: the object as JSON
        text = text_of(await upload.read(), upload.filename or "")
        read = await self.words_of(text, form)
        texts_of([read], self.limits, single=True)
        if source == "auto":
            await self.detected([read], single=True)
        done, _ = await self.document(text, form, glossary)
        name = self.downloads.add(upload.filename or "", done.encode("utf-8"))
        return JSONResponse({"translatedFileUrl": f"{request.base_url}download_file/{name}"})

    async def download_file(self, request: Request) -> Response:
        """GET /download_file/<name>: a file /translate_file translated, as an attachment."""
        filename, data = self.downloads.get(request.path_params["name"])
        disposition = f'attachment; filename="{filename}"'
        return Response(
            data,
            media_type="application/octet-stream",
            headers={"Content-Disposition": disposition},
        )

    async def detected(self, texts: list[str], *, single: bool) -> list[dict[str, Any]]:
        """Each text's own detectedLanguage; 400 if one is surely in another language."""
        source = self.languages[0]
        if source == UNDETERMINED:
            return [{"language": UNDETERMINED, "confidence": 0.0} for _ in texts]
        # each text alone: joined, a long French neighbour let a German text through
        detecting = asyncio.to_thread(self.detector.detect_each, texts)
        found = await self.timed(detecting, "detecting a language")
        languages = [source_of(f, source, text=t) for f, t in zip(found, texts, strict=True)]
        for i, language in enumerate(languages):
            if language["language"] != source:  # one such text refuses the whole request
                where = "" if single else f"q[{i}] "
                raise Refused(
                    400,
                    f"{language['language']} is not supported: this model translates "
                    f"{source} ({where}detected with confidence {language['confidence']})",
                )
        return languages

    async def lines(
        self, texts: list[str], glossary: dict[str, str] | None = None
    ) -> list[list[Translation]]:
        """Each text's lines translated in the batcher's searches (with a glossary: apart from
        other requests' lines)."""
        split = [LINE_BREAK.split(text) for text in texts]
        lines = [line for text in split for line in text]
        what = f"{sum(map(len, lines)):,} characters"
        done = await self.timed(self.batcher.submit(lines, glossary), what)
        answers, start = [], 0
        for text in split:
            answers.append(done[start : start + len(text)])
            start += len(text)
        return answers

    async def document(
        self, text: str, form: str, glossary: dict[str, str] | None = None
    ) -> Translated:
        """A document (HTML, Markdown, subtitles) translated in the search thread, and its
        sentences' Translations."""
        from ..documents import translated

        def work() -> Translated:
            return translated(self.translator, text, format=form, beam=self.beam, glossary=glossary)

        loop = asyncio.get_running_loop()
        try:
            done = loop.run_in_executor(self.batcher.pool, work)
            return await self.timed(done, f"a document of {len(text):,} characters")
        except ValueError as error:  # DocumentError: one that cannot be translated at all
            raise Refused(400, f"Invalid request: {error}") from None

    async def words_of(self, text: str, form: str) -> str:
        """A document's sentences, a line each, cut to --max-chars: what the limits count and
        the language detector reads (its markup, CSS and scripts are no language). Read in a
        thread, within --timeout: a 256 KB page took seconds, and the event loop serves all."""
        from ..documents import sentences_in

        reading = asyncio.to_thread(sentences_in, text, format=form, limit=self.limits.chars)
        try:
            return "\n".join(
                await self.timed(reading, f"reading a document of {len(text):,} characters")
            )
        except ValueError as error:  # DocumentError: one that cannot be read at all
            raise Refused(400, f"Invalid request: {error}") from None

    async def timed(self, work: Any, what: str) -> Any:
        """Await work, refused with 503 (and a line in the log) after the time limit."""
        try:
            return await asyncio.wait_for(work, self.limits.timeout)
        except TimeoutError:
            late = f"not done within {self.limits.timeout:g} s"
            print(f"s2a: 503, {what} {late}", file=sys.stderr)
            raise Refused(503, f"{late}; try again") from None


def file_format(filename: str) -> str:
    """The document format of a file name (documents.format_of); 400 for one not supported."""
    from ..documents import EXTENSIONS, format_of

    try:
        return format_of(filename)
    except ValueError:
        listed = ", ".join(EXTENSIONS)
        raise Refused(400, f"Invalid request: file format not supported ({listed})") from None


def joined(text: str, lines: list[str]) -> str:
    """The translations of `text`'s lines, joined by its own line breaks (\r\n as given)."""
    breaks = [*LINE_BREAK.findall(text), ""]
    return "".join(line + end for line, end in zip(lines, breaks, strict=True))


def alternatives_of(text: str, answer: list[Translation], n: int) -> list[str]:
    """A text's first n alternatives: the k-th takes each line's k-th alternative (or its best)."""
    best = joined(text, [t.text for t in answer])
    return distinct([joined(text, texts) for texts in by_rank(answer)], best)[:n]


def attention_of(t: Translation) -> dict[str, Any]:
    """One line's words, word-level attention (rows: target words) and Pharaoh alignment."""
    src, tgt, weights = t.word_attention
    return {
        "source_words": src,
        "target_words": tgt,
        "weights": [[round(w, 4) for w in row] for row in weights],
        "alignment": pharaoh(t.alignment),
        "score": round(t.score, 4),
        "confidence": round(t.confidence, 4),
        "dropped": t.dropped,
    }


def reply_of(
    asked: Asked,
    done: list[str],
    alternatives: list[list[str]],
    detected: list[dict[str, Any]] | None,
    attention: list[list[dict[str, Any]]] | None,
) -> dict[str, Any]:
    """LibreTranslate's answer: strings for a string `q`, lists for a list."""

    def shaped(values: list[Any]) -> Any:
        return values[0] if asked.single else values

    reply: dict[str, Any] = {"translatedText": shaped(done)}
    if detected is not None:
        reply["detectedLanguage"] = shaped(detected)
    if asked.alternatives:
        reply["alternatives"] = shaped(alternatives)
    if attention is not None:
        reply["attention"] = shaped(attention)
    return reply
