from datetime import timedelta

import pytest

from durations import parse_duration


def test_hours_and_minutes():
    assert parse_duration("1h30m") == timedelta(hours=1, minutes=30)


def test_spaces_between_parts():
    assert parse_duration(" 2d 4h 15s ") == timedelta(days=2, hours=4, seconds=15)


def test_fractional_amounts():
    assert parse_duration("0.5s") == timedelta(milliseconds=500)
    assert parse_duration("1.5h") == timedelta(minutes=90)


@pytest.mark.parametrize(
    "text",
    ["", "   ", "10", "5x", "h", "1h-30m"],
    ids=["empty", "blank", "no-unit", "unknown-unit", "no-amount", "sign"],
)
def test_refuses_what_is_not_a_duration(text):
    with pytest.raises(ValueError):
        parse_duration(text)


def test_refuses_units_out_of_order_or_repeated():
    with pytest.raises(ValueError, match="once, largest first"):
        parse_duration("30m1h")
    with pytest.raises(ValueError, match="once, largest first"):
        parse_duration("1h1h")
