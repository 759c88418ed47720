"""Request size limit: bodies over ``max_body_bytes`` get a 413 problem before any parsing."""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

PROBLEM_TYPE = "application/problem+json"


class BodyLimitMiddleware:
    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None:
            if not length.isdigit() or int(length) > self.max_body_bytes:
                await self._reject(send)
                return
            await self.app(scope, receive, send)
            return
        # No Content-Length (chunked): read up to the limit, then replay what was read.
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            body = message.get("body", b"")
            size += len(body)
            if size > self.max_body_bytes:
                await self._reject(send)
                return
            chunks.append(body)
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _reject(self, send: Send) -> None:
        body = json.dumps({
            "type": "about:blank", "title": "Content Too Large", "status": 413,
            "detail": f"request bodies are limited to {self.max_body_bytes:,} bytes",
        }).encode()
        await send({"type": "http.response.start", "status": 413, "headers": [
            (b"content-type", PROBLEM_TYPE.encode()), (b"content-length", str(len(body)).encode()),
        ]})
        await send({"type": "http.response.body", "body": body})
