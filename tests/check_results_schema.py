#!/usr/bin/python3
"""Validates results.json files against docs/results.schema.json (meshlab-results/3).

Usage: check_results_schema.py [--schema SCHEMA] FILE...
Prints every violation as FILE: at /json/pointer: message, and exits 0 when every file is
valid, 1 when one is not, 2 on bad usage or an unreadable file, 77 (skip) when the jsonschema
module is missing (Debian: python3-jsonschema, installed by scripts/deps.sh).

One known difference from the schema's own dialect: its patterns are ECMA-262 regular
expressions, where '$' matches at the very end of the text only, and python-jsonschema searches
them with python's re, whose '$' also matches before a last newline: a name such as
"three-guest\n" passes here. meshlab's built-in checker refuses it (tests/cli_schema_agree.sh
asserts that difference).
"""
import argparse
import json
import os
import sys

try:
    import jsonschema
except ImportError:
    print("check_results_schema: SKIP: the python3 jsonschema module is missing "
          "(apt-get install python3-jsonschema, as scripts/deps.sh does)", file=sys.stderr)
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SCHEMA = os.path.join(HERE, "..", "docs", "results.schema.json")


def pointer(path):
    return "/" + "/".join(str(p) for p in path)


def short(message, limit=300):
    return message if len(message) <= limit else message[:limit] + "..."


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--schema", default=DEFAULT_SCHEMA)
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    try:
        with open(args.schema, encoding="utf-8") as f:
            schema = json.load(f)
        jsonschema.Draft202012Validator.check_schema(schema)
    except (OSError, ValueError, jsonschema.SchemaError) as e:
        print(f"{args.schema}: not a usable schema: {e}", file=sys.stderr)
        return 2
    validator = jsonschema.Draft202012Validator(schema)
    status = 0
    for name in args.files:
        try:
            with open(name, encoding="utf-8") as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            print(f"{name}: cannot read it as JSON: {e}")
            return 2
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        for e in errors:
            where = pointer(e.absolute_path)
            # "valid under none of anyOf": the alternatives' own failures say why; an object
            # that failed its schema also fails the null beside it, which says nothing
            leaves = [c for c in (e.context or []) if not c.context
                      and not (c.validator == "type" and c.validator_value == "null")]
            if e.validator == "anyOf" and leaves:
                for c in leaves[:5]:
                    at = pointer(list(e.absolute_path) + list(c.relative_path))
                    print(f"{name}: at {at}: {short(c.message)}")
            else:
                print(f"{name}: at {where}: {short(e.message)}")
        if errors:
            status = 1
            print(f"{name}: INVALID ({len(errors)} error{'s' if len(errors) != 1 else ''})")
        else:
            print(f"{name}: valid meshlab-results/3")
    return status


if __name__ == "__main__":
    sys.exit(main())
