"""One HTTP(S) GET with an optional Range, its failures sorted into retry-worthy and final.

Standard library only: urllib's default handlers take proxies from the environment
(`https_proxy`, `no_proxy`, ...), and TLS always verifies certificates against the system store.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import urllib.error
import urllib.request
from typing import Any

from gptoss_local import __version__
from gptoss_local.i18n import _
from gptoss_local.store.errors import StoreError
from gptoss_local.urls import url_problem

USER_AGENT = f"gptoss-local/{__version__}"


class Transient(Exception):
    """Worth retrying: a dropped connection, a timeout, a 5xx or 429 answer."""


class Final(Exception):
    """Retrying this source will not help: a 4xx, a wrong body, a TLS failure."""


class Unresolvable(Final):
    """The host name could not be resolved. Not worth a retry: without a working name lookup
    (no network at all, no DNS) the answer stays the same, and each wait only delays the
    advice to bring the file some other way."""


def check_url(url: str) -> None:
    """Refuse anything but https://, or http:// to this machine (local test servers, proxies).

    Raises:
        StoreError: the URL would send the request in clear text over the network, or is
            malformed.
    """
    problem = url_problem(url)
    if problem:
        raise StoreError(
            _(
                "refusing to download from {url!r}: {problem}. Check HF_ENDPOINT or "
                "the manifest's sources."
            ).format(url=url, problem=problem)
        )


class _SafeRedirects(urllib.request.HTTPRedirectHandler):
    """Follow redirects (the hub sends files to a CDN) but never down to clear-text http."""

    def redirect_request(
        self, req: Any, fp: Any, code: Any, msg: Any, headers: Any, newurl: str
    ) -> urllib.request.Request | None:
        try:
            check_url(newurl)
        except StoreError as exc:
            raise Final(f"redirected to an address that is not https: {newurl}") from exc
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def build_opener() -> urllib.request.OpenerDirector:
    """An opener with environment proxies, verified TLS and https-only redirects."""
    context = ssl.create_default_context()  # verifies certificates and host names
    return urllib.request.build_opener(
        urllib.request.HTTPSHandler(context=context), _SafeRedirects()
    )


def open_at(
    opener: urllib.request.OpenerDirector, url: str, start: int, timeout: float
) -> http.client.HTTPResponse:
    """GET `url` from byte `start` on; the caller reads and closes the response.

    Raises:
        Transient: the request may work if tried again.
        Final: it will not; the message says why.
    """
    try:
        check_url(url)
    except StoreError as exc:
        raise Final(str(exc)) from None
    request = urllib.request.Request(
        url, headers={"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
    )
    if start:
        request.add_header("Range", f"bytes={start}-")
    try:
        return opener.open(request, timeout=timeout)
    except urllib.error.HTTPError as exc:
        exc.close()
        raise _http_error(exc.code, exc.reason) from None
    except urllib.error.URLError as exc:
        raise _url_error(exc.reason) from None
    except socket.gaierror as exc:
        raise Unresolvable(describe(exc)) from None
    except (http.client.HTTPException, OSError) as exc:
        raise Transient(describe(exc)) from None


def _http_error(code: int, reason: Any) -> Exception:
    text = f"HTTP {code} {reason or ''}".strip()
    if code >= 500 or code in (408, 425, 429):
        return Transient(text)
    if code in (401, 403):
        return Final(f"{text}: the server refuses access (it may need a login, or block you)")
    if code == 404:
        return Final(f"{text}: the server does not have this file")
    return Final(text)


def _url_error(reason: Any) -> Exception:
    if isinstance(reason, ssl.SSLCertVerificationError):
        return Final(
            f"the TLS certificate could not be verified ({reason.verify_message}). "
            "Certificate checks are never switched off; if a company proxy inspects TLS, "
            "point SSL_CERT_FILE at its CA bundle"
        )
    if isinstance(reason, ssl.SSLError):
        return Final(f"TLS failed: {reason}")
    if isinstance(reason, (Final, Transient)):
        return reason
    if isinstance(reason, socket.gaierror):
        return Unresolvable(describe(reason))
    if isinstance(reason, BaseException):
        return Transient(describe(reason))
    return Transient(str(reason))


def describe(exc: BaseException) -> str:
    """A short description of a network failure."""
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return "the connection timed out"
    if isinstance(exc, socket.gaierror):
        return f"the host name could not be resolved ({exc.strerror or exc})"
    if isinstance(exc, ConnectionRefusedError):
        return "the connection was refused"
    if isinstance(exc, (ConnectionResetError, http.client.RemoteDisconnected)):
        return "the connection was dropped"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__
