"""The runner's pytest plugin (docs/runner-protocol.md, "Frameworks").

pytest loads it by name (`-p assay_pytest` in PYTEST_ADDOPTS, with this directory on
PYTHONPATH), so the runner's settings never reach the tests' sys.argv.
"""

import os

import pytest

#: The JUnit property (xunit1 `<properties>` of a test case) naming the file a test was collected from.
COLLECTED_FILE = "assay.collected_file"


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    # Before junitxml and the session read them: the report goes to the runner's channel even
    # when the project's command names a --junitxml of its own, and every test runs whatever -x
    # or --maxfail the command, the configuration's addopts or PYTEST_ADDOPTS give (--stepwise
    # does nothing: pytest blocks it with the cache). The channel's name is taken out of the
    # environment: a pytest the tests start themselves (PYTEST_ADDOPTS is inherited) must not
    # write a second report into it.
    report = os.environ.pop("ASSAY_JUNIT_PATH", None)
    if report:
        config.option.xmlpath = report
    config.option.maxfail = 0


def pytest_itemcollected(item):
    # Where pytest collected the test, the file of its node id. junitxml's `file` is where the
    # function is written: for a method inherited from a mixin in another module (or an imported
    # test function), a file that running only the listed test files never collects.
    path = getattr(item, "path", None) or item.fspath
    item.user_properties.append((COLLECTED_FILE, str(path)))
