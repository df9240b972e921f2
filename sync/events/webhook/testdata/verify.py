#!/usr/bin/env python3
"""Verify an hrsync webhook delivery (Standard Webhooks), with Python's standard library only.

The snippet for docs/: a receiver calls verify(secret, headers, body) with the secret it was
given ("whsec_" + base64 of the key), the request's headers and its raw body (bytes, before
any JSON parsing), and accepts the delivery only when it returns True.

Run as a script (as the Go tests do):

    WEBHOOK_SECRET=whsec_... python3 verify.py ID TIMESTAMP SIGNATURE < body

it exits 0 when the delivery is valid, 1 when it is not, 2 on a usage error. The secret comes
from the environment rather than the command line, which other users can see.
"""

import base64
import hashlib
import hmac
import os
import sys
import time

SECRET_PREFIX = "whsec_"


def verify(secret, headers, body, tolerance=300):
    """Report whether body, with headers, was signed with secret within tolerance seconds of now.

    secret: "whsec_" + base64 of the key bytes.
    headers: a mapping of header names (any case) to values: webhook-id, webhook-timestamp,
        webhook-signature (one or more space-separated "v1,<base64>" signatures).
    body: the raw body, bytes.
    """
    lower = {str(k).lower(): v for k, v in headers.items()}
    msg_id = lower.get("webhook-id", "")
    timestamp = lower.get("webhook-timestamp", "")
    signatures = lower.get("webhook-signature", "")
    if not msg_id or not timestamp or not signatures:
        return False

    # The timestamp is whole Unix seconds; refuse old (replayed) and future messages.
    if not (timestamp.isascii() and timestamp.isdigit()):
        return False
    if abs(time.time() - int(timestamp)) > tolerance:
        return False

    if not secret.startswith(SECRET_PREFIX):
        return False
    try:
        key = base64.b64decode(secret[len(SECRET_PREFIX):], validate=True)
    except ValueError:
        return False

    signed = msg_id.encode() + b"." + timestamp.encode() + b"." + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest())

    for versioned in signatures.split(" "):
        version, _, signature = versioned.partition(",")
        if version != "v1":
            continue
        if hmac.compare_digest(signature.encode(), expected):
            return True
    return False


def main(argv):
    if len(argv) != 4 or "WEBHOOK_SECRET" not in os.environ:
        print("usage: WEBHOOK_SECRET=whsec_... verify.py ID TIMESTAMP SIGNATURE < body",
              file=sys.stderr)
        return 2
    headers = {
        "webhook-id": argv[1],
        "webhook-timestamp": argv[2],
        "webhook-signature": argv[3],
    }
    body = sys.stdin.buffer.read()
    return 0 if verify(os.environ["WEBHOOK_SECRET"], headers, body) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
