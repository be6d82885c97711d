"""GitHub's expression language, the part the agent examples' job conditions use: enough to
decide which jobs a label event starts. Shared by the workflow unit tests and the rig's routing
test, which both ask the examples' own `if:` which agent an event starts."""

from __future__ import annotations

import re
from typing import Any

TOKEN = re.compile(r"\s*(\|\||&&|==|!=|!|\(|\)|,|'[^']*'|[A-Za-z_][\w.*-]*)")


def evaluate(expression: str, context: dict[str, Any]) -> Any:
    tokens = []
    rest = expression.strip()
    while rest:
        match = TOKEN.match(rest)
        assert match, f"cannot read {rest!r}"
        tokens.append(match.group(1))
        rest = rest[match.end():].strip()

    def lookup(path: str) -> Any:
        value: Any = context
        for part in path.split("."):
            if part == "*":
                return value
            value = value.get(part) if isinstance(value, dict) else None
        return value

    def primary(i: int) -> tuple[Any, int]:
        token = tokens[i]
        if token == "(":
            value, i = disjunction(i + 1)
            assert tokens[i] == ")"
            return value, i + 1
        if token == "!":
            value, i = primary(i + 1)
            return not value, i
        if token.startswith("'"):
            return token[1:-1], i + 1
        if token == "contains":
            assert tokens[i + 1] == "("
            haystack, i = disjunction(i + 2)
            assert tokens[i] == ","
            needle, i = disjunction(i + 1)
            assert tokens[i] == ")"
            return needle in (haystack or []), i + 1
        if ".*." in token:  # labels.*.name: the names of a list of objects
            head, tail = token.split(".*.")
            return [item.get(tail) for item in lookup(head) or []], i + 1
        return lookup(token), i + 1

    def comparison(i: int) -> tuple[Any, int]:
        left, i = primary(i)
        while i < len(tokens) and tokens[i] in ("==", "!="):
            op = tokens[i]
            right, i = primary(i + 1)
            left = (left == right) if op == "==" else (left != right)
        return left, i

    def conjunction(i: int) -> tuple[Any, int]:
        left, i = comparison(i)
        while i < len(tokens) and tokens[i] == "&&":
            right, i = comparison(i + 1)
            left = left and right
        return left, i

    def disjunction(i: int) -> tuple[Any, int]:
        left, i = conjunction(i)
        while i < len(tokens) and tokens[i] == "||":
            right, i = conjunction(i + 1)
            left = left or right
        return left, i

    value, end = disjunction(0)
    assert end == len(tokens), f"unread: {tokens[end:]}"
    return value
