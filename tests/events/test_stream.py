"""GET /v1/events on one instance: the stream's shape, filters, positions, refusals, tenant
isolation, the stream limit, token deletion and the drain (docs/events.md)."""
import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fleet"))
from fleet_events import Instance, Stream, check, own_database, put_mode, token, unique

SCOPES = ["events:read", "memory:admin", "memory:read", "audit:read", "admin"]


def audit_items(inst, tok, after=0):
    items = []
    while True:
        st, doc, _ = inst.request("GET", f"/v1/audit?limit=200&after={after}" if after else
                                  "/v1/audit?limit=200", tok)
        check(st == 200, f"audit list {st}")
        items += doc["items"]
        if not doc.get("next_cursor"):
            return items
        after = doc["next_cursor"]


def test_shape_and_live(inst, binary):
    tenant = unique("ev")
    tok = token(binary, tenant, SCOPES)
    s = Stream(inst, tok)
    check(s.status == 200, f"stream status {s.status}")
    ctype = s.resp.getheader("Content-Type")
    check(ctype == "text/event-stream", f"content type {ctype}")
    check(s.resp.getheader("Cache-Control") == "no-store", "Cache-Control no-store")
    thread = unique("th")
    st, _, _ = put_mode(inst, tok, thread, 0, "disabled")
    check(st == 200, f"put {st}")
    eid, name, data = s.next_event()
    check(s.retry == 2000, f"retry {s.retry}")
    check(name == "thread.memory_mode.updated", f"event name {name}")
    check(eid == data["seq"], "id is the seq")
    listed = [i for i in audit_items(inst, tok) if i["seq"] == eid]
    check(listed == [data], f"data is the record as GET /v1/audit lists it: {listed} vs {data}")
    s.close()
    print("ok shape: retry 2000, id = seq, event = action, data = the audit record")


def test_positions_and_filters(inst, binary):
    tenant = unique("ev")
    tok = token(binary, tenant, SCOPES)
    threads = [unique("th") for _ in range(4)]
    for t in threads:
        check(put_mode(inst, tok, t, 0, "disabled")[0] == 200, "put")
    records = [i for i in audit_items(inst, tok) if i["resource_type"] == "thread"]
    check(len(records) == 4, f"4 records, got {len(records)}")
    # Last-Event-ID: the backlog after it, then live, no gap and no repeat at the seam.
    s = Stream(inst, tok, last_id=records[0]["seq"])
    got = [s.next_event()[0] for _ in range(3)]
    check(got == [r["seq"] for r in records[1:]], f"backlog {got}")
    check(put_mode(inst, tok, threads[0], 1, "enabled")[0] == 200, "put")
    live = s.next_event()
    check(live[0] > records[-1]["seq"] and live[2]["resource_id"] == threads[0], "then live")
    s.close()
    # ?after= works as Last-Event-ID; Last-Event-ID wins when both come.
    s = Stream(inst, tok, path=f"/v1/events?after={records[2]['seq']}")
    check(s.next_event()[0] == records[3]["seq"], "after=")
    s.close()
    s = Stream(inst, tok, path=f"/v1/events?after={records[0]['seq']}",
               last_id=records[2]["seq"])
    check(s.next_event()[0] == records[3]["seq"], "Last-Event-ID wins over after=")
    s.close()
    # Filters by resource_type and resource_id.
    s = Stream(inst, tok, path=f"/v1/events?resource_type=thread&resource_id={threads[2]}",
               last_id=0)
    ev = s.next_event()
    check(ev[2]["resource_id"] == threads[2], "resource_id filter")
    check(put_mode(inst, tok, threads[1], 1, "enabled")[0] == 200, "put")
    check(put_mode(inst, tok, threads[2], 1, "enabled")[0] == 200, "put")
    ev = s.next_event()
    check(ev[2]["resource_id"] == threads[2] and ev[2]["revision_after"] == 2,
          "the filter skips other resources live too")
    s.close()
    s = Stream(inst, tok, path="/v1/events?resource_type=token", last_id=0)
    ev = s.next_event()
    check(ev[1] == "token.created", f"resource_type filter {ev[1]}")
    s.close()
    print("ok positions: Last-Event-ID and after= resume without gap or repeat; filters")


def test_refusals(inst, binary):
    tenant = unique("ev")
    tok = token(binary, tenant, SCOPES)
    no_scope = token(binary, tenant, ["audit:read"])
    cases = [
        ("/v1/events", None, {}, 401, "unauthenticated"),
        ("/v1/events", no_scope, {}, 403, "forbidden"),
        ("/v1/events?resource_type=nope", tok, {}, 422, "validation_failed"),
        ("/v1/events?resource_id=a%20b", tok, {}, 422, "validation_failed"),
        ("/v1/events?after=-1", tok, {}, 422, "validation_failed"),
        ("/v1/events?after=x", tok, {}, 422, "validation_failed"),
        ("/v1/events", tok, {"Last-Event-ID": "12a"}, 422, "validation_failed"),
        ("/v1/events", tok, {"Last-Event-ID": "1" * 19}, 422, "validation_failed"),
    ]
    for path, t, headers, want, code in cases:
        st, doc, _ = inst.request("GET", path, t, headers=headers)
        check(st == want and doc["code"] == code, f"{path} {headers}: {st} {doc}")
    # The longest position passes (18 digits), the edge of the rule.
    s = Stream(inst, tok, last_id="9" * 18)
    check(s.status == 200, f"18-digit Last-Event-ID {s.status}")
    s.close()
    print("ok refusals: 401, 403, 422 for filters and positions")


def test_isolation(inst, binary):
    a = token(binary, unique("ev"), SCOPES)
    b = token(binary, unique("ev"), SCOPES)
    sb = Stream(inst, b, last_id=0, timeout=3)
    first = sb.next_event()
    check(first[1] == "token.created", "tenant b sees its own token record")
    for _ in range(3):
        check(put_mode(inst, a, unique("th"), 0, "disabled")[0] == 200, "put a")
    check(put_mode(inst, b, unique("th"), 0, "disabled")[0] == 200, "put b")
    ev = sb.next_event()
    st, doc, _ = inst.request("GET", "/v1/audit?resource_type=thread", b)
    check(ev[0] == doc["items"][0]["seq"], "tenant b's next event is its own write, not a's")
    sb.close()
    print("ok isolation: a stream never sees another tenant's record")


def test_token_deleted_ends_stream(inst, binary):
    tenant = unique("ev")
    admin = token(binary, tenant, SCOPES)
    reader = token(binary, tenant, ["events:read"])
    s = Stream(inst, reader)
    check(s.status == 200, "stream")
    st, doc, _ = inst.request("GET", "/v1/tokens", admin)
    reader_id = [t["token_id"] for t in doc["items"] if t["scopes"] == ["events:read"]][0]
    check(inst.request("DELETE", f"/v1/tokens/{reader_id}", admin)[0] == 204, "delete")
    t0 = time.time()
    end = s.next_event()
    check(end is None or end[1] == "token.deleted" and s.next_event() is None,
          "the stream ends once its token is deleted")
    print(f"ok token deletion ends the stream ({(time.time() - t0) * 1000:.0f} ms)")


def refused(inst, tok, what):
    st, doc, _ = inst.request("GET", "/v1/events", tok)
    check(st == 503 and doc["code"] == "too_many_streams" and doc["detail"], f"{what}: {st} {doc}")


def test_default_per_tenant(binary, log_dir):
    """RECALLGATE_MAX_STREAMS_PER_TENANT defaults to a quarter of RECALLGATE_MAX_STREAMS."""
    inst = Instance(binary, log_dir, "per-tenant-default", {"RECALLGATE_MAX_STREAMS": "8"}).start()
    try:
        tok = token(binary, unique("ev"), SCOPES)
        streams = [Stream(inst, tok) for _ in range(2)]
        check(all(s.status == 200 for s in streams), "2 streams of one tenant at 8 / 4")
        refused(inst, tok, "a 3rd stream of one tenant at 8 / 4")
        for s in streams:
            s.close()
        print("ok per-tenant default: a quarter of RECALLGATE_MAX_STREAMS")
    finally:
        inst.stop()


def test_max_streams(binary, log_dir):
    inst = Instance(binary, log_dir, "max-streams", {"RECALLGATE_MAX_STREAMS": "4",
                                                     "RECALLGATE_MAX_STREAMS_PER_TENANT": "2"}).start()
    try:
        tok = token(binary, unique("ev"), SCOPES)
        other = token(binary, unique("ev"), ["events:read"])
        third = token(binary, unique("ev"), ["events:read"])
        # One tenant: its limit passes, one more is refused, and others still get theirs.
        streams = [Stream(inst, tok) for _ in range(2)]
        check(all(s.status == 200 for s in streams), "2 streams of one tenant at a limit of 2")
        refused(inst, tok, "a tenant's 3rd stream")
        others = [Stream(inst, other) for _ in range(2)]
        check(all(s.status == 200 for s in others), "another tenant's 2 streams beside them")
        # The instance's limit: 4 streams are open, a third tenant is refused.
        refused(inst, third, "a 5th stream on the instance")
        streams[0].close()
        # A client's close frees its slot at once, though its stream had nothing to send.
        t0 = time.time()
        while time.time() - t0 < 10 and inst.metric("recallgate_event_streams") != 3:
            time.sleep(0.02)
        freed = time.time() - t0
        check(inst.metric("recallgate_event_streams") == 3, "the closed stream is gone")
        again = Stream(inst, tok)
        check(again.status == 200, "a slot frees up when a client closes its stream")
        streams.append(again)
        streams.extend(others)
        # Drain: SIGTERM ends every stream at once, and the process exits 0.
        t0 = time.time()
        inst.signal(15)
        for x in streams[1:]:
            while x.next_event() is not None:
                pass
        ended = time.time() - t0
        check(ended < 2, f"streams end at SIGTERM ({ended:.2f} s)")
        rc = inst.stop()
        check(rc == 0, f"exit {rc}")
        print(f"ok limit: 2 streams of a tenant pass at RECALLGATE_MAX_STREAMS_PER_TENANT=2, the "
              f"3rd is 503 too_many_streams while another tenant gets 2; at RECALLGATE_MAX_STREAMS=4 "
              f"the 5th is refused; a closed one is freed in {freed * 1000:.0f} ms; SIGTERM ends streams in {ended * 1000:.0f} ms, exit 0")
    finally:
        inst.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    args = ap.parse_args()
    log_dir = tempfile.mkdtemp(prefix="rg-events-")
    with own_database(args.bin, "rg_stream"):
        inst = Instance(args.bin, log_dir, "one").start()
        try:
            test_shape_and_live(inst, args.bin)
            test_positions_and_filters(inst, args.bin)
            test_refusals(inst, args.bin)
            test_isolation(inst, args.bin)
            test_token_deleted_ends_stream(inst, args.bin)
        finally:
            rc = inst.stop()
        check(rc == 0, f"exit {rc}")
        test_max_streams(args.bin, log_dir)
        test_default_per_tenant(args.bin, log_dir)


if __name__ == "__main__":
    main()
