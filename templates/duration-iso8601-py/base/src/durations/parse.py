"""Reading durations written with units: "2d", "1h30m", "1h 30m 15s", "0.5s"."""
from __future__ import annotations

import re
from datetime import timedelta

UNITS = {"d": "days", "h": "hours", "m": "minutes", "s": "seconds"}
_PART = re.compile(r"(\d+(?:\.\d+)?)([dhms])")


def parse_duration(text: str) -> timedelta:
    """The duration a text gives as amounts with units, each unit once, largest first."""
    compact = "".join(text.split())
    if not compact:
        raise ValueError("an empty text is not a duration")
    parts = _PART.findall(compact)
    if "".join(amount + unit for amount, unit in parts) != compact:
        raise ValueError(f"not a duration: {text!r}")
    units = [unit for _, unit in parts]
    if units != sorted(set(units), key="dhms".index):
        raise ValueError(f"each unit may appear once, largest first: {text!r}")
    return timedelta(**{UNITS[unit]: float(amount) for amount, unit in parts})
