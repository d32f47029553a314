"""Expanding $NAME and ${NAME} references from a mapping of variables."""
from __future__ import annotations

import re
from collections.abc import Mapping

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_REFERENCE = re.compile(rf"\$(?:(?P<bare>{_NAME})|\{{(?P<braced>{_NAME})\}})")


class MissingVariable(KeyError):
    """A reference to a variable that is not set."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name

    def __str__(self) -> str:
        return f"variable {self.name} is not set"


def expand(text: str, variables: Mapping[str, str]) -> str:
    """The text with every reference replaced by its variable's value."""

    def value_of(match: re.Match[str]) -> str:
        name = match.group("bare") or match.group("braced")
        if name not in variables:
            raise MissingVariable(name)
        return variables[name]

    return _REFERENCE.sub(value_of, text)
