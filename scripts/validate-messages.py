"""Validates Kafka messages of Rescind against schemas/ with an independent validator
(Python jsonschema, draft 2020-12), so that the contract an outside consumer reads is the one
the services write.

    validate-messages.py SCHEMAS_DIR MESSAGES_DIR [--require SCHEMA ...]

MESSAGES_DIR holds one file per topic, `<topic>.jsonl` (a message's JSON per line, as
`rescind-admin tail TOPIC --json --from-beginning --until-end` prints them). Every message must
name, in its `schema` field, a schema that its topic carries, and validate against that schema
with formats checked (uuid, date-time, and OpenAPI's byte as strict base64). Prints the count per
topic and schema and every failure; exits 1 on any failure or when a --require'd schema was not
seen at all.
"""
import base64
import binascii
import datetime
import json
import pathlib
import sys

import jsonschema
import referencing

# What each topic carries (Sources/RescindProtocol/Messages/Topic.swift).
TOPICS = {
    "revocation_events": {"rescind.revocation_event.v1"},
    "access_events": {"rescind.access_event.v1", "rescind.governance_notice.v1"},
    "device_commands": {"rescind.device_command.v1", "rescind.governance_notice.v1", "rescind.command_reissue.v1"},
    "device_acks": {"rescind.device_ack.v1", "rescind.key_chain_violation.v1"},
    "audit_notifications": {"rescind.audit_notification.v1"},
}


def format_checker():
    checker = jsonschema.FormatChecker()

    @checker.checks("byte", raises=(binascii.Error, ValueError))
    def is_base64(value):
        return not isinstance(value, str) or base64.b64decode(value, validate=True) is not None

    @checker.checks("date-time", raises=ValueError)
    def is_date_time(value):
        if not isinstance(value, str):
            return True
        if "T" not in value or not (value.endswith("Z") or value[-6] in "+-"):
            raise ValueError("not an RFC 3339 timestamp with an offset")
        return datetime.datetime.fromisoformat(value) is not None

    return checker


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 64
    schemas_dir, messages_dir = pathlib.Path(argv[1]), pathlib.Path(argv[2])
    required = argv[argv.index("--require") + 1:] if "--require" in argv else []
    documents = {}
    for path in sorted(schemas_dir.glob("*.schema.json")):
        document = json.loads(path.read_text())
        documents[path.name.removesuffix(".schema.json")] = document
    registry = referencing.Registry().with_resources(
        (document["$id"], referencing.Resource.from_contents(document)) for document in documents.values())
    checker = format_checker()
    validators = {
        name: jsonschema.Draft202012Validator(document, registry=registry, format_checker=checker)
        for name, document in documents.items()
    }
    counts, failures = {}, []
    for topic, allowed in TOPICS.items():
        path = messages_dir / f"{topic}.jsonl"
        if not path.exists():
            continue
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if not line.strip():
                continue
            where = f"{topic}.jsonl:{number}"
            try:
                message = json.loads(line)
            except json.JSONDecodeError as error:
                failures.append(f"{where}: not JSON ({error})")
                continue
            schema = message.get("schema") if isinstance(message, dict) else None
            if schema not in allowed:
                failures.append(f"{where}: schema {schema!r} is not one {topic} carries ({', '.join(sorted(allowed))})")
                continue
            counts[(topic, schema)] = counts.get((topic, schema), 0) + 1
            for error in validators[schema].iter_errors(message):
                path_text = "/".join(str(part) for part in error.absolute_path) or "(root)"
                failures.append(f"{where}: {schema} at {path_text}: {error.message}")
    for (topic, schema), count in sorted(counts.items()):
        print(f"{topic:<20} {schema:<34} {count:>6}")
    seen = {schema for _, schema in counts}
    for schema in required:
        if schema not in seen:
            failures.append(f"no message of {schema} was seen")
    for failure in failures[:50]:
        print("FAIL " + failure)
    if len(failures) > 50:
        print(f"FAIL … and {len(failures) - 50} more")
    print(f"{sum(counts.values())} messages, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
