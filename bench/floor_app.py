"""The serving layer alone: an ASGI app that reads a request and answers a fixed Chat
completion, served by uvicorn as ``interlock serve`` serves (uvloop and httptools when
installed, no access log). ``bench/small_bench.py --floor`` measures it beside the
gateway with the same driver: what any Python app on this stack pays per request.

Usage: python bench/floor_app.py PORT
"""

from __future__ import annotations

import sys

import uvicorn
from starlette.types import Receive, Scope, Send

ANSWER = (
    b'{"id":"chatcmpl-floor","object":"chat.completion","created":1700000000,"model":"M",'
    b'"choices":[{"index":0,"message":{"role":"assistant","content":"You said: hello"},'
    b'"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":3,"total_tokens":6}}'
)
HEADERS = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(ANSWER))]


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    if scope["path"] == "/healthz":
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
    await send({"type": "http.response.body", "body": ANSWER})


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", access_log=False)
