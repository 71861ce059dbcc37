"""POST /steps: one sentence decoded step by step, every vector included, by each model served
(`--compare`: a second one); the page at /walk plays it (decoding/explain/walk.py computes it)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from ..decoding.explain.walk import walk
from ..decoding.translator import Translator
from .fields import Limits, RateLimit, Refused, json_object, read_body


def steps_route(
    walked: list[tuple[str, Translator]],
    *,
    limits: Limits,
    key: str | None,
    beam: int,
    pool: ThreadPoolExecutor,
    rate: RateLimit,
) -> Callable[[Request], Awaitable[JSONResponse]]:
    """The /steps handler; it decodes in `pool`, the search thread, so torch's threads are
    never shared between two searches; a request counts towards --req-limit as any other."""

    async def steps(request: Request) -> JSONResponse:
        rate.count(request.client.host if request.client else "")
        sentence = sentence_of(json_object(await read_body(request, limits.body_bytes)),
                               limits=limits, key=key)  # fmt: skip
        work = asyncio.get_running_loop().run_in_executor(pool, walks_of, walked, sentence, beam)
        try:
            return JSONResponse({"models": await asyncio.wait_for(work, limits.timeout)})
        except TimeoutError:
            raise Refused(503, f"not decoded within {limits.timeout:g} s; try again") from None
        except ValueError as error:  # empty, or so long that translate cuts it in parts
            raise Refused(422, str(error)) from None

    return steps


def sentence_of(data: dict[str, Any], *, limits: Limits, key: str | None) -> str:
    """The one sentence a /steps body asks for: {"q": "..."}, within the limits."""
    if key is not None and data.get("api_key") != key:
        raise Refused(403, "invalid or missing api_key")
    unknown = sorted(set(data) - {"q", "api_key"})
    if unknown:
        raise Refused(422, f"unknown field {unknown[0]!r}; known: api_key, q")
    q = data.get("q")
    if not isinstance(q, str) or not q.strip():
        raise Refused(422, "q must be one sentence (a non-empty string)")
    if "\n" in q.strip():
        raise Refused(422, "q: one sentence a request; this one has several lines")
    if len(q) > limits.chars:
        raise Refused(
            400, f"q: {len(q)} characters; the limit is {limits.chars} (the server's --max-chars)"
        )
    return q


def walks_of(models: list[tuple[str, Translator]], sentence: str, beam: int) -> list[dict]:
    """/steps' answer: each model's step-by-step decoding of `sentence`, labelled by name."""
    return [{"name": name, **walk(t, sentence, beam=beam).as_dict()} for name, t in models]
