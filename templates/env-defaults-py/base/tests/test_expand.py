import pytest

from envexpand import MissingVariable, expand


def test_bare_reference():
    assert expand("home is $HOME", {"HOME": "/home/ada"}) == "home is /home/ada"


def test_braced_reference_next_to_text():
    assert expand("${NAME}_backup", {"NAME": "db"}) == "db_backup"


def test_several_references():
    assert expand("$A-${B}-$A", {"A": "1", "B": "2"}) == "1-2-1"


def test_empty_value():
    assert expand("[${EMPTY}]", {"EMPTY": ""}) == "[]"


def test_text_without_references_is_unchanged():
    assert expand("price: $ 5, 100% sure", {}) == "price: $ 5, 100% sure"


def test_missing_variable():
    with pytest.raises(MissingVariable) as raised:
        expand("${PORT}", {})
    assert raised.value.name == "PORT"
    assert str(raised.value) == "variable PORT is not set"
    assert isinstance(raised.value, KeyError)
