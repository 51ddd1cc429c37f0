#!/usr/bin/env python3
"""Hold N keep-alive connections open against a server, idle after one request each.

    idle_connections.py HOST PORT N [PATH] [--slowloris]

Each connection sends `GET PATH` (default /healthz) with keep-alive, reads the whole answer and
then stays open, idle, the way a gateway's upstream pool or an idle browser keeps it. With
--slowloris the connections instead send a request line and then one header byte per second,
never finishing their headers. Prints "ready <open> <failed>" on stdout once every connection
is set up, then holds them until stdin closes (or SIGTERM), and prints "closed <n>" for the
connections the server closed meanwhile. Loopback only: HOST must be in 127.0.0.0/8.
"""
import asyncio
import ipaddress
import resource
import sys


async def one(host, port, path, slow, ready, stop, state):
    try:
        reader, writer = await asyncio.open_connection(host, port)
    except OSError:
        state["failed"] += 1
        ready.release()
        return
    try:
        if slow:
            writer.write(f"GET {path} HTTP/1.1\r\nHost: bench\r\n".encode())
            await writer.drain()
            ready.release()
            while not stop.is_set():
                writer.write(b"X")
                await writer.drain()
                try:
                    await asyncio.wait_for(stop.wait(), 1.0)
                except asyncio.TimeoutError:
                    pass
        else:
            writer.write(f"GET {path} HTTP/1.1\r\nHost: bench\r\n\r\n".encode())
            await writer.drain()
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            await reader.readexactly(length)
            state["open"] += 1
            ready.release()
            # idle: the server closing the connection ends the read with EOF
            closed = asyncio.ensure_future(reader.read(1))
            waiter = asyncio.ensure_future(stop.wait())
            done, _ = await asyncio.wait({closed, waiter}, return_when=asyncio.FIRST_COMPLETED)
            if closed in done:
                state["closed"] += 1
            for t in (closed, waiter):
                t.cancel()
    except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        state["failed"] += 1
        ready.release()
    finally:
        writer.close()


async def main():
    args = [a for a in sys.argv[1:] if a != "--slowloris"]
    slow = "--slowloris" in sys.argv
    host, port, n = args[0], int(args[1]), int(args[2])
    path = args[3] if len(args) > 3 else "/healthz"
    if not ipaddress.ip_address(host).is_loopback:
        sys.exit("idle_connections.py: loopback addresses only")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, n + 256)), hard))
    state = {"open": 0, "failed": 0, "closed": 0}
    ready = asyncio.Semaphore(0)
    stop = asyncio.Event()
    tasks = []
    for i in range(n):
        tasks.append(asyncio.ensure_future(one(host, port, path, slow, ready, stop, state)))
        if i % 200 == 199:
            await asyncio.sleep(0.01)  # do not overrun the listen backlog
    for _ in range(n):
        await ready.acquire()
    print(f"ready {state['open'] if not slow else n - state['failed']} {state['failed']}",
          flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)
    stop.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    print(f"closed {state['closed']}", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
