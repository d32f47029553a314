"""Shell-style $NAME and ${NAME} references in configuration text."""
from envexpand.expand import MissingVariable, expand

__all__ = ["MissingVariable", "expand"]
