#!/usr/bin/env python3
"""Regenerates pathspec_cases.json: what Python's pathspec library (the one
Harbor filters task files with) answers for each (pattern, path) pair below.
TestIgnoreMatchesPathspec checks tpctl's Go translation gives the same
answers. Run with a Python that has pathspec installed (0.11 or 0.12):

    python3 digest/testdata/gen_pathspec_cases.py > digest/testdata/pathspec_cases.json
"""
import json
import pathspec

PATTERNS = [
    "__pycache__/", "*.pyc", ".DS_Store", "*.swp", "*.swo", "*~",
    "foo", "/foo", "foo/", "/foo/", "foo/bar", "/foo/bar", "foo/bar/",
    "*", "**", "**/", "/**", "**/foo", "foo/**", "foo/**/bar", "a/**/**/b",
    "**/foo/bar", "*/bar", "f*o", "f?o", "f[ab]o", "f[!ab]o", "f[a-c]o",
    "f[]]o", "f[!]]o", "f[^a]o", "f[--0]o", "f[-a]o", "f[a-]o", "[", "f[o",
    r"\#x", r"\!x", r"f\*o", "#comment", "  spaced  ", "!", "/",
    "tests/", "/tests/a/", "*.sh", "solution/*.sh", "x y", "dir/*", "dir/*/z",
    "é*", "*.tar.gz", ".*", "a/b/c/d", "[[:alpha:]]", "x[[:digit:]]",
]
NEGATED = ["*.sh\n!keep.sh", "tests/\n!tests/keep", "*\n!*.md", "foo/\n!foo/bar"]
PATHS = [
    "foo", "foo/bar", "foo/bar/baz", "x/foo", "x/foo/bar", "a/foo/b", "bar",
    "fao", "fbo", "fco", "fdo", "f]o", "f^o", "f-o", "f/o", "f*o", "fxo", "f[o",
    "#x", "!x", "x", "spaced", "__pycache__/m.pyc", "a/__pycache__/m.pyc",
    "m.pyc", "a/m.pyc", "m.pyc.txt", "a/.DS_Store", "x.swp", "x~", "~x",
    "tests/test.sh", "tests/a/x", "tests/a-b/x", "tests/keep", "keep.sh",
    "solution/solve.sh", "solution/sub/solve.sh", "x y", "dir/z", "dir/q/z",
    "dir/q/r/z", "é1", "e1", "a.tar.gz", ".hidden", "a/.hidden",
    "a/b", "a/x/b", "a/x/y/b", "a/b/c/d", "a/b/c/d/e", "README.md", "a/README.md",
    "foo/bar\n", "a]", ":]", "[]", "x1", "x:]", "x[]",
]

def answers(lines):
    try:
        spec = pathspec.PathSpec.from_lines("gitwildmatch", lines)
    except Exception as e:  # Harbor would fail on this .gitignore
        return {"error": type(e).__name__}
    return {"matches": {p: spec.match_file(p) for p in PATHS}}

cases = []
for p in PATTERNS:
    cases.append({"lines": [p], **answers([p])})
for block in NEGATED:
    lines = block.split("\n")
    cases.append({"lines": lines, **answers(lines)})
print(json.dumps({"pathspec": pathspec.__version__, "cases": cases}, indent=1, ensure_ascii=False))
