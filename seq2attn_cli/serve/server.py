"""`s2a serve`: a resident translator over HTTP that speaks LibreTranslate's API.

POST /translate, GET /languages and GET /health as LibreTranslate answers them, plus each
text's confidence and the source words it may have dropped (extra fields its clients ignore),
`"attention": true` for each line's words, attention weights and Pharaoh alignment, and a
page at / that draws them. Requests that arrive within a few milliseconds of each other
share one search (a sentence's translation does not depend on its batch, so this changes
speed only). Limits answer 413 or 422, malformed JSON 400, all with {"error": ...}.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Route

from ..config import StoredConfig
from ..data.languages import NAMES
from ..decoding.alignment import pharaoh
from ..decoding.translator import Translation, Translator

UNDETERMINED = "und"  # ISO 639's code for a language not known
FIELDS = {"q", "source", "target", "format", "alternatives", "api_key", "attention"}


@dataclass(frozen=True, kw_only=True)
class Limits:
    """What one request may ask for; beyond it the answer is 413 or 422, never a crash.

    The defaults are `s2a serve`'s options.
    """

    body_bytes: int  # request body
    lines: int  # lines per request, over all its q strings
    chars: int  # characters per line
    timeout: float  # seconds, waiting included


class Refused(Exception):
    """A request the server will not do: an HTTP status and a one-line reason."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Job:
    """One request's lines, their translations so far, and the future its handler awaits."""

    lines: list[str]
    future: asyncio.Future
    done: list[Translation] = field(default_factory=list)


class Batcher:
    """Translates waiting requests' lines, oldest first, in searches of at most `most` characters.

    One thread does all searches, so torch's threads are never shared between two of them.
    Lines of requests arriving within `wait` seconds share a search. A request whose handler
    gave up (timed out) is dropped between searches, so it holds up later ones for one search
    at most.
    """

    def __init__(
        self, translate: Callable[[list[str]], list[Translation]], *, wait: float, most: int
    ) -> None:
        self.translate, self.wait, self.most = translate, wait, most
        self.pending: list[Job] = []
        self.ready = asyncio.Event()
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="s2a-search")

    async def submit(self, lines: list[str]) -> list[Translation]:
        """Translate lines in the next shared searches."""
        if not lines:  # no search would ever finish it
            return []
        job = Job(lines, asyncio.get_running_loop().create_future())
        self.pending.append(job)
        self.ready.set()
        return await job.future

    def take(self) -> tuple[list[Job], list[str]]:
        """The next search's lines (at least one if any wait) and, for each, the job it is of."""
        self.pending = [job for job in self.pending if not job.future.done()]
        owners, texts, size = [], [], 0
        for job in self.pending:
            for line in job.lines[len(job.done) :]:
                if texts and size + len(line) > self.most:
                    return owners, texts
                owners.append(job)
                texts.append(line)
                size += len(line)
        return owners, texts

    async def run(self) -> None:
        """Forever: wait for work, let more arrive for `wait` seconds, translate the next search."""
        loop = asyncio.get_running_loop()
        while True:
            await self.ready.wait()
            await asyncio.sleep(self.wait)
            owners, texts = self.take()
            if not texts:
                self.ready.clear()
                continue
            try:
                results = await loop.run_in_executor(self.pool, self.translate, texts)
            except Exception as error:  # every waiting request hears of it, none hangs
                for job in owners:
                    if not job.future.done():
                        job.future.set_exception(error)
                continue
            for job, result in zip(owners, results, strict=True):
                job.done.append(result)
            for job in owners:
                if len(job.done) == len(job.lines) and not job.future.done():
                    job.future.set_result(job.done)


def model_languages(config: StoredConfig, directory: Path) -> tuple[str, str]:
    """(source, target) codes: as training recorded them, else from a name like fr-en."""
    source, target = config.languages
    if source and target:
        return source, target
    named = re.fullmatch(r"([a-z]{2,3})[-_]([a-z]{2,3})", directory.name)
    return (named[1], named[2]) if named else (UNDETERMINED, UNDETERMINED)


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


def parse_request(body: bytes, content_type: str) -> dict[str, Any]:
    """The fields of a /translate body: JSON (as LibreTranslate's clients send) or a form."""
    if content_type.startswith("application/x-www-form-urlencoded"):
        try:
            pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, strict_parsing=True)
        except (UnicodeDecodeError, ValueError) as error:
            raise Refused(400, f"malformed form body: {error}") from None
        data: dict[str, Any] = {}
        for key, value in pairs:
            data[key] = [*data[key], value] if key == "q" and key in data else value
        return data
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise Refused(400, f"malformed JSON: {error}") from None
    if not isinstance(data, dict):
        raise Refused(400, 'the body must be a JSON object such as {"q": "Bonjour"}')
    return data


def check_fields(data: dict[str, Any], *, languages: tuple[str, str], key: str | None) -> None:
    """Refuse what this server cannot do, each with its reason (nothing is silently ignored)."""
    if key is not None and data.get("api_key") != key:
        raise Refused(403, "invalid or missing api_key")
    unknown = sorted(set(data) - FIELDS)
    if unknown:
        raise Refused(422, f"unknown field {unknown[0]!r}; known: {', '.join(sorted(FIELDS))}")
    source, target = languages
    if data.get("source", "auto") not in ("auto", source):
        raise Refused(422, f"source {data.get('source')!r}: this model translates {source}")
    if data.get("target", target) != target:
        raise Refused(422, f"target {data.get('target')!r}: this model translates into {target}")
    if data.get("format", "text") != "text":
        raise Refused(422, f'format {data.get("format")!r}: only "text" is supported')
    if str(data.get("alternatives", 0)) != "0":
        raise Refused(422, "alternatives: this server gives one translation per text")
    if data.get("attention", False) not in (True, False, "true", "false", "1", "0"):
        raise Refused(422, "attention must be true or false")


def texts_of(q: Any, limits: Limits) -> list[str]:
    """q as a list of strings, within the limits."""
    if q is None:
        raise Refused(422, "missing field q: the text to translate (a string or a list)")
    texts = [q] if isinstance(q, str) else q
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise Refused(422, "q must be a string or a list of strings")
    # a final newline ends the last line; it does not start another
    lines = sum(t.count("\n") + (not t.endswith("\n")) for t in texts)
    if lines > limits.lines:
        raise Refused(413, f"{lines} lines in one request; the limit is {limits.lines}")
    for i, text in enumerate(texts):
        longest = max(len(line) for line in text.split("\n"))
        if longest > limits.chars:
            where = f"q[{i}]" if isinstance(q, list) else "q"
            raise Refused(
                413, f"{where}: a line of {longest} characters; the limit is {limits.chars}"
            )
    return texts


def create_app(
    translator: Translator,
    *,
    languages: tuple[str, str],
    beam: int,
    limits: Limits,
    api_key: str | None = None,
    wait: float = 0.005,
    batch_size: int = 64,
    search_chars: int = 4000,
) -> Starlette:
    """The ASGI application: routes, limits and one shared Batcher."""
    batcher = Batcher(
        lambda lines: translator.translate(lines, beam=beam, batch_size=batch_size),
        wait=wait,
        # ~0.4 s of beam search for the embedded model on one core: the longest a request
        # that timed out keeps the next one waiting
        most=search_chars,
    )
    page = files("seq2attn_cli.serve").joinpath("web/index.html").read_text(encoding="utf-8")

    async def translate(request: Request) -> JSONResponse:
        body = await read_body(request, limits.body_bytes)
        data = parse_request(body, request.headers.get("content-type", "application/json"))
        check_fields(data, languages=languages, key=api_key)
        texts = texts_of(data.get("q"), limits)
        answers = await translate_texts(batcher, texts, timeout=limits.timeout)
        return JSONResponse(reply_of(data, answers, source=languages[0]))

    async def languages_route(request: Request) -> JSONResponse:
        return JSONResponse(language_list(languages))

    async def health(request: Request) -> JSONResponse:
        from .. import __version__

        status = {"status": "ok", "version": __version__, "beam": beam}
        return JSONResponse({**status, "api_key_required": api_key is not None})

    async def index(request: Request) -> HTMLResponse:
        return HTMLResponse(page)

    @asynccontextmanager
    async def lifespan(app: Starlette):
        task = asyncio.create_task(batcher.run())
        yield
        task.cancel()
        batcher.pool.shutdown(wait=False, cancel_futures=True)

    routes = [
        Route("/", index),
        Route("/translate", translate, methods=["POST"]),
        Route("/languages", languages_route),
        Route("/health", health),
    ]
    handlers: dict[Any, Callable] = {Refused: refused, HTTPException: http_error}
    return Starlette(routes=routes, exception_handlers=handlers, lifespan=lifespan)


async def translate_texts(
    batcher: Batcher, texts: list[str], *, timeout: float
) -> list[list[Translation]]:
    """Each text's lines translated, in one batch for the whole request; 503 after `timeout`."""
    split = [text.split("\n") for text in texts]
    lines = [line for text in split for line in text]
    try:
        done = await asyncio.wait_for(batcher.submit(lines), timeout)
    except TimeoutError:
        late = f"not translated within {timeout:g} s"
        print(f"s2a: 503, {sum(map(len, lines)):,} characters {late}", file=sys.stderr)
        raise Refused(503, f"{late}; try again") from None
    answers, start = [], 0
    for text in split:
        answers.append(done[start : start + len(text)])
        start += len(text)
    return answers


async def refused(request: Request, error: Refused) -> JSONResponse:
    """A request s2a turns down: its status and a one-line reason as JSON."""
    return JSONResponse({"error": str(error)}, status_code=error.status)


async def http_error(request: Request, error: HTTPException) -> JSONResponse:
    """Starlette's own refusals (404, 405) in the same JSON shape."""
    return JSONResponse({"error": error.detail}, status_code=error.status_code)


def reply_of(
    data: dict[str, Any], answers: list[list[Translation]], *, source: str
) -> dict[str, Any]:
    """LibreTranslate's answer to one request: a string for a string `q`, a list for a list."""
    joined = ["\n".join(t.text for t in answer) for answer in answers]
    single = isinstance(data["q"], str)
    reply: dict[str, Any] = {"translatedText": joined[0] if single else joined}
    # beside LibreTranslate's fields: a text is as sure as its least sure line
    least = [round(min(t.confidence for t in answer), 4) for answer in answers]
    dropped = [[w for t in answer for w in t.dropped] for answer in answers]
    reply["confidence"], reply["dropped"] = (least[0], dropped[0]) if single else (least, dropped)
    if data.get("source", "auto") == "auto":
        sure = 0.0 if source == UNDETERMINED else 100.0
        detected = {"language": source, "confidence": sure}
        reply["detectedLanguage"] = detected if single else [detected] * len(answers)
    if data.get("attention") in (True, "true", "1"):
        lists = [[attention_of(t) for t in answer] for answer in answers]
        reply["attention"] = lists[0] if single else lists
    return reply


def language_list(languages: tuple[str, str]) -> list[dict[str, Any]]:
    """GET /languages as LibreTranslate answers it; empty when the languages are not known."""
    source, target = languages
    if UNDETERMINED in languages:  # no code to offer a client
        return []
    return [
        {"code": source, "name": NAMES.get(source, source), "targets": [target]},
        {"code": target, "name": NAMES.get(target, target), "targets": []},
    ]


async def read_body(request: Request, most: int) -> bytes:
    """The request body, refused with 413 as soon as it is known to exceed `most` bytes."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > most:
        raise Refused(413, f"body of {declared} bytes; the limit is {most}")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > most:
            raise Refused(413, f"body over {most} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket, made before the model loads so a taken port fails at once."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    return sock


def serve(app: Starlette, sock: socket.socket) -> None:
    """Serve `app` on an already bound socket until Ctrl-C; uvicorn logs warnings to stderr."""
    import uvicorn

    config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])


def address(sock: socket.socket) -> str:
    """The URL a bound socket serves."""
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"
