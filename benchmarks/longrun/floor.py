"""The floor: a bare pass-through on the gateway's own stack, with none of the gateway's work.

uvicorn (httptools, uvloop) reads the body, the gateway's HTTP/1.1 client (router/transport/http1/, as
for any plain-HTTP upstream) sends it to the upstream, and the answer's bytes go back: no
parsing, no trajectory, no privacy, no ledger; malloc tuned as the gateway's process is
(router/runtime.py). What it adds over a direct call is what any gateway on this stack adds
before doing anything (reading a 400 KB body, sending it again), so the long-run report shows
how far above that floor the gateway's own work is.

Run as `python -m benchmarks.longrun.floor --port P --upstream http://127.0.0.1:U`.
"""

from __future__ import annotations

import argparse
from typing import Any

import uvicorn

from router.runtime import tune_malloc
from router.transport.http1 import Http1Session

ANSWER_HEADERS = [(b"content-type", b"application/json")]


class PassThrough:
    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.session: Http1Session | None = None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            if self.session is not None:
                await self.session.close()
            await send({"type": "lifespan.shutdown.complete"})
            return
        parts = []
        while True:
            message = await receive()
            parts.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        if self.session is None:
            self.session = Http1Session(self.upstream, 512, connect_timeout=5.0)
        if scope["method"] == "GET":
            status, body = 200, b"{}"  # readiness
        else:
            url = self.upstream + scope["path"]
            headers = {"content-type": "application/json"}
            answer = await self.session.post(url, data=b"".join(parts), headers=headers)
            status = answer.status
            body = b"".join([part async for part in answer.content.iter_any()])
        headers = [*ANSWER_HEADERS, (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--upstream", required=True, help="the upstream's origin, e.g. http://127.0.0.1:9000")
    args = parser.parse_args()
    app = PassThrough(args.upstream)
    tune_malloc()  # the gateway's process settings (router/runtime.py), so the floor is its stack's
    uvicorn.run(app, host="127.0.0.1", port=args.port, loop="uvloop", http="httptools", log_level="warning")


if __name__ == "__main__":
    main()
