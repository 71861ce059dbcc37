"""`s2a serve`: a resident translator over HTTP that speaks LibreTranslate's API.

POST /translate, /detect and /translate_file, GET /download_file/<name>, /languages,
/frontend/settings and /health as LibreTranslate answers them (routes.py; fields from JSON,
a form or the query string: fields.py), plus `"attention": true` for each line's words,
attention weights and Pharaoh alignment, and a page at / that draws them. POST /steps
decodes one sentence step by step for each model served (steps.py), and /walk plays it.
Requests that
arrive within a few milliseconds of each other share one search (a sentence's translation
does not depend on its batch, so this changes speed only). Refusals are {"error": ...} with
LibreTranslate's status: 400 for a bad field or over a size limit, 403 for a bad api_key,
429 over --req-limit; 503 when the time limit passes.
"""

from __future__ import annotations

import asyncio
import re
import socket
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Route

from ..config import DECODE, StoredConfig
from ..data.languages import NAMES
from ..decoding.translation import Translation
from ..decoding.translator import Translator
from ..documents import EXTENSIONS
from .access import AccessLog
from .detect import UNDETERMINED, Detector
from .fields import Limits, RateLimit, Refused
from .files import Downloads
from .routes import Service
from .steps import steps_route

# as LibreTranslate's after_request: a LibreTranslate client in a page of any site may call
# the API (no cookies are read: the key is the api_key field); preflights are answered
CORS = Middleware(
    CORSMiddleware,
    allow_origins=["*"],
    allow_methods=["GET", "POST"],
    allow_headers=["Authorization", "Content-Type"],
    max_age=20 * 24 * 3600,  # LibreTranslate's 20 days; browsers keep it 2 to 24 hours
)


@dataclass
class Job:
    """One request's lines, their translations so far, and the future its handler awaits."""

    lines: list[str]
    future: asyncio.Future
    glossary: dict[str, str] | None = None  # the request's terms: its lines search apart
    done: list[Translation] = field(default_factory=list)


class Batcher:
    """Translates waiting requests' lines, oldest first, in searches of at most `most` characters.

    One thread does all searches, so torch's threads are never shared between two of them.
    Lines of requests arriving within `wait` seconds share a search, if they ask for the same
    glossary. A request whose handler gave up (timed out) is dropped between searches, so it
    holds up later ones for one search at most, with a glossary or not.
    """

    def __init__(
        self,
        translate: Callable[[list[str], dict[str, str] | None], list[Translation]],
        *,
        wait: float,
        most: int,
    ) -> None:
        self.translate, self.wait, self.most = translate, wait, most
        self.pending: list[Job] = []
        self.ready = asyncio.Event()
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="s2a-search")

    async def submit(
        self, lines: list[str], glossary: dict[str, str] | None = None
    ) -> list[Translation]:
        """Translate lines in the next shared searches (with the glossary's terms)."""
        if not lines:  # no search would ever finish it
            return []
        job = Job(lines, asyncio.get_running_loop().create_future(), glossary or None)
        self.pending.append(job)
        self.ready.set()
        return await job.future

    def take(self) -> tuple[list[Job], list[str]]:
        """The next search's lines (at least one if any wait) and, for each, the job it is of:
        the oldest job's, and those of jobs after it with the same glossary."""
        self.pending = [job for job in self.pending if not job.future.done()]
        owners: list[Job] = []
        texts: list[str] = []
        size = 0
        for job in self.pending:
            if owners and job.glossary != owners[0].glossary:
                continue
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
                glossary = owners[0].glossary
                results = await loop.run_in_executor(self.pool, self.translate, texts, glossary)
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


def create_app(
    translator: Translator,
    *,
    languages: tuple[str, str],
    beam: int,
    limits: Limits,
    api_key: str | None = None,
    wait: float = 0.005,
    batch_size: int = DECODE.batch_size,
    search_chars: int = 4000,
    per_minute: int = 0,
    name: str = "model",
    compare: tuple[str, Translator] | None = None,
    log: Callable[[str], None] | None = None,
) -> Starlette:
    """The ASGI application: routes, limits (`per_minute` requests a client, 0: any) and one
    shared Batcher. `name` labels the model in /steps; `compare` is a second (name, model)
    that /steps decodes too; `log` says a line a request (access.py)."""
    batcher = Batcher(
        lambda lines, glossary: translator.translate(
            lines, beam=beam, batch_size=batch_size, glossary=glossary
        ),
        wait=wait,
        # ~0.4 s of beam search for the embedded model on one core: the longest a request
        # that timed out keeps the next one waiting
        most=search_chars,
    )
    service = Service(
        translator=translator,
        languages=languages,
        beam=beam,
        limits=limits,
        api_key=api_key,
        batcher=batcher,
        detector=Detector(also=languages),
        downloads=Downloads(),
        rate=RateLimit(per_minute),
    )
    page = files("seq2attn_cli.serve").joinpath("web/index.html").read_text(encoding="utf-8")
    walk_page = files("seq2attn_cli.serve").joinpath("web/walk.html").read_text(encoding="utf-8")
    walked = [(name, translator), *([compare] if compare else [])]
    steps = steps_route(
        walked, limits=limits, key=api_key, beam=beam, pool=batcher.pool, rate=service.rate
    )

    async def languages_route(request: Request) -> JSONResponse:
        return JSONResponse(language_list(languages))

    async def settings(request: Request) -> JSONResponse:
        return JSONResponse(frontend_settings(languages, limits, api_key=api_key))

    async def health(request: Request) -> JSONResponse:
        from .. import __version__

        status = {"status": "ok", "version": __version__, "beam": beam}
        return JSONResponse({**status, "api_key_required": api_key is not None})

    async def index(request: Request) -> HTMLResponse:
        return HTMLResponse(page)

    async def walk_route(request: Request) -> HTMLResponse:
        return HTMLResponse(walk_page)

    @asynccontextmanager
    async def lifespan(app: Starlette):
        threading.Thread(target=service.detector.load, name="s2a-lingua", daemon=True).start()
        task = asyncio.create_task(batcher.run())
        yield
        task.cancel()
        batcher.pool.shutdown(wait=False, cancel_futures=True)

    routes = [
        Route("/", index),
        Route("/translate", service.translate, methods=["POST"]),
        Route("/detect", service.detect, methods=["POST"]),
        Route("/translate_file", service.translate_file, methods=["POST"]),
        Route("/download_file/{name}", service.download_file),
        Route("/languages", languages_route),
        Route("/frontend/settings", settings),
        Route("/health", health),
        Route("/steps", steps, methods=["POST"]),
        Route("/walk", walk_route),
    ]
    handlers: dict[Any, Callable] = {Refused: refused, HTTPException: http_error}
    logged = [Middleware(AccessLog, say=log)] if log else []  # outermost: every answer
    return Starlette(
        routes=routes, middleware=[*logged, CORS], exception_handlers=handlers, lifespan=lifespan
    )


async def refused(request: Request, error: Refused) -> JSONResponse:
    """A request s2a turns down: its status and a one-line reason as JSON."""
    return JSONResponse({"error": str(error)}, status_code=error.status)


async def http_error(request: Request, error: HTTPException) -> JSONResponse:
    """Starlette's own refusals (404, 405) in the same JSON shape."""
    return JSONResponse({"error": error.detail}, status_code=error.status_code)


def language_list(languages: tuple[str, str]) -> list[dict[str, Any]]:
    """GET /languages as LibreTranslate answers it; empty when the languages are not known."""
    source, target = languages
    if UNDETERMINED in languages:  # no code to offer a client
        return []
    return [
        {"code": source, "name": NAMES.get(source, source), "targets": [target]},
        {"code": target, "name": NAMES.get(target, target), "targets": []},
    ]


def frontend_settings(
    languages: tuple[str, str], limits: Limits, *, api_key: str | None
) -> dict[str, Any]:
    """GET /frontend/settings as LibreTranslate answers it (charLimit: a line's limit)."""
    source, target = languages
    return {
        "charLimit": limits.chars,
        "frontendTimeout": 500,  # LibreTranslate's default: ms of typing before translating
        "apiKeys": api_key is not None,
        "keyRequired": api_key is not None,
        "suggestions": False,
        "filesTranslation": True,
        "supportedFilesFormat": list(EXTENSIONS),
        "language": {
            "source": {"code": "auto", "name": "Auto Detect"},
            "target": {"code": target, "name": NAMES.get(target, target)},
        },
    }


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
