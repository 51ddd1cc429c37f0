#!/usr/bin/env python3
"""Send N POSTs at once, each on its own connection, and print each one's status and seconds.

    concurrent_posts.py HOST PORT PATH TOKEN BODY N

One process and one event loop, so that the load generator costs little CPU on the machine
under test (300 curl processes would). A request's seconds run from just before its connect
to the first byte of its answer, taken in the loop's data callback: when 300 answers arrive
together, a coroutine per request would add the loop's time for the ones before it (about
50 ms for 300), which is the client's delay, not the server's. Prints "<status> <seconds>" per
request, in the order they finished. Loopback only.
"""
import asyncio
import ipaddress
import sys
import time


class Post(asyncio.Protocol):
    def __init__(self, request, done):
        self.request = request
        self.done = done
        self.start = time.monotonic()
        self.first = None
        self.data = b""

    def connection_made(self, transport):
        transport.write(self.request)

    def data_received(self, data):
        if self.first is None:
            self.first = time.monotonic()
        self.data += data

    def connection_lost(self, exc):
        if not self.done.done():
            self.done.set_result(None)


async def one(loop, host, port, request):
    done = loop.create_future()
    proto = Post(request, done)
    try:
        await loop.create_connection(lambda: proto, host, port)
        await done
        status = int(proto.data.split(b" ", 2)[1]) if proto.first is not None else 0
    except (OSError, ValueError, IndexError):
        status = 0
    end = proto.first if proto.first is not None else time.monotonic()
    return status, end - proto.start


async def main():
    host, port, path, token, body, n = sys.argv[1:7]
    if not ipaddress.ip_address(host).is_loopback:
        sys.exit("concurrent_posts.py: loopback addresses only")
    data = body.encode()
    request = (f"POST {path} HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer {token}\r\n"
               f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
               f"Connection: close\r\n\r\n").encode() + data
    loop = asyncio.get_running_loop()
    tasks = [asyncio.ensure_future(one(loop, host, int(port), request)) for _ in range(int(n))]
    for t in asyncio.as_completed(tasks):
        status, secs = await t
        print(f"{status} {secs:.4f}", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
