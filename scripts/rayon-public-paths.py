#!/usr/bin/env python3
"""Lists every public path of a crate from its rustdoc JSON, one `crate::path` a line.

Used to write compat/rayon/tests/rayon_api.rs, which checks that each of Rayon's public
paths resolves through the stand-ins. For a new Rayon release, in a copy of its source
(and of rayon-core's):

    cargo +nightly rustdoc --lib -- -Z unstable-options --output-format json
    python3 scripts/rayon-public-paths.py target/doc/rayon.json

Walks the crate's public modules from the root, following `pub use` of modules and of
globs; items hidden from the documentation (`#[doc(hidden)]`) are left out.
"""
import json
import sys


def public_paths(document):
    index = document["index"]
    crate = index[str(document["root"])]["name"]
    paths = set()

    def visit(module_id, prefix, seen):
        if module_id in seen:
            return
        seen = seen | {module_id}
        for child_id in index[str(module_id)]["inner"]["module"]["items"]:
            child = index.get(str(child_id))
            if child is None or child["visibility"] != "public":
                continue
            if "doc(hidden)" in json.dumps(child.get("attrs")):
                continue
            kind, inner = next(iter(child["inner"].items()))
            if kind == "impl":
                continue
            if kind == "use":
                target = index.get(str(inner["id"]))
                is_module = target is not None and "module" in target["inner"]
                if inner["is_glob"]:
                    if is_module:
                        visit(inner["id"], prefix, seen)
                    continue
                paths.add(prefix + inner["name"])
                if is_module:
                    visit(inner["id"], prefix + inner["name"] + "::", seen)
                continue
            paths.add(prefix + child["name"])
            if kind == "module":
                visit(child_id, prefix + child["name"] + "::", seen)

    visit(document["root"], crate + "::", set())
    return sorted(paths)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: rayon-public-paths.py CRATE.json")
    with open(sys.argv[1]) as file:
        for path in public_paths(json.load(file)):
            print(path)
