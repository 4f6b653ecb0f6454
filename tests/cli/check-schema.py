#!/usr/bin/env python3
"""Check JSON documents against a JSON Schema, for tests/cli/run.sh.

CI machines have python3 but not the jsonschema package, so this is a small
validator for the subset of draft 2020-12 that docs/*.schema.json use: type,
required, properties, additionalProperties, items, minItems, maxItems, enum,
const, minimum, maximum, $ref (to "#/$defs/..."), allOf and oneOf; $schema,
$id, $defs, title, description and $comment are annotations.  A schema that
uses any other keyword is refused, so that nothing is silently left unchecked.

usage: check-schema.py SCHEMA FILE...
Prints one line per problem (FILE: PATH: what) and exits 1 if there was any.
"""
import json
import sys

ANNOTATIONS = {"$schema", "$id", "$defs", "title", "description", "$comment"}
KEYWORDS = {"type", "required", "properties", "additionalProperties", "items", "minItems",
            "maxItems", "enum", "const", "minimum", "maximum", "$ref", "allOf", "oneOf"}


def is_type(v, t):
    if t == "null":
        return v is None
    if t == "boolean":
        return isinstance(v, bool)
    if t == "integer":
        return (isinstance(v, int) and not isinstance(v, bool)) or \
            (isinstance(v, float) and v.is_integer())
    if t == "number":
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    if t == "string":
        return isinstance(v, str)
    if t == "array":
        return isinstance(v, list)
    if t == "object":
        return isinstance(v, dict)
    raise ValueError(f"unknown type {t!r}")


def same(a, b):
    """JSON equality: true is not 1, 1.0 is 1."""
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return type(a) is type(b) and a == b
    return a == b


class Checker:
    def __init__(self, root):
        self.root = root
        self.errors = []

    def resolve(self, ref):
        if not ref.startswith("#/"):
            raise ValueError(f"only local references are supported, not {ref!r}")
        node = self.root
        for part in ref[2:].split("/"):
            node = node[part]
        return node

    def lint(self, schema, where="#"):
        """Every keyword of the schema is one this checker knows."""
        if isinstance(schema, bool):
            return
        for k, v in schema.items():
            if k not in KEYWORDS and k not in ANNOTATIONS:
                self.errors.append(f"schema {where}: unsupported keyword {k!r}")
            if k in ("properties", "$defs"):
                for name, sub in v.items():
                    self.lint(sub, f"{where}/{k}/{name}")
            elif k in ("items", "additionalProperties") and isinstance(v, dict):
                self.lint(v, f"{where}/{k}")
            elif k in ("allOf", "oneOf"):
                for i, sub in enumerate(v):
                    self.lint(sub, f"{where}/{k}/{i}")

    def check(self, v, schema, path, errors):
        if schema is True:
            return
        if schema is False:
            errors.append(f"{path}: not allowed")
            return
        if "$ref" in schema:
            self.check(v, self.resolve(schema["$ref"]), path, errors)
        for sub in schema.get("allOf", []):
            self.check(v, sub, path, errors)
        if "oneOf" in schema:
            passing, closest = 0, None
            for sub in schema["oneOf"]:
                e = []
                self.check(v, sub, path, e)
                passing += not e
                if e and (closest is None or len(e) < len(closest)):
                    closest = e
            if passing != 1:
                errors.append(f"{path}: matches {passing} of the oneOf alternatives, "
                              f"not exactly one")
                if passing == 0:
                    errors += closest
        if "type" in schema:
            types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            if not any(is_type(v, t) for t in types):
                errors.append(f"{path}: {json.dumps(v)[:60]} is not of type {'/'.join(types)}")
                return
        if "const" in schema and not same(v, schema["const"]):
            errors.append(f"{path}: {v!r} is not {schema['const']!r}")
        if "enum" in schema and not any(same(v, e) for e in schema["enum"]):
            errors.append(f"{path}: {v!r} is not one of {schema['enum']!r}")
        if is_type(v, "number"):
            if "minimum" in schema and v < schema["minimum"]:
                errors.append(f"{path}: {v} < minimum {schema['minimum']}")
            if "maximum" in schema and v > schema["maximum"]:
                errors.append(f"{path}: {v} > maximum {schema['maximum']}")
        if isinstance(v, dict):
            for k in schema.get("required", []):
                if k not in v:
                    errors.append(f"{path}: missing required key {k!r}")
            props = schema.get("properties", {})
            for k, sub in v.items():
                if k in props:
                    self.check(sub, props[k], f"{path}.{k}", errors)
                elif "additionalProperties" in schema:
                    self.check(sub, schema["additionalProperties"], f"{path}.{k}", errors)
        if isinstance(v, list):
            if "minItems" in schema and len(v) < schema["minItems"]:
                errors.append(f"{path}: {len(v)} items, fewer than {schema['minItems']}")
            if "maxItems" in schema and len(v) > schema["maxItems"]:
                errors.append(f"{path}: {len(v)} items, more than {schema['maxItems']}")
            if "items" in schema:
                for i, item in enumerate(v):
                    self.check(item, schema["items"], f"{path}[{i}]", errors)


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip().split("\n\n")[-2], file=sys.stderr)
        return 2
    with open(sys.argv[1]) as f:
        schema = json.load(f)
    c = Checker(schema)
    c.lint(schema)
    problems = list(c.errors)
    for path in sys.argv[2:]:
        with open(path) as f:
            doc = json.load(f)
        errors = []
        c.check(doc, schema, "$", errors)
        problems += [f"{path}: {e}" for e in errors]
    for p in problems[:40]:
        print(p)
    if len(problems) > 40:
        print(f"... and {len(problems) - 40} more")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
