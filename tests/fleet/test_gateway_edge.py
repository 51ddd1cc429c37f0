#!/usr/bin/env python3
"""The gateway's limits agree with the instances' (docs/edge-contract.md, docs/fleet.md).

Through nginx, a request head of any size gets an answer, never a closed connection or a 502:
up to what an instance accepts it is served; a little over it, the instance answers 414/431;
far over it, nginx answers 414/431 itself; all in problem+json. A body of RECALLGATE_MAX_BODY
(1 MiB) reaches the instance; one byte more is refused 413 (problem+json) by nginx unread. The gateway does not
serve /metrics, it sends an HTTP/1.0 request without Host on with one, and it gives every
request one id that the client, the gateway's access log
and the instance's log share. With every instance stopped, the gateway's own 502 is
problem+json too (code instance_unavailable, Retry-After: 1).
"""
import socket
import time

import fleet


def raw(port, head, body=b""):
    """The status line of the answer to a raw request, or 'closed'."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        s.sendall(head.encode() + body)
        data = b""
        while b"\r\n\r\n" not in data:
            d = s.recv(65536)
            if not d:
                break
            data += d
    except OSError as e:
        return f"error {type(e).__name__}"
    finally:
        s.close()
    if not data:
        return "closed"
    line, _, rest = data.partition(b"\r\n")
    problem = b"application/problem+json" in rest.split(b"\r\n\r\n", 1)[0]
    return f"{line.decode(errors='replace').split(' ')[1]}{' problem' if problem else ''}"


def access_line(f, rid):
    """The gateway's access log line of request id rid (written just after the answer)."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        with open(f.gateway.access_log) as log:
            lines = [ln for ln in log if f"rid={rid} " in ln]
        if lines:
            return lines[-1]
        time.sleep(0.05)
    fleet.fail(f"the access log has no line with rid={rid}")


def test():
    args = fleet.parse_args(__doc__)
    with fleet.Fleet(args) as f:
        gw = f.gateway.port
        seen = []
        for n in (1000, 4000, 4097, 5000, 6000, 6100, 7000, 9000, 20000):
            uri = raw(gw, f"GET /healthz?{'a' * n} HTTP/1.1\r\nHost: g\r\nConnection: close\r\n\r\n")
            pad = "".join(f"X-Pad-{i}: {'b' * 990}\r\n" for i in range(n // 1000))
            head = raw(gw, f"GET /healthz HTTP/1.1\r\nHost: g\r\n{pad}Connection: close\r\n\r\n")
            line = raw(gw, f"GET /healthz HTTP/1.1\r\nHost: g\r\nX-Big: {'c' * n}\r\n"
                           "Connection: close\r\n\r\n")
            seen.append((n, uri, head, line))
            for what, got in (("query", uri), ("header lines", head), ("one header", line)):
                if got not in ("200", "400 problem", "414 problem", "431 problem"):
                    fleet.fail(f"a request with {n} bytes of {what} got {got} through nginx "
                               "(200 or a problem+json 400/414/431 expected)")
        fleet.log("head sizes through the gateway (query, header lines, one header): " +
                  "; ".join(f"{n}: {u}, {h}, {o}" for n, u, h, o in seen))
        if seen[1][1] != "200" or seen[2][1] != "414 problem":
            fleet.fail(f"a 4000-byte query must be served and a 4097-byte one answered 414 by "
                       f"the instance: {seen[1][1]}, {seen[2][1]}")

        token = f.token("memory:write")
        limit = 1048576  # RECALLGATE_MAX_BODY and client_max_body_size
        # (size, answer, whether an instance saw it): at the limit the instance refuses the
        # content (over 64 KiB: 422); one byte more, nginx refuses the body unread.
        for size, want, proxied in ((limit, "422 problem", True), (limit + 1, "413 problem", False)):
            body = b'{"source_kind": "note", "content": "' + b"x" * (size - 38) + b'"}'
            assert len(body) == size
            rid = f"fleet-edge-body-{size}"
            got = raw(gw, "POST /v1/memory/sources HTTP/1.1\r\nHost: g\r\n"
                          f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
                          f"X-Request-Id: {rid}\r\nContent-Length: {size}\r\n"
                          "Connection: close\r\n\r\n", body)
            line = access_line(f, rid)
            seen = "upstream=-" not in line
            if got != want or seen != proxied:
                fleet.fail(f"a body of {size} bytes: {got}, {'passed to' if seen else 'not seen by'}"
                           f" an instance (want {want}, {'passed' if proxied else 'refused by nginx'})")

        # An HTTP/1.0 request needs no Host; nginx's HTTP/1.1 request to the instance does.
        got = raw(gw, "GET /healthz HTTP/1.0\r\n\r\n")
        if got != "200":
            fleet.fail(f"an HTTP/1.0 request without Host got {got} through nginx")

        c = fleet.Client(f.gateway_url)
        if c.request("GET", "/metrics").status != 404:
            fleet.fail("the gateway serves /metrics (it would be a random instance's)")
        mine = c.request("GET", "/healthz", headers={"X-Request-Id": "fleet-edge-1"})
        given = c.request("GET", "/healthz")
        c.close()
        rid = given.header("X-Request-Id") or ""
        if mine.header("X-Request-Id") != "fleet-edge-1" or len(rid) != 32:
            fleet.fail(f"request ids: {mine.header('X-Request-Id')}, {rid}")
        access_line(f, rid)

        # Every instance gone: nginx's own 502, in the service's shape.
        for inst in f.instances:
            inst.stop()
        s = socket.create_connection(("127.0.0.1", gw), timeout=10)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: g\r\nX-Request-Id: fleet-edge-502\r\n"
                  b"Connection: close\r\n\r\n")
        data = b""
        while True:
            d = s.recv(65536)
            if not d:
                break
            data += d
        s.close()
        head, _, body = data.partition(b"\r\n\r\n")
        if not (head.startswith(b"HTTP/1.1 502 ") and b"application/problem+json" in head
                and b"Retry-After: 1" in head and b"X-Request-Id: fleet-edge-502" in head
                and b'"code":"instance_unavailable"' in body
                and b'"request_id":"fleet-edge-502"' in body):
            fleet.fail(f"with no instance up the gateway answered:\n{data.decode(errors='replace')}")


if __name__ == "__main__":
    fleet.main(test)
