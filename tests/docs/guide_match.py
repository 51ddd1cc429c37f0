"""The expected answer of a guide example and how an actual answer is checked against it
(run_guide.py; the convention is at the top of docs/guide/README.md): a JSON superset with …
markers, text lines in order, headers, and `# → NAME=.path` captures."""

import json
import re

ELLIPSIS = "\u2026"


class Failure(Exception):
    pass


class Any:
    def __repr__(self):
        return ELLIPSIS


ANY = Any()


class Rest:
    """… as an object member or an array item."""


REST = Rest()


class Parser:
    def __init__(self, text):
        self.s = text
        self.i = 0

    def error(self, msg):
        line = self.s.count("\n", 0, self.i) + 1
        raise Failure(f"expected body, line {line}: {msg}")

    def ws(self):
        while self.i < len(self.s) and self.s[self.i] in " \t\r\n":
            self.i += 1

    def peek(self):
        self.ws()
        return self.s[self.i] if self.i < len(self.s) else ""

    def value(self):
        c = self.peek()
        if c == ELLIPSIS:
            self.i += 1
            return ANY
        if c == "{":
            return self.obj()
        if c == "[":
            return self.arr()
        if c == '"':
            return self.string()
        m = re.compile(r"-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null").match(self.s, self.i)
        if not m:
            self.error(f"unexpected {self.s[self.i:self.i + 20]!r}")
        self.i = m.end()
        return json.loads(m.group(0))

    def string(self):
        dec = json.JSONDecoder()
        try:
            v, end = dec.raw_decode(self.s, self.i)
        except json.JSONDecodeError as e:
            self.error(str(e))
        self.i = end
        return ANY if v == ELLIPSIS else v

    def obj(self):
        self.i += 1
        out, rest = {}, False
        if self.peek() == "}":
            self.i += 1
            return out
        while True:
            if self.peek() == ELLIPSIS:
                self.i += 1
                rest = True
            else:
                if self.peek() != '"':
                    self.error("an object member name or … expected")
                k = self.string()
                if self.peek() != ":":
                    self.error("':' expected")
                self.i += 1
                out[k] = self.value()
            c = self.peek()
            self.i += 1
            if c == "}":
                break
            if c != ",":
                self.error("',' or '}' expected")
        if rest:
            out[REST] = True
        return out

    def arr(self):
        self.i += 1
        out = []
        if self.peek() == "]":
            self.i += 1
            return out
        while True:
            if self.peek() == ELLIPSIS:
                self.i += 1
                out.append(REST)
            else:
                out.append(self.value())
            c = self.peek()
            self.i += 1
            if c == "]":
                break
            if c != ",":
                self.error("',' or ']' expected")
        return out

    def parse(self):
        v = self.value()
        if self.peek():
            self.error(f"trailing text {self.s[self.i:self.i + 20]!r}")
        return v


def pattern_match(pat, s):
    parts = pat.split(ELLIPSIS)
    rx = ".*".join(re.escape(p) for p in parts)
    return re.fullmatch(rx, s, re.S) is not None


def match(exp, act, path):
    """None when act matches exp, else a message naming the path."""
    if exp is ANY:
        return None
    if isinstance(exp, str):
        if not isinstance(act, str):
            return f"{path}: expected {json.dumps(exp, ensure_ascii=False)}, got {json.dumps(act)}"
        if ELLIPSIS in exp:
            ok = pattern_match(exp, act)
        else:
            ok = exp == act
        return None if ok else f"{path}: expected {json.dumps(exp, ensure_ascii=False)}, got {json.dumps(act, ensure_ascii=False)}"
    if isinstance(exp, dict):
        if not isinstance(act, dict):
            return f"{path}: expected an object, got {json.dumps(act)[:80]}"
        rest = exp.get(REST, False)
        for k, v in exp.items():
            if k is REST:
                continue
            if k not in act:
                return f"{path}: member {k!r} is missing"
            m = match(v, act[k], f"{path}.{k}")
            if m:
                return m
        if not rest:
            extra = [k for k in act if k not in exp]
            if extra:
                return f"{path}: members not shown (add them, or end the object with …): {extra}"
        return None
    if isinstance(exp, list):
        if not isinstance(act, list):
            return f"{path}: expected an array, got {json.dumps(act)[:80]}"
        return match_list(exp, act, path)
    # numbers, booleans, null
    if type(exp) is bool or type(act) is bool or exp is None or act is None:
        ok = exp is act or (exp == act and type(exp) is type(act))
    else:
        ok = isinstance(act, (int, float)) and exp == act
    return None if ok else f"{path}: expected {json.dumps(exp)}, got {json.dumps(act)}"


def match_list(exp, act, path):
    errors = []  # (index of the shown item, message)

    def depth(msg):
        return msg.split(":", 1)[0].count(".") + msg.split(":", 1)[0].count("[")

    def go(i, j):
        if i == len(exp):
            if j == len(act):
                return True
            errors.append((i, f"{path}: {len(act) - j} more item(s) than shown (or add …)"))
            return False
        if exp[i] is REST:
            return any(go(i + 1, k) for k in range(j, len(act) + 1))
        if j == len(act):
            errors.append((i, f"{path}: no item left for the one shown at position {i}"))
            return False
        m = match(exp[i], act[j], f"{path}[{j}]")
        if m:
            errors.append((i, m))
            return False
        return go(i + 1, j + 1)

    if go(0, 0):
        return None
    if not errors:
        return f"{path}: the array does not match"
    worst = max(i for i, _ in errors)
    msgs = [m for i, m in errors if i == worst]
    best = max(msgs, key=depth)
    if worst > 0 and exp[worst - 1] is REST:
        return f"{path}: no item matches the one shown at position {worst} (closest: {best})"
    return best


class Expected:
    def __init__(self, text, where):
        lines = text.split("\n")
        if not lines or not re.match(r"^HTTP/\S+ \d{3}", lines[0]):
            raise Failure(f"{where}: the ```http block must start with a status line, e.g. HTTP/1.1 200 OK")
        self.status_line = lines[0].strip()
        self.status = int(self.status_line.split()[1])
        self.reason = self.status_line.split(" ", 2)[2] if self.status_line.count(" ") >= 2 else ""
        self.headers = []
        i = 1
        while i < len(lines) and lines[i].strip():
            name, sep, value = lines[i].partition(":")
            if not sep:
                raise Failure(f"{where}: header line without ':': {lines[i]!r}")
            self.headers.append((name.strip(), value.strip()))
            i += 1
        body = "\n".join(lines[i + 1:]).strip()
        self.body_text = body
        self.kind = "empty" if not body else "any" if body == ELLIPSIS else \
            "json" if body[0] in "{[" else "text"
        self.json = Parser(body).parse() if self.kind == "json" else None


class Answer:
    def __init__(self, raw):
        # curl -i may print interim answers (100 Continue) first: keep the last head.
        text = raw.decode("utf-8", "replace")
        while True:
            head, sep, body = text.partition("\r\n\r\n")
            if not sep:
                head, sep, body = text.partition("\n\n")
            if not sep:
                raise Failure("the output is not an HTTP answer (use curl -si, no pipe): "
                              + repr(text[:200]))
            if re.match(r"^HTTP/\S+ 1\d\d", head) and body.startswith("HTTP/"):
                text = body
                continue
            break
        hl = head.replace("\r", "").split("\n")
        if not re.match(r"^HTTP/\S+ \d{3}", hl[0]):
            raise Failure("the output is not an HTTP answer (use curl -si, no pipe): " + repr(text[:200]))
        self.status_line = hl[0].strip()
        self.status = int(self.status_line.split()[1])
        self.headers = {}
        for h in hl[1:]:
            name, _, value = h.partition(":")
            self.headers[name.strip().lower()] = value.strip()
        self.body = body

    def json(self):
        try:
            return json.loads(self.body)
        except ValueError:
            return None


def check(exp, ans):
    """A list of differences (empty when the answer is as shown)."""
    diffs = []
    if exp.status_line.split(" ", 1)[1] != ans.status_line.split(" ", 1)[1]:
        diffs.append(f"status: expected {exp.status_line!r}, got {ans.status_line!r}")
        return diffs
    for name, value in exp.headers:
        got = ans.headers.get(name.lower())
        if got is None:
            diffs.append(f"header {name} is missing")
        elif not (pattern_match(value, got) if ELLIPSIS in value else value == got):
            diffs.append(f"header {name}: expected {value!r}, got {got!r}")
    if exp.kind == "empty":
        if ans.body.strip():
            diffs.append(f"body: expected none, got {ans.body[:200]!r}")
    elif exp.kind == "json":
        act = ans.json()
        if act is None:
            diffs.append(f"body: expected JSON, got {ans.body[:200]!r}")
        else:
            m = match(exp.json, act, "body")
            if m:
                diffs.append(m)
    elif exp.kind == "text":
        act_lines = ans.body.replace("\r", "").split("\n")
        j = 0
        for want in exp.body_text.split("\n"):
            if want.strip() == ELLIPSIS:
                continue
            while j < len(act_lines) and not (pattern_match(want, act_lines[j]) if ELLIPSIS in want
                                              else act_lines[j] == want):
                j += 1
            if j == len(act_lines):
                diffs.append(f"body: the line {want!r} is missing (or out of order)")
                break
            j += 1
    return diffs


def capture(spec, ans):
    if spec.startswith("header:"):
        v = ans.headers.get(spec[7:].strip().lower())
        if v is None:
            raise Failure(f"capture {spec}: no such header")
        return v
    v = ans.json()
    if not spec.startswith("."):
        raise Failure(f"capture {spec}: a path starts with '.'")
    for part in re.findall(r"\.([A-Za-z0-9_]+)|\[(\d+)\]", spec):
        key, idx = part
        try:
            v = v[key] if key else v[int(idx)]
        except (KeyError, IndexError, TypeError):
            raise Failure(f"capture {spec}: not in the answer")
    if isinstance(v, (dict, list)) or v is None:
        raise Failure(f"capture {spec}: not a string or number ({json.dumps(v)[:60]})")
    return str(v)
