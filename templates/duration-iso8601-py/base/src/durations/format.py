"""Writing durations in the shortest form parse_duration reads back."""
from __future__ import annotations

from datetime import timedelta


def format_duration(value: timedelta) -> str:
    """ "1h30m", "2d5s", "0.25s"; "0s" for no time at all. Negative durations are refused."""
    if value < timedelta(0):
        raise ValueError("a negative duration cannot be written")
    minutes, seconds = divmod(value.seconds, 60)
    hours, minutes = divmod(minutes, 60)
    fraction = f"{value.microseconds / 1_000_000:.6f}".rstrip("0").rstrip(".")[1:] if value.microseconds else ""
    parts = [(value.days, "d"), (hours, "h"), (minutes, "m")]
    text = "".join(f"{amount}{unit}" for amount, unit in parts if amount)
    if seconds or fraction or not text:
        text += f"{seconds}{fraction}s"
    return text
