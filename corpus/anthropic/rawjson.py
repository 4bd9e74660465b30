"""Tiny helpers shared by the corpus builders (build_corpus.py, gen_long.py).

`Src` loads a recorded body and hands out the *raw bytes* of any value by path, so copied blocks keep their
original key order, whitespace and escapes. `dump` writes a document whose leaves may be `Raw` text.
"""
import json
import os

TRAFFIC = os.environ.get("TK_REAL_TRAFFIC", "/work/shared/real-traffic")
WS = " \t\r\n"


def _skip(s, i):
    while i < len(s) and s[i] in WS:
        i += 1
    return i


def _value(s, i):
    """Return (node, end). node = (start, end, children); children is a dict, a list or None."""
    i = _skip(s, i)
    start = i
    c = s[i]
    if c == "{":
        kids = {}
        i = _skip(s, i + 1)
        if s[i] == "}":
            return (start, i + 1, kids), i + 1
        while True:
            i = _skip(s, i)
            key, i = json.decoder.scanstring(s, i + 1)
            i = _skip(s, i)
            assert s[i] == ":"
            node, i = _value(s, i + 1)
            kids[key] = node
            i = _skip(s, i)
            if s[i] == ",":
                i += 1
                continue
            assert s[i] == "}"
            return (start, i + 1, kids), i + 1
    if c == "[":
        kids = []
        i = _skip(s, i + 1)
        if s[i] == "]":
            return (start, i + 1, kids), i + 1
        while True:
            node, i = _value(s, i)
            kids.append(node)
            i = _skip(s, i)
            if s[i] == ",":
                i += 1
                continue
            assert s[i] == "]"
            return (start, i + 1, kids), i + 1
    if c == '"':
        _, end = json.decoder.scanstring(s, i + 1)
        return (start, end, None), end
    end = i
    while end < len(s) and s[end] not in ",]}" + WS:
        end += 1
    return (start, end, None), end


class Raw:
    """JSON text inserted as is."""

    def __init__(self, text):
        self.text = text


class Src:
    def __init__(self, rel):
        self.rel = rel
        with open(os.path.join(TRAFFIC, rel), encoding="utf-8") as f:
            self.text = f.read()
        self.root, _ = _value(self.text, 0)
        self.obj = json.loads(self.text)

    def node(self, *path):
        n = self.root
        for p in path:
            n = n[2][p]
        return n

    def raw(self, *path):
        s, e, _ = self.node(*path)
        return Raw(self.text[s:e])

    def get(self, *path):
        o = self.obj
        for p in path:
            o = o[p]
        return o

    def msgs_raw(self):
        return [self.raw("messages", i) for i in range(len(self.obj["messages"]))]

    def content_raw(self, *path):
        """Raw blocks of a content array (list of Raw)."""
        return [self.raw(*path, i) for i in range(len(self.get(*path)))]


def dump(o, sep=(", ", ": "), ascii=False):
    item, kv = sep
    if isinstance(o, Raw):
        return o.text
    if isinstance(o, dict):
        return "{" + item.join(json.dumps(k, ensure_ascii=ascii) + kv + dump(v, sep, ascii) for k, v in o.items()) + "}"
    if isinstance(o, (list, tuple)):
        return "[" + item.join(dump(v, sep, ascii) for v in o) + "]"
    return json.dumps(o, ensure_ascii=ascii)


COMPACT = (",", ":")
SPACED = (", ", ": ")


def write(path, o, sep=SPACED, ascii=False):
    text = dump(o, sep, ascii)
    json.loads(text)  # must parse
    with open(path, "w", encoding="utf-8") as f:
        f.write(text + "\n")
    return text
