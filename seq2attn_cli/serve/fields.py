"""A request's fields as LibreTranslate reads them, checked as it checks them.

Fields come from a JSON body, a form (urlencoded or multipart) or the query string, and
every malformed one is refused with a status and a one-line reason, never a 500: a body
too deep for the JSON parser, a number with 5,000 digits, a broken multipart boundary.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from starlette.datastructures import Headers, UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.requests import Request

TEXT_FIELDS = ("source", "target", "format", "api_key")
FIELDS = {"q", "alternatives", "attention", "glossary", *TEXT_FIELDS}
FILE_FIELDS = {"file", "source", "target", "api_key", "glossary"}  # /translate_file's
FORMATS = ("text", "html")  # what /translate's `format` may be, as LibreTranslate's


class Refused(Exception):
    """A request the server will not do: an HTTP status and a one-line reason."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, kw_only=True)
class Limits:
    """What one request may ask for; beyond it the answer is 400 (as LibreTranslate), never a crash.

    The defaults are `s2a serve`'s options.
    """

    body_bytes: int  # request body
    lines: int  # lines per request, over all its q strings
    chars: int  # characters per line
    timeout: float  # seconds, waiting included


class RateLimit:
    """At most `per_minute` requests from one client address in each clock minute (0: any).

    As LibreTranslate's --req-limit: beyond it, 429 and {"error": "Slowdown: ..."}. The
    counts of one minute only are kept, so memory grows with the clients of one minute.
    """

    def __init__(self, per_minute: int) -> None:
        self.per_minute = per_minute
        self.minute, self.counts = -1, Counter[str]()

    def count(self, client: str) -> None:
        """Count one request of `client`; 429 if it is over the limit."""
        if not self.per_minute:
            return
        minute = int(time.time() // 60)
        if minute != self.minute:
            self.minute, self.counts = minute, Counter()
        self.counts[client] += 1
        if self.counts[client] > self.per_minute:
            raise Refused(429, f"Slowdown: {self.per_minute} per 1 minute")


@dataclass(frozen=True, kw_only=True)
class Asked:
    """What a /translate request asks for, checked."""

    texts: list[str]
    single: bool  # q was one string: the answer's fields are strings, not lists
    source: str  # "auto" or the model's source language
    format: str  # "text" or "html"
    alternatives: int  # how many next-best translations each text wants
    attention: bool
    glossary: dict[str, str] | None = None  # beside LibreTranslate's: French term -> English


async def read_fields(request: Request, body: bytes) -> dict[str, Any]:
    """The fields of a request: its query string and its body (JSON, form or multipart)."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    query = list(request.query_params.multi_items())
    if kind == "multipart/form-data":
        return merged(query + await multipart(request.headers, body), {})
    if kind == "application/x-www-form-urlencoded" or (not kind and not body.strip()):
        return merged(query + form_pairs(body), {})
    return merged(query, json_object(body))


def form_pairs(body: bytes) -> list[tuple[str, str]]:
    """An urlencoded body's (name, value) pairs; an empty one ("q=je&&source=fr") is none, as
    browsers and LibreTranslate's Flask read it."""
    try:
        return parse_qsl(body.decode("utf-8"), keep_blank_values=True)
    except (UnicodeDecodeError, ValueError) as error:
        raise Refused(400, f"malformed form body: {error}") from None


def _once_each(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's fields; a name given twice is refused (json.loads keeps the last)."""
    fields: dict[str, Any] = {}
    for name, value in pairs:
        if name in fields:
            raise Refused(400, f"Invalid request: {name[:100]} parameter given twice")
        fields[name] = value
    return fields


def json_object(body: bytes) -> dict[str, Any]:
    """A JSON body that must be an object."""
    try:
        data = json.loads(body, object_pairs_hook=_once_each)
    except RecursionError:
        raise Refused(400, "malformed JSON: nested too deep") from None
    except (UnicodeDecodeError, ValueError) as error:  # ValueError: an int of 5,000 digits
        raise Refused(400, f"malformed JSON: {str(error)[:200]}") from None
    if not isinstance(data, dict):
        raise Refused(400, 'Invalid JSON format: the body must be an object such as {"q": "..."}')
    try:  # "\ud800" parses, but is no character: no model, detector or encoder takes it
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as error:
        raise Refused(
            400, f"malformed JSON: a lone surrogate {error.object[error.start]!r}"
        ) from None
    return data


async def multipart(headers: Headers, body: bytes) -> list[tuple[str, Any]]:
    """A multipart body's (name, value) pairs; a file's value is its UploadFile."""

    async def stream():
        yield body

    parser = MultiPartParser(headers, stream(), max_files=1, max_fields=16)
    try:
        form = await parser.parse()
    except MultiPartException as error:
        raise Refused(400, f"malformed multipart body: {error.message}") from None
    except (ValueError, UnicodeDecodeError) as error:  # a boundary the parser cannot use
        raise Refused(400, f"malformed multipart body: {error}") from None
    return list(form.multi_items())


def merged(pairs: list[tuple[str, Any]], data: dict[str, Any]) -> dict[str, Any]:
    """Pairs added to a JSON object's fields; a field given twice, q too, is refused."""
    fields = dict(data)
    for name, value in pairs:
        # a repeated q made a list: a client that sent one string got a list back
        if name in fields:
            several = ' (send several texts as a JSON list: {"q": [...]})' if name == "q" else ""
            raise Refused(400, f"Invalid request: {name} parameter given twice{several}")
        fields[name] = value
    return fields


def check_key(fields: dict[str, Any], key: str | None) -> None:
    """403 unless the server needs no key or the request has the right one."""
    if key is None:
        return
    given = fields.get("api_key")
    if given is None or given == "":
        raise Refused(403, "Invalid request: missing api_key parameter (this server needs one)")
    if given != key:
        raise Refused(403, "Invalid API key")


def check_known(fields: dict[str, Any], known: set[str]) -> None:
    """Refuse a field this server does not read: nothing a client sends is silently ignored."""
    unknown = sorted(set(fields) - known, key=str)
    if unknown:
        listed = ", ".join(sorted(known))
        raise Refused(400, f"Invalid request: unknown parameter {unknown[0]!r}; known: {listed}")
    for name in TEXT_FIELDS:
        if name in fields and not isinstance(fields[name], str):
            raise Refused(400, f"Invalid request: {name} parameter must be a string")


def check_languages(fields: dict[str, Any], languages: tuple[str, str]) -> str:
    """The source asked for ("auto" or the model's); refused unless this model translates it."""
    source, target = languages
    asked = fields.get("source") or "auto"
    if asked not in ("auto", source):
        raise Refused(
            400, f"{asked} is not supported: this model translates {source} into {target}"
        )
    if (fields.get("target") or target) != target:
        given = fields["target"]
        raise Refused(
            400, f"{given} is not supported: this model translates {source} into {target}"
        )
    return asked


def asked_of(fields: dict[str, Any], *, languages: tuple[str, str], beam: int) -> Asked:
    """A /translate request's fields, checked, with LibreTranslate's defaults filled in."""
    check_known(fields, FIELDS)
    q = fields.get("q")
    if q is None or q == "" or q == []:
        raise Refused(400, "Invalid request: missing q parameter")
    texts = [q] if isinstance(q, str) else q
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise Refused(400, "Invalid request: q must be a string or a list of strings")
    source = check_languages(fields, languages)
    form = fields.get("format") or "text"
    if form not in FORMATS:
        raise Refused(400, f"{form} format is not supported (text or html)")
    attention = fields.get("attention", False)
    if attention not in (True, False, "true", "false", "1", "0"):
        raise Refused(400, "Invalid request: attention parameter must be true or false")
    if form == "html" and attention in (True, "true", "1"):
        raise Refused(400, "Invalid request: attention is given for format text only")
    return Asked(
        texts=texts,
        single=isinstance(q, str),
        source=source,
        format=form,
        alternatives=alternatives_of(fields.get("alternatives", 0), most=beam - 1),
        attention=attention in (True, "true", "1"),
        glossary=glossary_of(fields.get("glossary")),
    )


def glossary_of(value: Any) -> dict[str, str] | None:
    """The "glossary" field: an object of French term -> English (in a form: as JSON)."""
    from ..decoding.rules.glossary import terms_of
    from ..errors import GlossaryError

    if value is None or value == "" or value == {}:
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            value = None
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise Refused(400, 'Invalid request: glossary must be an object such as {"pomme": "apple"}')
    try:
        terms_of(value)
    except GlossaryError as error:
        raise Refused(400, f"Invalid request: {error}") from None
    return value


def alternatives_of(value: Any, *, most: int) -> int:
    """The number of alternatives asked for: a whole number, negative as 0, at most `most`."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise Refused(400, "Invalid request: alternatives parameter is not a number")
    try:
        wanted = max(0, int(value))
    except ValueError:  # "three", "2.5", or 5,000 digits
        raise Refused(400, "Invalid request: alternatives parameter is not a number") from None
    if wanted > most:
        raise Refused(
            400,
            f"Invalid request: alternatives parameter must be <= {most} "
            f"(the beam's other translations)",
        )
    return wanted


def texts_of(texts: list[str], limits: Limits, *, single: bool) -> list[str]:
    """The texts, refused with 400 if over the limits on lines and characters per line."""
    # a final newline ends the last line; it does not start another
    lines = sum(t.count("\n") + (not t.endswith("\n")) for t in texts)
    if lines > limits.lines:
        raise Refused(
            400,
            f"{lines} lines in one request; the limit is {limits.lines} (the server's --max-lines)",
        )
    for i, text in enumerate(texts):
        longest = max(len(line) for line in text.split("\n"))
        if longest > limits.chars:
            where = "q" if single else f"q[{i}]"
            raise Refused(
                400,
                f"{where}: a line of {longest} characters; the limit is {limits.chars} "
                "(the server's --max-chars)",
            )
    return texts


async def read_body(request: Request, most: int) -> bytes:
    """The request body, refused with 400 as soon as it is known to exceed `most` bytes."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > most:
        raise Refused(
            400, f"body of {declared} bytes; the limit is {most} (the server's --max-body)"
        )
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > most:
            raise Refused(400, f"body over the limit of {most} bytes (the server's --max-body)")
        chunks.append(chunk)
    return b"".join(chunks)


def upload_of(fields: dict[str, Any]) -> UploadFile:
    """The `file` field of a /translate_file request."""
    upload = fields.get("file")
    if upload is None:
        raise Refused(400, "Invalid request: missing file parameter")
    if not isinstance(upload, UploadFile):
        raise Refused(400, "Invalid request: file must be a file sent as multipart/form-data")
    if not upload.filename:
        raise Refused(400, "Invalid request: empty file")
    return upload
