"""Seeds what schemathesis's authenticated calls need on a running grant service: a user with
a device (registration signed with the identity key), that device's bearer token (challenge-
response). Prints `user_id token`. (A family member needs a signed key statement, which
schemathesis could not extend anyway; its calls on family members meet 404.)

    seed.py https://127.0.0.1:PORT CA_FILE
"""
import base64
import json
import sys
import uuid

import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, x25519


def raw(public_key):
    return public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def b64(data):
    return base64.b64encode(data).decode()


def canonical(value):
    # Rescind's canonical JSON (Swift's JSONEncoder with sorted keys): no whitespace, unescaped slashes.
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def main():
    base, ca = sys.argv[1].rstrip("/"), sys.argv[2]
    session = requests.Session()
    session.verify = ca
    # Otherwise REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE from the environment replace `verify`.
    session.trust_env = False
    identity, agreement, device = ed25519.Ed25519PrivateKey.generate(), x25519.X25519PrivateKey.generate(), ed25519.Ed25519PrivateKey.generate()
    user_id, device_id = str(uuid.uuid4()).upper(), str(uuid.uuid4()).upper()
    request = {
        "user_id": user_id,
        "display_name": "Schemathesis owner",
        "agreement_public_key": b64(raw(agreement.public_key())),
        "identity_public_key": b64(raw(identity.public_key())),
        "device": {"device_id": device_id, "name": "schemathesis", "kind": "server", "signing_public_key": b64(raw(device.public_key()))},
        "signature": "",
    }
    request["signature"] = b64(identity.sign(b"rescind-register-user-v1\n" + canonical(request)))
    answer = session.post(base + "/v1/users", data=canonical(request), headers={"Content-Type": "application/json"})
    answer.raise_for_status()
    challenge = session.post(base + "/v1/auth/challenge", json={"device_id": device_id})
    challenge.raise_for_status()
    challenge = challenge.json()
    signed = ("rescind-device-auth-v1\n%s\n%s\n" % (challenge["challenge_id"].lower(), device_id.lower())).encode()
    signed += base64.b64decode(challenge["nonce"])
    token = session.post(
        base + "/v1/auth/token",
        json={"challenge_id": challenge["challenge_id"], "device_id": device_id, "signature": b64(device.sign(signed))},
    )
    token.raise_for_status()
    token = token.json()["token"]
    print(user_id.lower(), token)


if __name__ == "__main__":
    main()
