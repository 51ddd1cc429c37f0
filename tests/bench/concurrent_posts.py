#!/usr/bin/env python3
"""Send N POSTs at once, each on its own connection, and print each one's status and seconds.

    concurrent_posts.py HOST PORT PATH TOKEN BODY N

One process and one event loop, so that the load generator costs little CPU on the machine
under test (300 curl processes would). Prints "<status> <seconds>" per request, in the order
they finished. Loopback only.
"""
import asyncio
import ipaddress
import sys
import time


async def one(host, port, path, token, body):
    start = time.monotonic()
    try:
        reader, writer = await asyncio.open_connection(host, port)
        data = body.encode()
        writer.write((f"POST {path} HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer {token}\r\n"
                      f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
                      f"Connection: close\r\n\r\n").encode() + data)
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        await reader.read()
        writer.close()
    except (OSError, asyncio.IncompleteReadError, ValueError):
        status = 0
    return status, time.monotonic() - start


async def main():
    host, port, path, token, body, n = sys.argv[1:7]
    if not ipaddress.ip_address(host).is_loopback:
        sys.exit("concurrent_posts.py: loopback addresses only")
    tasks = [asyncio.ensure_future(one(host, int(port), path, token, body))
             for _ in range(int(n))]
    for t in asyncio.as_completed(tasks):
        status, secs = await t
        print(f"{status} {secs:.4f}", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
