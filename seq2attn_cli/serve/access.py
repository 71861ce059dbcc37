"""The access log (`s2a serve --log-requests`): one line a request, as an operator reads it.

Client, method, path, status and milliseconds, never the query string (an api_key may be in
it) nor the text: `127.0.0.1 POST /translate 200 41 ms`. The path is logged as it came, still
percent-encoded (a "%0A" in it forges no line, a "%1b" moves no terminal), and a translated
file's name is not logged (its name is what guards it: `/download_file/…`). The line is said
when the answer has gone, or when the request failed before one began (500; 0 when nothing
was answered at all).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


class AccessLog:
    """ASGI middleware: says one line for each HTTP request it passes on to `app`."""

    def __init__(self, app: Any, *, say: Callable[[str], None]) -> None:
        self.app, self.say = app, say

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        """Pass the request on, noting its answer's status; then say the line."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start, status = time.monotonic(), 0

        async def noted(message: dict) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, noted)
        except Exception:
            status = status or 500
            raise
        finally:
            client = (scope.get("client") or ("-",))[0]
            ms = (time.monotonic() - start) * 1000
            self.say(f"{client} {scope['method']} {_path(scope)} {status} {ms:.0f} ms")


def _path(scope: dict) -> str:
    """The request's path as it came (percent-encoded, printable), a file's name left out."""
    raw = scope.get("raw_path") or scope["path"].encode("utf-8")
    path = "".join(c if c.isprintable() else "?" for c in raw.decode("latin-1"))
    return "/download_file/…" if path.startswith("/download_file/") else path
