"""A headless Chromium driven over the DevTools protocol (a websocket), and a live server.

Only what the page tests need: open a page, wait for its load event, evaluate an expression,
collect console errors, uncaught exceptions, failed loads and the URLs the page requested; set
the viewport and the media type, and save a full-page screenshot.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import uvicorn
from websockets.sync.client import ClientConnection, connect

from service.app import create_app
from service.settings import Settings

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--no-default-browser-check"]


def chromium_binary() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


@contextmanager
def live_server(port: int) -> Iterator[str]:
    config = uvicorn.Config(create_app(Settings()), host="127.0.0.1", port=port,
                            log_level="warning", access_log=False, lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


class Page:
    """One browser tab over CDP."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.next_id = 0
        self.errors: list[str] = []
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, timeout: float = 30, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        my_id = self.next_id
        self.ws.send(json.dumps({"id": my_id, "method": method, "params": params}))
        deadline = time.monotonic() + timeout
        while True:
            message = json.loads(self.ws.recv(timeout=max(0.01, deadline - time.monotonic())))
            if message.get("id") == my_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            self._event(message)

    def _event(self, message: dict[str, Any]) -> None:
        method, params = message.get("method", ""), message.get("params", {})
        self.events.append(message)
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append("console: " + json.dumps(params.get("args"))[:300])
        elif method == "Runtime.exceptionThrown":
            self.errors.append("exception: " + json.dumps(params.get("exceptionDetails"))[:300])
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            self.errors.append("log: " + str(params["entry"].get("text"))[:300])

    def wait_for(self, method: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while True:
            message = json.loads(self.ws.recv(timeout=max(0.01, deadline - time.monotonic())))
            self._event(message)
            if message.get("method") == method:
                return

    def open(self, url: str) -> None:
        self.call("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")

    def requested_urls(self) -> list[str]:
        """Every URL the page asked for since the Network domain was enabled."""
        return [e["params"]["request"]["url"] for e in self.events
                if e.get("method") == "Network.requestWillBeSent"]

    def set_viewport(self, width: int, height: int = 900) -> None:
        """A window ``width`` CSS pixels wide; below 500 a phone (its viewport meta applies)."""
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height,
                  deviceScaleFactor=1, mobile=width < 500)

    def set_media(self, media: str) -> None:
        """'print' or 'screen' ('' restores the default)."""
        self.call("Emulation.setEmulatedMedia", media=media)

    def screenshot(self, path: Path) -> None:
        """The whole page, not only the window, as a PNG."""
        size = self.call("Page.getLayoutMetrics")["cssContentSize"]
        shot = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                         clip={"x": 0, "y": 0, "width": size["width"],
                               "height": min(size["height"], 16_000), "scale": 1})
        path.write_bytes(base64.b64decode(shot["data"]))


# Every host name but the loopback address fails to resolve: the network cut, as offline.
OFFLINE = ("--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",)


@contextmanager
def browser(binary: str, port: int, extra_flags: tuple[str, ...] = ()) -> Iterator[Page]:
    # chromium may still write to its profile while it exits: cleanup errors are not failures
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as profile:
        process = subprocess.Popen(
            [binary, *FLAGS, *extra_flags, f"--user-data-dir={profile}",
             f"--remote-debugging-port={port}",
             "--remote-debugging-address=127.0.0.1", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            ws_url = _page_socket(port)
            with connect(ws_url, max_size=None, open_timeout=20) as ws:
                page = Page(ws)
                for domain in ("Page", "Runtime", "Log", "Network"):
                    page.call(f"{domain}.enable")
                yield page
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)


def _page_socket(port: int) -> str:
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=2) as r:
                targets = json.loads(r.read())
            pages = [t for t in targets if t.get("type") == "page"]
            if pages:
                url: str = pages[0]["webSocketDebuggerUrl"]
                return url
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError("chromium did not open its DevTools port")
        time.sleep(0.1)
