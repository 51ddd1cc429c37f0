"""The hostile corpus: raw HTTP/1.1 requests that attack the framing, as data.

Each case is a dict:
  name    unique id (run_corpus.py --only NAME)
  steps   what the client does, in order:
            ("send", bytes)   write the bytes
            ("sleep", secs)   pause (lets the server act on what it has)
            ("shut_wr",)      half-close: shutdown(SHUT_WR), then read the answer
            ("close",)        disconnect without reading (FIN)
            ("rst",)          disconnect with a reset (SO_LINGER 0)
  expect  what the service should do:
            an int            that status; from 400 up with an application/problem+json body
            a list of ints    one of those statuses
            "closed"          the connection closes without an answer
            "any"             whatever (the client went away: only the server's health counts)
  why     one line: what it attacks
  repeat  optional: how many times it is sent (a race is hit more surely)
  mhd     optional: libmicrohttpd 0.9.75 answers it itself, before the service sees it, with
          its own HTML page (the status is still `expect`); docs/edge-contract.md lists these.
          Through the gateway (run_corpus.py --gateway) nginx answers them first, in
          problem+json.

Bytes may hold the placeholders {TOKEN} (a valid token with admin and memory scopes) and
{FAKE} (a well-formed token that does not exist: the server must ask the database, on a
lane). Generated payloads are plain Python expressions, so the corpus stays deterministic.
"""

H = b"Host: 127.0.0.1\r\n"
AUTH = b"Authorization: Bearer {TOKEN}\r\n"
FAKE = b"Authorization: Bearer {FAKE}\r\n"
JSON = b"Content-Type: application/json\r\n"
SEARCH = b'{"query":"x"}'


def req(line, *headers, body=b""):
    return line + b"\r\n" + H + b"".join(headers) + b"\r\n" + body


def chunked(data):
    return b"%x\r\n" % len(data) + data + b"\r\n0\r\n\r\n"


UI_PATH = b"/ui/" + b"a" * 8192
QUERY_6K = b"/v1/tokens?q=" + b"A" * 6000
QUERY_9K = b"/v1/tokens?q=" + b"A" * 9000
BIG_HEADERS = b"".join(b"X-Pad-%02d: %s\r\n" % (i, b"p" * 100) for i in range(62))  # ~7 KB
HUGE_HEADERS = b"".join(b"X-Pad-%02d: %s\r\n" % (i, b"p" * 100) for i in range(95))  # ~11 KB
UNKNOWN_90K = b"{" + b",".join(b'"f%d":1' % i for i in range(90000)) + b',"query":"x"}'

CASES = [
    # ---- Transfer-Encoding
    dict(name="te_gzip_chunked", expect=400, why="a coding other than chunked",
         steps=[("send", req(b"POST /v1/memory/search HTTP/1.1", AUTH, JSON,
                             b"Transfer-Encoding: gzip, chunked\r\n", body=chunked(SEARCH)))]),
    dict(name="te_gzip_chunked_noauth", expect=400, why="the same, refused before any token",
         steps=[("send", req(b"POST /v1/memory/search HTTP/1.1", JSON,
                             b"Transfer-Encoding: gzip, chunked\r\n", body=chunked(SEARCH)))]),
    dict(name="te_gzip_chunked_fake", expect=400, why="the same, with a token for the lane",
         steps=[("send", req(b"POST /v1/memory/search HTTP/1.1", FAKE, JSON,
                             b"Transfer-Encoding: gzip, chunked\r\n", body=chunked(SEARCH)))]),
    dict(name="te_xchunked", expect=400, why="a look-alike of chunked",
         steps=[("send", req(b"POST /v1/memory/search HTTP/1.1", AUTH, JSON,
                             b"Transfer-Encoding: xchunked\r\n", body=chunked(SEARCH)))]),
    dict(name="te_xchunked_fake", expect=400, why="the same, with a token for the lane",
         steps=[("send", req(b"POST /v1/memory/search HTTP/1.1", FAKE, JSON,
                             b"Transfer-Encoding: xchunked\r\n", body=chunked(SEARCH)))]),
    dict(name="te_xchunked_get_404", expect=400, why="a look-alike of chunked on no route",
         steps=[("send", req(b"GET /nowhere HTTP/1.1", b"Transfer-Encoding: xchunked\r\n",
                             body=chunked(b"x")))]),
    dict(name="te_chunked_and_cl", expect=400, why="Content-Length with Transfer-Encoding",
         steps=[("send", req(b"POST /v1/memory/search HTTP/1.1", AUTH, JSON,
                             b"Content-Length: 13\r\nTransfer-Encoding: chunked\r\n",
                             body=chunked(SEARCH)))]),
    dict(name="te_xchunked_and_cl", expect=400, why="Content-Length with a look-alike",
         steps=[("send", req(b"POST /v1/memory/search HTTP/1.1", AUTH, JSON,
                             b"Content-Length: 13\r\nTransfer-Encoding: xchunked\r\n",
                             body=SEARCH))]),
    dict(name="cl_twice", expect=400, why="two Content-Lengths",
         steps=[("send", req(b"POST /v1/memory/search HTTP/1.1", AUTH, JSON,
                             b"Content-Length: 13\r\nContent-Length: 14\r\n", body=SEARCH))]),
    # ---- chunk sizes
    dict(name="chunk_size_bad", mhd=True, expect=400, why="a chunk size that is not hex",
         steps=[("send", req(b"POST /v1/memory/search HTTP/1.1", AUTH, JSON,
                             b"Transfer-Encoding: chunked\r\n", body=b"zz\r\nabc\r\n0\r\n\r\n"))]),
    dict(name="chunk_size_huge", mhd=True, expect=413, why="a chunk size beyond 64 bits",
         steps=[("send", req(b"POST /v1/memory/search HTTP/1.1", AUTH, JSON,
                             b"Transfer-Encoding: chunked\r\n",
                             body=b"fffffffffffffffffffff\r\nabc\r\n0\r\n\r\n"))]),
    dict(name="chunk_size_large_then_close", expect="any", why="a 1 TB chunk, then gone",
         steps=[("send", req(b"POST /v1/memory/search HTTP/1.1", AUTH, JSON,
                             b"Transfer-Encoding: chunked\r\n", body=b"ffffffffff\r\nabc")),
                ("sleep", 0.2), ("close",)]),
    dict(name="chunk_size_large_fake_close", expect="any", why="the same on the lane path",
         steps=[("send", req(b"POST /v1/memory/search HTTP/1.1", FAKE, JSON,
                             b"Transfer-Encoding: chunked\r\n", body=b"ffffffffff\r\nabc")),
                ("sleep", 0.2), ("close",)]),
    # ---- request line
    dict(name="http2_request_line", mhd=True, expect=505, why="HTTP/2.0 in an HTTP/1 request line",
         steps=[("send", req(b"GET /healthz HTTP/2.0"))]),
    dict(name="httx_request_line", mhd=True, expect=400, why="not HTTP at all",
         steps=[("send", req(b"GET /healthz HTTX/1.1"))]),
    dict(name="http10_no_host", expect=200, why="HTTP/1.0 needs no Host",
         steps=[("send", b"GET /healthz HTTP/1.0\r\n\r\n")]),
    dict(name="missing_host", expect=400, why="HTTP/1.1 without Host",
         steps=[("send", b"GET /healthz HTTP/1.1\r\n\r\n")]),
    dict(name="missing_host_post", expect=400, why="the same, with a body",
         steps=[("send", b"POST /v1/memory/search HTTP/1.1\r\nContent-Length: 13\r\n"
                         b"Content-Type: application/json\r\n\r\n" + SEARCH)]),
    # ---- sizes of the head
    dict(name="query_6k", expect=414, why="a 6 KB query string",
         steps=[("send", req(b"GET " + QUERY_6K + b" HTTP/1.1", AUTH))]),
    dict(name="query_9k", mhd=True, expect=414, why="a 9 KB query string (past the connection's memory)",
         steps=[("send", req(b"GET " + QUERY_9K + b" HTTP/1.1", AUTH))]),
    dict(name="query_6k_post_body", expect=414, why="a 6 KB query string with a body",
         steps=[("send", req(b"POST " + QUERY_6K + b" HTTP/1.1", AUTH, JSON,
                             b"Content-Length: 13\r\n", body=SEARCH))]),
    dict(name="headers_431", mhd=True, expect=431, why="a 7 KB header block",
         steps=[("send", req(b"GET /v1/tokens HTTP/1.1", AUTH, BIG_HEADERS))]),
    dict(name="headers_431_post_body", mhd=True, expect=431, why="the same, with a body",
         steps=[("send", req(b"POST /v1/memory/search HTTP/1.1", AUTH, JSON, BIG_HEADERS,
                             b"Content-Length: 13\r\n", body=SEARCH))]),
    dict(name="headers_too_large", mhd=True, expect=431, why="an 11 KB header block (past the memory)",
         steps=[("send", req(b"GET /v1/tokens HTTP/1.1", AUTH, HUGE_HEADERS))]),
    # ---- an 8 KB path under /ui/
] + [
    dict(name="ui_8k_" + m.lower(), mhd=True, expect=414, why="an 8 KB path, " + m,
         steps=[("send", req(m.encode() + b" " + UI_PATH + b" HTTP/1.1",
                             *([b"Content-Length: 2\r\n"] if m in ("POST", "PUT") else []),
                             body=b"{}" if m in ("POST", "PUT") else b""))])
    for m in ("GET", "HEAD", "POST", "PUT", "OPTIONS", "TRACE")
] + [
    dict(name="ui_3k_trace", expect=404, why="a 3 KB path, TRACE (no file has that name)",
         steps=[("send", req(b"TRACE /ui/" + b"a" * 3000 + b" HTTP/1.1"))]),
    # ---- Content-Length
    dict(name="cl_not_a_number", expect=400, why="Content-Length: abc",
         steps=[("send", req(b"POST /v1/memory/search HTTP/1.1", AUTH, JSON,
                             b"Content-Length: abc\r\n", body=SEARCH))]),
    dict(name="cl_negative", expect=400, why="Content-Length: -1",
         steps=[("send", req(b"POST /v1/memory/search HTTP/1.1", AUTH, JSON,
                             b"Content-Length: -1\r\n", body=SEARCH))]),
    dict(name="cl_overflow", expect=413, why="a Content-Length beyond 64 bits",
         steps=[("send", req(b"POST /v1/memory/search HTTP/1.1", AUTH, JSON,
                             b"Content-Length: 999999999999999999999999\r\n", body=SEARCH))]),
    dict(name="cl_too_large", expect=413, why="a declared length over the cap, cached token",
         steps=[("send", req(b"POST /v1/memory/search HTTP/1.1", AUTH, JSON,
                             b"Content-Length: 100000000\r\n"))]),
    dict(name="cl_too_large_fake", expect=401, why="the same, a token for the lane",
         steps=[("send", req(b"POST /v1/memory/search HTTP/1.1", FAKE, JSON,
                             b"Content-Length: 100000000\r\n"))]),
    dict(name="cl_too_large_fake_body", expect=401, why="the same, the body sent anyway",
         steps=[("send", req(b"POST /v1/memory/search HTTP/1.1", FAKE, JSON,
                             b"Content-Length: 100000000\r\n", body=b"x" * 4096))]),
    dict(name="cl_too_large_fake_close", expect="any", why="the same, gone after the headers",
         steps=[("send", req(b"POST /v1/memory/search HTTP/1.1", FAKE, JSON,
                             b"Content-Length: 100000000\r\n")), ("close",)]),
    dict(name="cl_too_large_fake_shut", expect=401, why="the same, half-closed after the headers",
         steps=[("send", req(b"POST /v1/memory/search HTTP/1.1", FAKE, JSON,
                             b"Content-Length: 100000000\r\n")), ("shut_wr",)]),
    # ---- bodies that end early
    dict(name="half_closed_mid_body", expect="closed", why="shutdown(SHUT_WR) in the body",
         steps=[("send", req(b"POST /v1/memory/search HTTP/1.1", AUTH, JSON,
                             b"Content-Length: 100\r\n", body=b'{"query":')), ("shut_wr",)]),
    dict(name="half_closed_mid_chunk", expect="closed", why="shutdown(SHUT_WR) in a chunk",
         steps=[("send", req(b"POST /v1/memory/search HTTP/1.1", AUTH, JSON,
                             b"Transfer-Encoding: chunked\r\n", body=b"20\r\n{\"q")),
                ("shut_wr",)]),
    dict(name="half_closed_after_request", expect=200, why="shutdown(SHUT_WR) after a request",
         steps=[("send", req(b"GET /v1/tokens HTTP/1.1", AUTH)), ("shut_wr",)]),
    dict(name="half_closed_after_request_fake", expect=401, why="the same, on a lane",
         steps=[("send", req(b"GET /v1/tokens HTTP/1.1", FAKE)), ("shut_wr",)]),
    dict(name="close_mid_body", expect="any", why="gone in the middle of the body",
         steps=[("send", req(b"POST /v1/memory/search HTTP/1.1", AUTH, JSON,
                             b"Content-Length: 100\r\n", body=b'{"query":')), ("close",)]),
    dict(name="rst_mid_body", expect="any", why="reset in the middle of the body",
         steps=[("send", req(b"POST /v1/memory/search HTTP/1.1", AUTH, JSON,
                             b"Content-Length: 100\r\n", body=b'{"query":')), ("rst",)]),
    dict(name="close_after_headers_body_route", expect="any", why="gone before the body",
         steps=[("send", req(b"POST /v1/memory/search HTTP/1.1", AUTH, JSON,
                             b"Content-Length: 13\r\n")), ("close",)]),
    dict(name="close_after_request_lane", expect="any", repeat=10,
         why="gone while the request waits on a worker lane",
         steps=[("send", req(b"GET /v1/tokens HTTP/1.1", AUTH)), ("close",)]),
    dict(name="close_after_request_fake", expect="any", repeat=10,
         why="gone while its token is checked on a lane",
         steps=[("send", req(b"GET /v1/tokens HTTP/1.1", FAKE)), ("close",)]),
    dict(name="rst_after_request_lane", expect="any", repeat=10,
         why="reset while on a worker lane",
         steps=[("send", req(b"GET /v1/tokens HTTP/1.1", AUTH)), ("rst",)]),
    dict(name="close_after_readyz", expect="any", repeat=10,
         why="gone while on the elastic lane",
         steps=[("send", req(b"GET /readyz HTTP/1.1")), ("close",)]),
    dict(name="close_after_piped_read", expect="any", repeat=10,
         why="gone while on a pipe",
         steps=[("send", req(b"GET /v1/threads/t1/memory-mode HTTP/1.1", AUTH)), ("close",)]),
    dict(name="close_after_full_post", expect="any", repeat=10,
         why="gone after a whole body",
         steps=[("send", req(b"POST /v1/memory/search HTTP/1.1", AUTH, JSON,
                             b"Content-Length: 13\r\n", body=SEARCH)), ("close",)]),
    dict(name="close_after_headers_no_request", expect="any", why="half a head, then gone",
         steps=[("send", b"GET /v1/tokens HTTP/1.1\r\nHost: x\r\n"), ("close",)]),
    # ---- bodies
    dict(name="unknown_fields_90000", expect=422, why="90,000 unknown JSON members",
         steps=[("send", req(b"POST /v1/memory/search HTTP/1.1", AUTH, JSON,
                             b"Content-Length: %d\r\n" % len(UNKNOWN_90K), body=UNKNOWN_90K))]),
    dict(name="body_over_cap_chunked", expect=413, why="a chunked body past the cap",
         steps=[("send", req(b"POST /v1/memory/search HTTP/1.1", AUTH, JSON,
                             b"Transfer-Encoding: chunked\r\n",
                             body=chunked(b"[" + b"1," * 600000 + b"1]")))]),
    # ---- smuggling shapes
    dict(name="smuggle_after_cl_te", expect=400, why="nothing after a refused frame is read",
         steps=[("send", req(b"POST /v1/memory/search HTTP/1.1", AUTH, JSON,
                             b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
                             body=b"0\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"))]),
    dict(name="header_obs_fold", expect=[200, 400],
         why="an obsolete folded header (RFC 9112 5.2: refused, or folded into a space)",
         steps=[("send", b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n")]),
    dict(name="bare_lf", expect="any", why="LF line ends",
         steps=[("send", b"GET /healthz HTTP/1.1\nHost: x\n\n")]),
    dict(name="space_before_colon", expect=400, why="a space before a header's colon",
         steps=[("send", b"GET /healthz HTTP/1.1\r\nHost : x\r\n\r\n")]),
    dict(name="nul_in_header", expect=200,
         why="a NUL in a header value: libmicrohttpd 0.9.75 ends the value at the NUL and "
             "gives no way to see it (docs/edge-contract.md); the rest is dropped, never "
             "read as another header",
         steps=[("send", b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n")]),
]

_names = [c["name"] for c in CASES]
assert len(_names) == len(set(_names)), "duplicate case names"

# Requests in flight when the server gets SIGTERM: "before" is sent, then the signal, then
# "after". Any answer (503 shutting_down, the handler's answer, or a close) is fine; the
# server must exit 0 without leaks.
DRAIN_CASES = [
    dict(name="drain_body_pending", before=[("send", req(b"POST /v1/memory/search HTTP/1.1",
                                                         AUTH, JSON, b"Content-Length: 13\r\n"))],
         after=[("send", SEARCH)]),
    dict(name="drain_head_pending", before=[("send", b"GET /v1/tokens HTTP/1.1\r\nHost: x\r\n")],
         after=[("send", AUTH + b"\r\n")]),
    dict(name="drain_fake_token", before=[("send", req(b"GET /v1/tokens HTTP/1.1", FAKE))],
         after=[]),
    dict(name="drain_lane_then_close", before=[("send", req(b"GET /v1/tokens HTTP/1.1", AUTH))],
         after=[("close",)]),
    dict(name="drain_readyz", before=[], after=[("send", req(b"GET /readyz HTTP/1.1"))]),
    dict(name="drain_xchunked", before=[("send", req(b"POST /v1/memory/search HTTP/1.1", AUTH,
                                                     JSON, b"Transfer-Encoding: xchunked\r\n"))],
         after=[("send", chunked(SEARCH))]),
    dict(name="drain_half_closed", before=[("send", req(b"POST /v1/memory/search HTTP/1.1",
                                                        AUTH, JSON, b"Content-Length: 13\r\n",
                                                        body=b'{"q'))],
         after=[("shut_wr",)]),
]
