from datetime import timedelta

import pytest

from durations import parse_duration


def test_time_part():
    assert parse_duration("PT1H30M") == timedelta(hours=1, minutes=30)
    assert parse_duration("PT45S") == timedelta(seconds=45)


def test_days_weeks_and_time():
    assert parse_duration("P2DT3H4S") == timedelta(days=2, hours=3, seconds=4)
    assert parse_duration("P1W") == timedelta(weeks=1)


def test_fractions_with_a_point_or_a_comma():
    assert parse_duration("PT0.5S") == timedelta(milliseconds=500)
    assert parse_duration("PT1,5M") == timedelta(seconds=90)


def test_refuses_malformed_iso_durations():
    for text in ["P", "PT", "P1DT", "P1H", "PT1D", "P1S"]:
        with pytest.raises(ValueError, match="ISO 8601"):
            parse_duration(text)


def test_refuses_years_and_months():
    with pytest.raises(ValueError, match="no fixed length"):
        parse_duration("P1Y")
    with pytest.raises(ValueError, match="no fixed length"):
        parse_duration("P2M10D")
