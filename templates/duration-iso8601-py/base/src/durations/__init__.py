"""Durations such as "1h30m", read into and written from datetime.timedelta."""
from durations.format import format_duration
from durations.parse import parse_duration

__all__ = ["format_duration", "parse_duration"]
