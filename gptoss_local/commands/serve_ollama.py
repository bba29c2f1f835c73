"""`serve --ollama`: the same service also on Ollama's port (127.0.0.1:11434 unless
--ollama-port says otherwise), so that apps that only know Ollama find it; when something
holds that port it is named and left alone, and serve goes on on its own port."""

from __future__ import annotations

import errno
import sys
import threading

from gptoss_local.i18n import _
from gptoss_local.serve.guard import Guard
from gptoss_local.serve.ollama.port import Holder, holder
from gptoss_local.serve.server import ApiServer, make_server
from gptoss_local.serve.service import Service

LOOPBACK = "127.0.0.1"


def ollama_listener(service: Service, guard: Guard, port: int) -> ApiServer | None:
    """A second server for `service` on `LOOPBACK:port`, serving on a thread; None (and a
    line on stderr saying who holds the port) when it cannot listen there."""
    ollama_guard = Guard(LOOPBACK, port, guard.api_key, guard.cors, guard.allowed_hosts)
    try:
        server = make_server(service, ollama_guard)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            print(taken(holder(port), port), file=sys.stderr)
        else:
            print(_("cannot listen on {host}:{port} for Ollama's apps: {error}").format(
                host=LOOPBACK, port=port, error=exc.strerror or exc), file=sys.stderr)  # fmt: skip
        return None
    threading.Thread(target=server.serve_forever, name="ollama-port", daemon=True).start()
    print(_("Ollama's apps find it at http://{host}:{port} too").format(host=LOOPBACK, port=port),
          file=sys.stderr)  # fmt: skip
    return server


def taken(found: Holder, port: int) -> str:
    """The line that says who holds Ollama's port, and what that means for Ollama's apps."""
    if found.kind == "ollama":
        return _("Ollama {version} is already on port {port}; Ollama-only apps will talk to it, "
                 "not to gptoss-local").format(version=found.version or "?", port=port)  # fmt: skip
    if found.kind == "gptoss-local":
        return _("another gptoss-local serve already answers Ollama's apps on port {port}"
                 ).format(port=port)  # fmt: skip
    return _("an unknown program (not Ollama) holds port {port}; Ollama-only apps cannot reach "
             "gptoss-local there").format(port=port)  # fmt: skip
