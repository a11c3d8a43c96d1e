"""``pf.io.gfile.glob``: TensorFlow's glob patterns (the C library's ``fnmatch`` rules, one path component at a
time) over local directories and URLs.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from parafeed.io.gfile.paths import PathLike, Where, as_str, join
from parafeed.io.gfile.queries import exists, list_entries

_WILDCARD = re.compile(r"(?<!\\)[*?\[]")


def _component_regex(part: str) -> re.Pattern[str]:
    """A regex for one path component of a glob pattern, with the C library's ``fnmatch`` rules (TensorFlow's):
    ``*`` any characters, ``?`` one, ``[...]`` a set (``!`` or ``^`` first negates it, ``a-z`` ranges), ``\\c`` the
    character ``c``; names starting with a dot match too."""
    out, i, n = [], 0, len(part)
    while i < n:
        c = part[i]
        i += 1
        if c == "*":
            out.append(".*")
        elif c == "?":
            out.append(".")
        elif c == "\\":
            out.append(re.escape(part[i]) if i < n else re.escape("\\"))
            i += 1
        elif c == "[":
            j = i
            negate = j < n and part[j] in "!^"
            if negate:
                j += 1
            items, first = [], True
            while j < n and (part[j] != "]" or first):
                first = False
                ch = part[j]
                if ch == "\\" and j + 1 < n:
                    j += 1
                    ch = part[j]
                if j + 2 < n and part[j + 1] == "-" and part[j + 2] != "]":
                    hi = part[j + 2]
                    if hi == "\\" and j + 3 < n:
                        hi = part[j + 3]
                        j += 1
                    items.append(f"{re.escape(ch)}-{re.escape(hi)}" if ch <= hi else "(?!)")
                    j += 3
                else:
                    items.append(re.escape(ch))
                    j += 1
            if j >= n:  # no closing bracket: a literal '['
                out.append(re.escape("["))
                continue
            body = "".join(items)
            out.append(f"[{'^' if negate else ''}{body}]" if body else ("." if negate else "(?!)"))
            i = j + 1
        else:
            out.append(re.escape(c))
    return re.compile("".join(out), re.DOTALL)


def _unescape(part: str) -> str:
    return re.sub(r"\\(.)", r"\1", part)


def _glob_one(pattern: str, storage_options: dict | None) -> list[str]:
    step = "gfile.glob"
    if not pattern:
        return []
    if not _WILDCARD.search(pattern):  # a plain path: itself, if it exists
        plain = _unescape(pattern)
        return [plain] if exists(plain, storage_options=storage_options) else []
    scheme, sep, rest = pattern.partition("://")
    if not sep:
        scheme, rest = "", pattern
    absolute = rest.startswith("/")
    parts = [p for p in rest.split("/") if p]
    first = next(i for i, p in enumerate(parts) if _WILDCARD.search(p))
    fixed = "/".join(_unescape(p) for p in parts[:first])
    root = "/" if absolute else ""
    base = f"{scheme}://{root}{fixed}" if sep else (root + fixed or ".")
    # level by level: the matching entries of each directory reached so far (intermediate levels: directories only)
    reached = [base]
    for k in range(first, len(parts)):
        part, last = parts[k], k == len(parts) - 1
        wild = _WILDCARD.search(part)
        regex = _component_regex(part) if wild else None
        found: list[str] = []
        for directory in reached:
            where = Where(directory, step, storage_options)
            entries = list_entries(where)
            if not entries:
                continue
            for name, is_dir in entries:
                if (regex.fullmatch(name) if regex is not None else name == _unescape(part)) and (last or is_dir):
                    found.append(join(directory, name) if sep else os.path.join(directory, name))
        reached = found
        if not reached:
            break
    return sorted(reached)


def glob(pattern: PathLike | Iterable[PathLike], *, storage_options: dict | None = None) -> list[str]:
    """The paths matching a glob pattern, or each of several patterns (``tf.io.gfile.glob``), sorted.

    TensorFlow's pattern rules: ``*`` matches any characters but ``/`` (``**`` is the same as ``*``), ``?`` one
    character, ``[abc]`` / ``[a-z]`` one of a set (``[!...]`` or ``[^...]`` one not in it), ``\\c`` the character
    ``c``. Names starting with a dot match. Directories match as well as files. A pattern with no wildcard gives the
    path itself if it exists. A relative pattern whose first part has a wildcard gives ``./``-prefixed paths, as
    TensorFlow does. A URL's pattern lists only the directories the pattern reaches.
    """
    if isinstance(pattern, (str, bytes, os.PathLike)):
        return _glob_one(as_str(pattern, "gfile.glob"), storage_options)
    out: list[str] = []
    for one in pattern:
        out.extend(_glob_one(as_str(one, "gfile.glob"), storage_options))
    return out
