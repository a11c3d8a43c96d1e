"""``strings.regex_replace`` and ``strings.regex_full_match``: TensorFlow's RE2 patterns, run with Python's ``re``.

A pattern is translated from RE2's syntax to an equivalent Python one, and strings are matched as UTF-8 text
(bytes that are not valid UTF-8 become lone surrogates, which no character class, ``.`` or negated class matches,
as RE2 matches none of them). What is translated:

* RE2's meanings: ``$`` is the end of the text unless ``(?m)``; ``\\d``, ``\\w``, ``\\s`` (``[\\t\\n\\f\\r ]``),
  ``\\b`` and POSIX classes (``[[:alpha:]]``) are ASCII; ``\\z``, ``\\Q...\\E``, ``\\x{...}``, octal escapes,
  ``(?U)`` (ungreedy) and flags set in the middle of a group (``a(?i)b``); a ``{`` that does not start a
  repetition is a literal.
* What RE2 rejects is rejected (InvalidArgumentError, as TensorFlow's "Invalid pattern"): backreferences,
  lookaround, atomic groups, possessive repetitions, conditionals, comments, ``\\Z``, ``\\G``, flags other than
  ``imsU``, repetition counts over 1000, and ``(?<name>...)`` (TensorFlow's RE2 names groups as ``(?P<name>...)``).

Not supported (InvalidArgumentError): Unicode classes ``\\p{...}`` / ``\\pL`` and ``\\C`` (any byte). Known
differences remain, found by fuzzing against TensorFlow and all in corner cases: under ``(?i)``, ``\\w`` and ASCII
ranges also match the few non-ASCII characters that fold to ASCII letters (KELVIN SIGN, LATIN SMALL LETTER LONG S);
RE2 finds empty matches of ``\\B`` between the bytes of a multi-byte character, Python only between characters; and
a group repeated by a loop whose body can match the empty string (``([^a]*)+``) may capture, or match, otherwise.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import numpy as np

from parafeed.errors import InvalidArgumentError
from parafeed.tensor_ops.strings_base import map_strings, scalar_string

_INVALID = "\\udc80-\\udcff"  # the lone surrogates that stand for bytes that are not UTF-8
_WORD = "0-9A-Za-z_"
_PERL = {"d": "0-9", "w": _WORD, "s": "\\t\\n\\f\\r "}
_POSIX = {
    "alnum": "0-9A-Za-z", "alpha": "A-Za-z", "ascii": "\\x00-\\x7f", "blank": "\\t ", "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9", "graph": "!-~", "lower": "a-z", "print": " -~", "punct": "!-/:-@\\[-`{-~",
    "space": "\\t\\n\\v\\f\\r ", "upper": "A-Z", "word": _WORD, "xdigit": "0-9A-Fa-f",
}  # fmt: skip
_LITERAL_ESCAPES = {"a": "\a", "f": "\f", "t": "\t", "n": "\n", "r": "\r", "v": "\v"}
_BOUNDARY = f"(?:(?<=[{_WORD}])(?![{_WORD}])|(?<![{_WORD}])(?=[{_WORD}]))"
_NOT_BOUNDARY = f"(?:(?<=[{_WORD}])(?=[{_WORD}])|(?<![{_WORD}])(?![{_WORD}]))"
_REPEAT = re.compile(r"\{(\d+)(,(\d*))?\}")


class _PatternError(Exception):
    pass


def _char(code: int) -> str:
    return f"\\U{code:08x}"


class _Translator:
    """One pass over an RE2 pattern, writing the Python pattern."""

    def __init__(self, pattern: str):
        self.p, self.i, self.out = pattern, 0, []  # type: ignore[var-annotated]
        self.flags = {"i": False, "m": False, "s": False, "U": False}
        self.stack: list[tuple[dict[str, bool], int]] = []  # per open group: flags before it, scoped groups opened
        self.scoped = 0  # "(?i:" groups opened for flags set in the middle of the current group

    def run(self) -> str:
        p = self.p
        while self.i < len(p):
            c = p[self.i]
            self.i += 1
            if c == "\\":
                self.out.append(self.escape())
            elif c == "[":
                self.out.append(self.char_class())
            elif c == "(":
                self.group()
            elif c == ")":
                if not self.stack:
                    raise _PatternError("unexpected )")
                self.out.append(")" * self.scoped + ")")
                self.flags, self.scoped = self.stack.pop()
            elif c == "|":
                self.out.append(")" * self.scoped + "|" + self._reopen())
            elif c == ".":
                self.out.append(f"[^{_INVALID}]" if self.flags["s"] else f"[^\\n{_INVALID}]")
            elif c == "^":  # (anchors in groups: RE2 lets them repeat, Python's re only so)
                self.out.append("(?m:^)" if self.flags["m"] else "(?:^)")
            elif c == "$":
                self.out.append("(?m:$)" if self.flags["m"] else "(?:\\Z)")
            elif c in "*+?":
                self.quantifier(c)
            elif c == "{" and _REPEAT.match(p, self.i - 1):
                m = _REPEAT.match(p, self.i - 1)
                assert m is not None
                lo, hi = int(m.group(1)), m.group(3)
                if lo > 1000 or (hi and (int(hi) > 1000 or int(hi) < lo)):
                    raise _PatternError(f"bad repetition operator: {m.group(0)}")
                self.i = m.end()
                self.quantifier(m.group(0))
            else:
                self.out.append(re.escape(c))
        if self.stack:
            raise _PatternError("missing )")
        return "".join(self.out) + ")" * self.scoped

    def _reopen(self) -> str:
        return "(?i:" * self.scoped if self.flags["i"] else "(?-i:" * self.scoped

    def quantifier(self, q: str) -> None:
        lazy = self.i < len(self.p) and self.p[self.i] == "?"
        if lazy:
            self.i += 1
        if self.i < len(self.p) and (self.p[self.i] in "*+?" or _REPEAT.match(self.p, self.i)):
            raise _PatternError(f"bad repetition operator: {q}{self.p[self.i]}")
        self.out.append(q + ("?" if lazy != self.flags["U"] else ""))

    def group(self) -> None:
        p = self.p
        if not p.startswith("?", self.i):
            self.stack.append((dict(self.flags), self.scoped))
            self.scoped = 0
            self.out.append("(")
            return
        m = re.compile(r"\?(?:P<([A-Za-z0-9_]+)>|([imsU]*(?:-[imsU]+)?)([:)]))").match(p, self.i)
        if m is None or (m.group(3) is not None and m.group(2) in ("", "-") and m.group(3) == ")"):
            raise _PatternError(f"invalid or unsupported group: ({p[self.i : self.i + 3]}")
        self.i = m.end()
        if m.group(1) is not None:  # a named group: rewrites use numbers only, so the name goes (RE2 allows repeats)
            self.stack.append((dict(self.flags), self.scoped))
            self.scoped = 0
            self.out.append("(")
            return
        before = dict(self.flags)
        on, _, off = m.group(2).partition("-")
        for f in on:
            self.flags[f] = True
        for f in off:
            self.flags[f] = False
        case = "(?i:" if self.flags["i"] else "(?-i:"
        if m.group(3) == ":":
            self.stack.append((before, self.scoped))
            self.scoped = 0
            self.out.append(case)
        else:  # flags for the rest of the current group
            self.scoped += 1
            self.out.append(case)

    def escape(self) -> str:
        """The escape after a backslash, outside a class."""
        p = self.p
        if self.i >= len(p):
            raise _PatternError("trailing \\")
        c = p[self.i]
        self.i += 1
        if c in "dws":
            return f"[{_PERL[c]}]"
        if c in "DWS":
            return f"[^{_PERL[c.lower()]}{_INVALID}]"
        if c == "b":
            return _BOUNDARY
        if c == "B":
            return _NOT_BOUNDARY
        if c == "A":
            return "(?:\\A)"
        if c == "z":
            return "(?:\\Z)"
        if c == "Q":
            end = p.find("\\E", self.i)
            text = p[self.i :] if end < 0 else p[self.i : end]
            self.i = len(p) if end < 0 else end + 2
            return "".join(_char(ord(ch)) for ch in text)
        if c == "E":
            return ""
        return _char(self.literal_escape(c))

    def literal_escape(self, c: str) -> int:
        """The code point of a literal escape (after the backslash and ``c``)."""
        p = self.p
        if c in _LITERAL_ESCAPES:
            return ord(_LITERAL_ESCAPES[c])
        if c == "x":
            if p.startswith("{", self.i):
                end = p.find("}", self.i)
                digits = p[self.i + 1 : end] if end > 0 else ""
                if not re.fullmatch(r"[0-9A-Fa-f]+", digits) or int(digits, 16) > 0x10FFFF:
                    raise _PatternError(f"invalid escape sequence: \\x{p[self.i : self.i + 8]}")
                self.i = end + 1
                return int(digits, 16)
            digits = p[self.i : self.i + 2]
            if not re.fullmatch(r"[0-9A-Fa-f]{2}", digits):
                raise _PatternError(f"invalid escape sequence: \\x{digits}")
            self.i += 2
            return int(digits, 16)
        if c == "0" or (c in "1234567" and self.i < len(p) and p[self.i] in "01234567"):
            m = re.compile(r"[0-7]{0,2}").match(p, self.i)
            assert m is not None
            self.i = m.end()
            return int(c + m.group(0), 8)
        if c in "pPC":
            raise _PatternError(
                f"\\{c} is not supported by parafeed (Python's re has no Unicode classes / byte matching); use an "
                "explicit character class"
            )
        if c.isalnum() or c == "_" or ord(c) >= 0x80:
            raise _PatternError(f"invalid escape sequence: \\{c}")
        return ord(c)

    def char_class(self) -> str:
        p = self.p
        negated = p.startswith("^", self.i)
        self.i += negated
        ranges: list[str] = []  # Python class items of the positive part
        excluded: list[str] = []  # negated items (\D, [:^alpha:]): their positive sets
        first = True
        while True:
            if self.i >= len(p):
                raise _PatternError("missing ]")
            c = p[self.i]
            if c == "]" and not first:
                self.i += 1
                break
            first = False
            posix = re.compile(r"\[:(\^?)([a-z]+):\]").match(p, self.i)
            if posix:
                if posix.group(2) not in _POSIX:
                    raise _PatternError(f"invalid character class range: {posix.group(0)}")
                self.i = posix.end()
                (excluded if posix.group(1) else ranges).append(_POSIX[posix.group(2)])
                continue
            if c == "\\" and p[self.i + 1 : self.i + 2] in ("d", "w", "s", "D", "W", "S"):
                e = p[self.i + 1]
                self.i += 2
                (ranges if e.islower() else excluded).append(_PERL[e.lower()])
                continue
            lo = self.class_char()
            if p.startswith("-", self.i) and self.i + 1 < len(p) and p[self.i + 1] != "]":
                self.i += 1
                hi = self.class_char()
                if hi < lo:
                    raise _PatternError(f"bad character class range: {chr(lo)}-{chr(hi)}")
                ranges.append(f"{_char(lo)}-{_char(hi)}")
            else:
                ranges.append(_char(lo))
        positive = "".join(ranges)
        if not negated:
            alternatives = ([f"[{positive}]"] if positive else []) + [f"[^{x}{_INVALID}]" for x in excluded]
            return alternatives[0] if len(alternatives) == 1 else "(?:" + "|".join(alternatives) + ")"
        if not excluded:
            return f"[^{positive}{_INVALID}]"
        guard = (f"(?![{positive}])" if positive else "") + "".join(f"(?=[{x}])" for x in excluded[1:])
        return f"(?:{guard}[{excluded[0]}])"

    def class_char(self) -> int:
        p = self.p
        c = p[self.i]
        self.i += 1
        if c != "\\":
            return ord(c)
        if self.i >= len(p):
            raise _PatternError("missing ]")
        e = p[self.i]
        self.i += 1
        return self.literal_escape(e)


@functools.lru_cache(maxsize=256)
def compile_re2(pattern: bytes, op: str) -> re.Pattern[str]:
    """A Python regex with the meaning of the RE2 ``pattern`` on UTF-8 text (see the module's docstring)."""
    try:
        text = pattern.decode()
    except UnicodeDecodeError:
        raise InvalidArgumentError(f"{op}: invalid pattern {pattern!r}: it is not valid UTF-8") from None
    try:
        return re.compile(_Translator(text).run())
    except (_PatternError, re.error) as err:
        raise InvalidArgumentError(f"{op}: invalid pattern {text!r}: {err}; RE2's syntax is expected") from None


def _rewrite_pieces(rewrite: bytes) -> tuple[list[str | int], int, bool]:
    """The rewrite as literal pieces and group numbers, the highest group it names, and whether it is valid. An
    invalid escape ends the pieces (RE2 keeps what came before it: TensorFlow logs the error and goes on)."""
    text = rewrite.decode("utf-8", "surrogateescape")
    named = [int(d) for d in re.findall(r"\\(.)", text, re.S) if d.isascii() and d.isdigit()]
    pieces: list[str | int] = []
    i, literal, valid = 0, [], True
    while i < len(text):
        c = text[i]
        if c != "\\":
            literal.append(c)
            i += 1
            continue
        nxt = text[i + 1 : i + 2]
        if nxt.isascii() and nxt.isdigit():
            pieces += ["".join(literal), int(nxt)]
            literal = []
        elif nxt == "\\":
            literal.append("\\")
        else:
            valid = False
            break
        i += 2
    pieces.append("".join(literal))
    return pieces, max(named, default=0), valid


def regex_replace(input: Any, pattern: Any, rewrite: Any, replace_global: bool = True, name: Any = None) -> Any:
    """Replace the matches of the RE2 ``pattern`` with ``rewrite`` (``tf.strings.regex_replace``): ``\\1`` to
    ``\\9`` insert groups, ``\\0`` the whole match, ``\\\\`` a backslash; every match, or the first one only.

    As RE2, an empty match right after the previous match is skipped, and a rewrite naming a group the pattern
    does not have leaves the strings unchanged. See :mod:`parafeed.tensor_ops.strings_regex` for the pattern syntax.

    Example:
        >>> pf.strings.regex_replace("a1b22", r"\\d+", "#")
        b'a#b#'
    """
    op = "strings.regex_replace()"
    rx = compile_re2(scalar_string(pattern, op, "pattern"), op)
    pieces, top, valid = _rewrite_pieces(scalar_string(rewrite, op, "rewrite"))
    if top > rx.groups or (not valid and not replace_global):  # RE2 replaces nothing
        return map_strings(input, op, lambda s: s)

    def replace(s: bytes) -> bytes:
        text = s.decode("utf-8", "surrogateescape")
        result = _replace_all(rx, text, pieces) if replace_global else _replace_first(rx, text, pieces)
        return text.encode("utf-8", "surrogateescape") if result is None else result

    return map_strings(input, op, replace)


def _expand(m: re.Match[str], pieces: list[str | int]) -> str:
    return "".join(p if isinstance(p, str) else (m.group(p) or "") for p in pieces)


def _replace_first(rx: re.Pattern[str], text: str, pieces: list[str | int]) -> bytes | None:
    m = rx.search(text)
    if m is None:
        return None
    return (text[: m.start()] + _expand(m, pieces) + text[m.end() :]).encode("utf-8", "surrogateescape")


def _replace_all(rx: re.Pattern[str], text: str, pieces: list[str | int]) -> bytes | None:
    parts, pos, last_end, count = [], 0, -1, 0
    while pos <= len(text):
        m = rx.search(text, pos)
        if m is None:
            break
        start, end = m.span()
        parts.append(text[pos:start])
        if start == end == last_end:  # no empty match where the previous match ended: step over one character
            parts.append(text[pos : pos + 1])
            pos += 1
            continue
        parts.append(_expand(m, pieces))
        pos = last_end = end
        count += 1
    if not count:
        return None
    parts.append(text[pos:])
    return "".join(parts).encode("utf-8", "surrogateescape")


def regex_full_match(input: Any, pattern: Any, name: Any = None) -> Any:
    """Whether each whole string matches the RE2 ``pattern`` (``tf.strings.regex_full_match``): bool.

    Example:
        >>> pf.strings.regex_full_match(["ab", "abc"], "a.").tolist()
        [True, False]
    """
    op = "strings.regex_full_match()"
    rx = compile_re2(scalar_string(pattern, op, "pattern"), op)
    return map_strings(input, op, lambda s: rx.fullmatch(s.decode("utf-8", "surrogateescape")) is not None, np.bool_)
