"""The store tests run in a fake home with no caches, proxies or offline settings (`store_env`,
autouse), and may ask for the loopback file server and the models it serves."""

from store_fixtures import fixture_http_server, fixture_served, fixture_store_env

__all__ = ["fixture_http_server", "fixture_served", "fixture_store_env"]
