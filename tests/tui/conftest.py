"""The TUI tests build the app on a history in their folder (`history`, `app_on`); the terminal
tests also serve a model from the loopback file server (`http_server`)."""

from store_fixtures import fixture_http_server
from tui_fixtures import fixture_app_on, fixture_history

__all__ = ["fixture_app_on", "fixture_history", "fixture_http_server"]
