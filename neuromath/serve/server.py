"""How ``neuromath serve`` runs its app under uvicorn: with a connection limit and timeouts, so that idle or slow
clients cannot hold the server, and with refused connections logged in one line.

uvicorn alone keeps a connection that sends half a header, or drips its body, open for as long as the client likes
(its keep-alive timeout runs only between requests), answers 503 to a request over ``limit_concurrency`` only once
the request has arrived, and leaves the accept loop's "out of system resource" errors (too many open files, when
idle connections pile up) to asyncio, which logs each one with a traceback. Here:

- ``guarded_protocol`` is uvicorn's h11 protocol with two more rules: a connection made while ``limit`` connections
  are open is answered 503 and closed at once (uvicorn's own check, at a request, is given one more, so that
  ``limit`` connections can each have a request); and a client has ``timeout_request`` seconds from its
  connection (or from the first byte after a response) to send a whole request, headers and body, or its
  connection is closed. The app's own time on a request is not bounded by it.
- ``OneLineLog`` turns such records (a refused connection, an accept error) into one line without a traceback, and
  into one line a ``interval`` at most, with the count of the others: a flood of them cannot fill a disk.
- ``run`` raises the soft limit of open files to what ``limit_concurrency`` needs, where the hard limit allows.
- ``host_of`` reads the host a Host header names, for the app's ``HostCheck`` and the command line's
  ``--allowed-host``.
"""

from __future__ import annotations

import ipaddress
import logging
import time

DEFAULT_LIMIT_CONCURRENCY = 100  # open connections; a browser holds a few, benchmarks/serve.py at most 32
DEFAULT_TIMEOUT_KEEP_ALIVE = 5  # seconds an idle connection stays open after a response (uvicorn's default)
DEFAULT_TIMEOUT_REQUEST = 10.0  # seconds to send a whole request: a body is at most 64 KiB (app.MAX_BODY_BYTES)
SPARE_FILES = 64  # open files beyond the connections: run folders, logs, worker pipes
REFUSED = (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
           b"content-length: 29\r\n\r\ntoo many connections; retry\r\n")

LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")  # the names of this machine, answered whatever the other hosts
EVERY_ADDRESS = ("0.0.0.0", "::", "")  # a --host that binds every address of the machine

log = logging.getLogger("neuromath.serve")


def host_of(header: str) -> str | None:
    """The host a Host header names, without its port, lower-cased and without a final dot: ``Example.COM:8000`` is
    ``example.com``, ``[::1]:8000`` is ``::1``; None for a header that is not a host with an optional port."""
    header = header.strip().lower()
    if header.startswith("["):  # an IPv6 address
        end = header.find("]")
        host, rest = (header[1:end], header[end + 1:]) if end > 0 else ("", "")
        port_ok = not rest or (rest.startswith(":") and rest[1:].isdigit())
        return host if host and port_ok else None
    host, colon, port = header.partition(":")
    host = host.rstrip(".")
    if not host or (colon and not port.isdigit()) or any(c in host for c in "/@?#\\ []"):
        return None
    return host


def is_address(host: str) -> bool:
    """Whether ``host`` is an IP address (v4 or v6), not a name."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def guarded_protocol(limit: int, timeout_request: float):
    """uvicorn's h11 protocol class (``uvicorn.run(..., http=...)``) that refuses connections beyond ``limit`` open
    ones and closes those that do not send a whole request within ``timeout_request`` seconds."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedH11Protocol(H11Protocol):
        request_timer = None

        def connection_made(self, transport) -> None:
            if len(self.connections) >= limit:
                peer = transport.get_extra_info("peername")
                log.warning("refused a connection from %s: %d connections are open (--limit-concurrency)",
                            peer[0] if isinstance(peer, tuple) else "?", len(self.connections))
                transport.write(REFUSED)
                transport.close()
                self.transport = transport
                return
            super().connection_made(transport)
            self._arm()

        def connection_lost(self, exc) -> None:
            self._disarm()
            if self.flow is None:  # refused in connection_made: uvicorn never took it
                return
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self.flow is None:
                return
            super().data_received(data)
            if self.transport.is_closing() or self.conn.their_state not in (h11.IDLE, h11.SEND_BODY):
                self._disarm()  # the request is in (or the connection is done): the app's time is its own
            else:
                self._arm()  # a request has begun or goes on: it must be whole within the time limit

        def _arm(self) -> None:
            if self.request_timer is None:
                self.request_timer = self.loop.call_later(timeout_request, self._request_timed_out)

        def _disarm(self) -> None:
            if self.request_timer is not None:
                self.request_timer.cancel()
                self.request_timer = None

        def _request_timed_out(self) -> None:
            self.request_timer = None
            if not self.transport.is_closing():
                client = self.client[0] if self.client else "?"
                log.info("closed a connection from %s: no whole request within %g s (--timeout-request)", client,
                         timeout_request)
                self.transport.close()  # a request the app is reading gets http.disconnect

    return GuardedH11Protocol


class OneLineLog(logging.Filter):
    """A logging filter: records whose message starts with one of ``prefixes`` lose their traceback and pass at most
    once an ``interval`` (seconds) per prefix, with the number of those held back since; other records pass as they
    are."""

    def __init__(self, prefixes: tuple[str, ...], interval: float = 10.0):
        super().__init__()
        self.prefixes = prefixes
        self.interval = interval
        self.last: dict[str, float] = {}
        self.held: dict[str, int] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        prefix = next((p for p in self.prefixes if message.startswith(p)), None)
        if prefix is None:
            return True
        now = time.monotonic()
        if now - self.last.get(prefix, -self.interval) < self.interval:
            self.held[prefix] = self.held.get(prefix, 0) + 1
            return False
        self.last[prefix] = now
        reason = f": {record.exc_info[1]}" if record.exc_info and record.exc_info[1] is not None else ""
        held = self.held.pop(prefix, 0)
        since = f" ({held} more like it in the last {self.interval:g} s, not logged)" if held else ""
        record.msg, record.args = f"{message}{reason}{since}", None
        record.exc_info = record.exc_text = record.stack_info = None
        return True


# what the filters shorten: asyncio's accept-loop errors (EMFILE and the like, with a traceback each) and the
# refusals of this module and of uvicorn (a request over the limit)
ONE_LINE = {"asyncio": ("socket.accept() out of system resource",),
            "neuromath.serve": ("refused a connection", "closed a connection"),
            "uvicorn.error": ("Exceeded concurrency limit",)}


def install_log_filters(interval: float = 10.0) -> None:
    """``OneLineLog`` on the loggers of ``ONE_LINE``, and a handler that writes neuromath.serve's records to stderr
    (``WARNING: message``) at the level set on the logger."""
    serve_log = logging.getLogger("neuromath.serve")
    if not serve_log.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s: %(message)s"))
        serve_log.addHandler(handler)
        serve_log.propagate = False
    for name, prefixes in ONE_LINE.items():
        logger = logging.getLogger(name)
        if not any(isinstance(f, OneLineLog) for f in logger.filters):
            logger.addFilter(OneLineLog(prefixes, interval))


def raise_open_file_limit(needed: int) -> None:
    """The soft limit of open files raised to ``needed`` where the hard limit allows; a warning where it does not."""
    try:
        import resource
    except ImportError:  # not on POSIX
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return
    target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    except (ValueError, OSError):
        target = soft
    if target < needed:
        log.warning("open files are limited to %d; --limit-concurrency needs about %d (ulimit -n)", target, needed)


def run(app, host: str, port: int, log_level: str, limit_concurrency: int = DEFAULT_LIMIT_CONCURRENCY,
        timeout_keep_alive: int = DEFAULT_TIMEOUT_KEEP_ALIVE,
        timeout_request: float = DEFAULT_TIMEOUT_REQUEST) -> None:
    """Serve ``app`` with uvicorn until interrupted, with the limits above."""
    import uvicorn

    logging.getLogger("neuromath.serve").setLevel(getattr(logging, log_level.upper()))
    install_log_filters()
    raise_open_file_limit(limit_concurrency + SPARE_FILES)
    uvicorn.run(app, host=host, port=port, log_level=log_level,
                http=guarded_protocol(limit_concurrency, timeout_request),
                limit_concurrency=limit_concurrency + 1,  # uvicorn counts the connection asking; see the docstring
                timeout_keep_alive=timeout_keep_alive)
