"""One line per schemathesis run from its JSON report: operations tested, test cases,
server errors (5xx), other failures (status, content type, response schema), errors.
Exits non-zero when anything failed.

    summary.py NAME REPORT.json SECONDS
"""
import json
import sys

name, path, seconds = sys.argv[1], sys.argv[2], sys.argv[3]
report = json.load(open(path))
operations = report.get("operations") or {}
cases = report.get("test_cases") or {}
server_errors = sum(g["count"] for g in report["failures"] if "server" in (g["type"] + g["code"] + g["title"]).lower())
other = sum(g["count"] for g in report["failures"]) - server_errors
errors = sum(e["count"] for e in report["errors"])
print(
    f"{name:<15} operations {operations.get('tested', 0)}/{operations.get('selected', 0)}  "
    f"test cases {cases.get('generated', 0)}  server errors {server_errors}  other failures {other}  "
    f"errors {errors}  ({seconds} s)"
)
for group in report["failures"]:
    print(f"  {group['title']} ({group['code']}): {group['count']} in {', '.join(group['operations'][:6])}")
for error in report["errors"]:
    print(f"  error: {error['title']} ({error['count']})")
sys.exit(0 if not report["failures"] and not errors else 1)
