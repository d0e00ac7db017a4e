"""Run the real `digest` with every name under `.test` resolving to 127.0.0.1, so that pages of
the local news web get distinct registrable domains ("reuters.test", "axios.test") as real
publishers' pages have. `.test` is reserved (RFC 2606): no such name is on the internet, and
nothing else resolves differently. Use as `python -m tests.local_names ARGS` (`run_cli_named`).
"""

from __future__ import annotations

import socket
from typing import Any

_getaddrinfo = socket.getaddrinfo


def _local(host: Any, *args: Any, **kwargs: Any) -> Any:
    name = host.decode() if isinstance(host, bytes) else host
    if isinstance(name, str) and name.rstrip(".").lower().endswith(".test"):
        host = "127.0.0.1"
    return _getaddrinfo(host, *args, **kwargs)


if __name__ == "__main__":
    socket.getaddrinfo = _local
    from digest.cli import main

    main()
