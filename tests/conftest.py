"""Loads the tests' fixtures (tests/support/plugin.py). Helpers are imported from tests.support."""

pytest_plugins = ["tests.support.plugin"]
