from datetime import timedelta

import pytest

from durations import format_duration, parse_duration


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (timedelta(hours=1, minutes=30), "1h30m"),
        (timedelta(days=2, seconds=5), "2d5s"),
        (timedelta(milliseconds=250), "0.25s"),
        (timedelta(0), "0s"),
    ],
    ids=["hours-minutes", "days-seconds", "fraction", "zero"],
)
def test_writes_the_shortest_form(value, text):
    assert format_duration(value) == text


def test_round_trips():
    value = timedelta(days=3, hours=23, minutes=59, seconds=1, milliseconds=500)
    assert parse_duration(format_duration(value)) == value


def test_refuses_negative_durations():
    with pytest.raises(ValueError):
        format_duration(timedelta(seconds=-1))
