from envexpand import expand


def test_default_when_unset():
    assert expand("port ${PORT:-8080}", {}) == "port 8080"
    assert expand("${PORT:-8080}", {"PORT": "9000"}) == "9000"


def test_colon_default_also_when_empty():
    assert expand("${HOST:-localhost}", {"HOST": ""}) == "localhost"


def test_dash_default_only_when_unset():
    assert expand("[${HOST-localhost}]", {"HOST": ""}) == "[]"
    assert expand("[${HOST-localhost}]", {}) == "[localhost]"


def test_double_dollar_is_one_dollar():
    assert expand("costs $$5 per $UNIT, $$HOME stays", {"UNIT": "hour"}) == "costs $5 per hour, $HOME stays"
