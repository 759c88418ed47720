"""A small fake of the Slack Web API on a loopback port, for the bot's tests.

It answers ``auth.test``, ``chat.postMessage``, ``chat.update``, ``chat.unfurl``,
``conversations.replies`` and ``views.publish`` like Slack does (JSON, ``ok``), keeps the
messages posted to each channel (with their metadata and blocks, so a thread reads back), and
records every call, including posts to response URLs (``/response/<channel>``). ``rate_limit``
makes the next calls of a method answer 429 with ``Retry-After``."""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

BOT_USER = "UFITBOT"
BOT_ID = "BFITBOT"
TEAM = "T0TEAM"


@dataclass
class Call:
    method: str  # "chat.postMessage", ..., or "response_url"
    args: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


class FakeSlack:
    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.messages: dict[str, list[dict[str, Any]]] = {}
        self._limited: dict[str, int] = {}
        self._refuse: dict[str, str] = {}
        self._ts = itertools.count(1)
        self._changed = threading.Condition()
        self.app = Starlette(routes=[
            Route("/api/{method}", self._api, methods=["GET", "POST"]),
            Route("/response/{channel}", self._response_url, methods=["POST"]),
        ])
        self.url = ""

    # -- what tests use -------------------------------------------------------------------
    @property
    def api_url(self) -> str:
        return self.url + "/api/"

    def response_url(self, channel: str) -> str:
        return f"{self.url}/response/{channel}"

    def reset(self) -> None:
        """Forget every call and message (between tests sharing one fake)."""
        with self._changed:
            self.calls.clear()
            self.messages.clear()
            self._limited.clear()
            self._refuse.clear()

    def rate_limit(self, method: str, times: int = 1) -> None:
        self._limited[method] = times

    def refuse_blocks(self, method: str, error: str = "invalid_blocks") -> None:
        """The next call of ``method`` that carries blocks is refused with ``error``."""
        self._refuse[method] = error

    def calls_of(self, method: str) -> list[Call]:
        with self._changed:
            return [c for c in self.calls if c.method == method]

    def wait_for(self, method: str, count: int = 1, timeout: float = 10.0,
                 where: Callable[[Call], bool] = lambda c: True) -> list[Call]:
        """The calls of ``method`` once there are ``count`` of them (fails after ``timeout``)."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                found = [c for c in self.calls if c.method == method and where(c)]
                if len(found) >= count:
                    return found
                left = deadline - time.monotonic()
                assert left > 0, f"no {method} x{count} within {timeout} s: {self.summary()}"
                self._changed.wait(left)

    def summary(self) -> list[str]:
        return [c.method for c in self.calls]

    def add_message(self, channel: str, message: dict[str, Any]) -> str:
        ts = message.get("ts") or self._next_ts()
        with self._changed:
            self.messages.setdefault(channel, []).append({**message, "ts": ts})
        return ts

    # -- the fake API -------------------------------------------------------------------------
    def _next_ts(self) -> str:
        return f"{1_700_000_000 + next(self._ts)}.000100"

    def _record(self, call: Call) -> None:
        with self._changed:
            self.calls.append(call)
            self._changed.notify_all()

    async def _args(self, request: Request) -> dict[str, Any]:
        args: dict[str, Any] = dict(request.query_params)
        raw = await request.body()
        if request.headers.get("content-type", "").startswith("application/json"):
            args.update(json.loads(raw or b"{}"))
        else:
            args.update(parse_qsl(raw.decode()))
        for key in ("blocks", "metadata", "unfurls", "view"):
            if isinstance(args.get(key), str):
                args[key] = json.loads(args[key])
        return args

    async def _api(self, request: Request) -> Response:
        method = request.path_params["method"]
        args = await self._args(request)
        self._record(Call(method, args, dict(request.headers)))
        if self._limited.get(method):
            self._limited[method] -= 1
            return JSONResponse({"ok": False, "error": "ratelimited"}, status_code=429,
                                headers={"Retry-After": "0"})
        if args.get("blocks") and self._refuse.get(method):
            return JSONResponse({"ok": False, "error": self._refuse.pop(method)})
        if not request.headers.get("authorization", "").startswith("Bearer xoxb-"):
            return JSONResponse({"ok": False, "error": "not_authed"})
        handler = getattr(self, "_" + method.replace(".", "_"), None)
        if handler is None:
            return JSONResponse({"ok": False, "error": "unknown_method"})
        return JSONResponse(handler(args))

    def _auth_test(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "url": "https://fake.slack.com/", "team": "Team", "user": "fitcheck",
                "team_id": TEAM, "user_id": BOT_USER, "bot_id": BOT_ID,
                "is_enterprise_install": False}

    def _chat_postMessage(self, args: dict[str, Any]) -> dict[str, Any]:
        message = {"type": "message", "user": BOT_USER, "bot_id": BOT_ID, "text": args.get("text"),
                   "blocks": args.get("blocks"), "metadata": args.get("metadata"),
                   "thread_ts": args.get("thread_ts")}
        ts = self.add_message(args["channel"], message)
        return {"ok": True, "channel": args["channel"], "ts": ts, "message": {**message, "ts": ts}}

    def _chat_update(self, args: dict[str, Any]) -> dict[str, Any]:
        for message in self.messages.get(args["channel"], []):
            if message["ts"] == args["ts"]:
                message.update({k: args.get(k) for k in ("text", "blocks", "metadata")})
                return {"ok": True, "channel": args["channel"], "ts": args["ts"]}
        return {"ok": False, "error": "message_not_found"}

    def _chat_unfurl(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True}

    def _views_publish(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "view": args.get("view")}

    def _conversations_replies(self, args: dict[str, Any]) -> dict[str, Any]:
        root = args["ts"]
        thread = [m for m in self.messages.get(args["channel"], [])
                  if m["ts"] == root or m.get("thread_ts") == root]
        if args.get("include_all_metadata") not in ("true", "1", True):
            thread = [{k: v for k, v in m.items() if k != "metadata"} for m in thread]
        return {"ok": True, "messages": thread, "has_more": False}

    async def _response_url(self, request: Request) -> Response:
        channel = request.path_params["channel"]
        body = json.loads(await request.body())
        self._record(Call("response_url", {**body, "channel": channel}, dict(request.headers)))
        if body.get("blocks") and self._refuse.get("response_url"):
            return Response(self._refuse.pop("response_url"), status_code=400)
        if body.get("response_type") == "in_channel":
            self.add_message(channel, {"type": "message", "user": BOT_USER, "bot_id": BOT_ID,
                                       "text": body.get("text"), "blocks": body.get("blocks")})
        return Response("ok")


@contextmanager
def serve(app: Any, port: int = 0) -> Iterator[str]:
    """Runs an ASGI app under uvicorn in a thread on 127.0.0.1; yields its base URL."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                           lifespan="on", access_log=False))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "server did not start"
        time.sleep(0.005)
    bound = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{bound}"
    finally:
        server.should_exit = True
        thread.join(10)


@contextmanager
def fake_slack() -> Iterator[FakeSlack]:
    fake = FakeSlack()
    with serve(fake.app) as url:
        fake.url = url
        yield fake
