"""Headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`:
JSON messages ending in NUL on fds 3 and 4), for the browser tests: no Selenium, no
websocket client. `evaluate` runs JavaScript in the page, which can look inside the shadow
DOMs of TensorBoard's Polymer dashboards (what `--dump-dom` cannot)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time


def find_chromium() -> str | None:
    """The Chromium binary (Debian's /usr/bin/chromium is a shell wrapper that does not
    pass the pipe's descriptors on, so its real binary is preferred)."""
    for path in ("/usr/lib/chromium/chromium", shutil.which("chromium"),
                 shutil.which("chromium-browser"), shutil.which("google-chrome")):
        if path and os.access(path, os.X_OK):
            return path
    return None


class Chromium:
    def __init__(self, binary: str, url: str):
        to_chrome_r, to_chrome_w = os.pipe()
        from_chrome_r, from_chrome_w = os.pipe()

        def wire_fds():  # in the child: the protocol's fds 3 (commands) and 4 (replies)
            a, b = os.dup(to_chrome_r), os.dup(from_chrome_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self._proc = subprocess.Popen(  # noqa: S603 - a fixed local binary
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--remote-debugging-pipe", "--window-size=1400,1000", url],
            close_fds=False, preexec_fn=wire_fds, stdout=subprocess.DEVNULL,  # noqa: PLW1509
            stderr=subprocess.DEVNULL)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._out = os.fdopen(to_chrome_w, "wb", buffering=0)
        self._in = os.fdopen(from_chrome_r, "rb", buffering=0)
        self._buffer, self._id = b"", 0
        page = next(t for t in self.send("Target.getTargets")["targetInfos"]
                    if t["type"] == "page")
        self._session = self.send("Target.attachToTarget",
                                  {"targetId": page["targetId"], "flatten": True})["sessionId"]

    def send(self, method: str, params: dict | None = None, session: str | None = None):
        self._id += 1
        message = {"id": self._id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self._out.write(json.dumps(message).encode() + b"\0")
        while True:
            while b"\0" not in self._buffer:
                chunk = self._in.read(1 << 16)
                if not chunk:
                    raise RuntimeError("Chromium closed the DevTools pipe")
                self._buffer += chunk
            raw, self._buffer = self._buffer.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def evaluate(self, expression: str):
        result = self.send("Runtime.evaluate", {"expression": expression,
                                                "returnByValue": True}, self._session)
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 30.0):
        """Evaluates `expression` until it gives a truthy value (returned), or None."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                value = self.evaluate(expression)
            except RuntimeError as e:  # the page is still navigating: no context yet
                if "execution context" not in str(e):
                    raise
                value = None
            if value:
                return value
            time.sleep(0.25)
        return None

    def close(self) -> None:
        self._proc.kill()
        self._proc.wait()
        self._out.close()
        self._in.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
