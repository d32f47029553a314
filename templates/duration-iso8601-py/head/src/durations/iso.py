"""Reading ISO 8601 durations: "PT1H30M", "P2DT3H", "P1W", "PT0.5S"."""
from __future__ import annotations

import re
from datetime import timedelta

_AMOUNT = r"\d+(?:[.,]\d+)?"
_DURATION = re.compile(
    rf"P(?:(?P<weeks>{_AMOUNT})W)?(?:(?P<days>{_AMOUNT})D)?"
    rf"(?:T(?:(?P<hours>{_AMOUNT})H)?(?:(?P<minutes>{_AMOUNT})M)?(?:(?P<seconds>{_AMOUNT})S)?)?"
)
_CALENDAR = re.compile(r"P[^T]*[YM]")


def parse_iso_duration(text: str) -> timedelta:
    """The duration of an ISO 8601 text. Years and months are refused: their length varies."""
    if _CALENDAR.match(text):
        raise ValueError(f"years and months have no fixed length, so {text!r} is not a fixed duration")
    match = _DURATION.fullmatch(text)
    amounts = {unit: amount for unit, amount in match.groupdict().items() if amount is not None} if match else {}
    if not amounts or text.endswith("T"):
        raise ValueError(f"not an ISO 8601 duration: {text!r}")
    return timedelta(**{unit: float(amount.replace(",", ".")) for unit, amount in amounts.items()})
