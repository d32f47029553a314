"""Expanding $NAME and ${NAME} references from a mapping of variables."""
from __future__ import annotations

import re
from collections.abc import Mapping

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_REFERENCE = re.compile(
    rf"\$(?:(?P<dollar>\$)|(?P<bare>{_NAME})|\{{(?P<braced>{_NAME})(?:(?P<operator>:?-)(?P<default>[^}}]*))?\}})"
)


class MissingVariable(KeyError):
    """A reference to a variable that is not set."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name

    def __str__(self) -> str:
        return f"variable {self.name} is not set"


def expand(text: str, variables: Mapping[str, str]) -> str:
    """The text with every reference replaced by its variable's value. `${NAME:-word}` gives
    word when NAME is unset or empty, `${NAME-word}` only when it is unset; `$$` is one `$`."""

    def value_of(match: re.Match[str]) -> str:
        if match.group("dollar"):
            return "$"
        name = match.group("bare") or match.group("braced")
        value = variables.get(name)
        operator = match.group("operator")
        if (operator == ":-" and not value) or (operator == "-" and value is None):
            return match.group("default")
        if value is None:
            raise MissingVariable(name)
        return value

    return _REFERENCE.sub(value_of, text)
