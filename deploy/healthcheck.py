"""Container healthcheck with no curl: GET a URL on loopback, exit 0 on HTTP 200, else 1.

Usage: ``python /opt/fitcheck/healthcheck.py [URL]``; without URL, ``HEALTHCHECK_URL`` or
``http://127.0.0.1:$FITCHECK_PORT/healthz``. Standard library only.
"""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request


def url_to_check(argv: list[str]) -> str:
    if len(argv) > 1:
        return argv[1]
    port = os.environ.get("FITCHECK_PORT", "8000")
    return os.environ.get("HEALTHCHECK_URL", f"http://127.0.0.1:{port}/healthz")


def main(argv: list[str]) -> int:
    url = url_to_check(argv)
    try:
        with urllib.request.urlopen(url, timeout=2.0) as response:
            return 0 if response.status == 200 else 1
    except (urllib.error.URLError, OSError) as exc:
        print(f"healthcheck {url}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
