#!/usr/bin/env python3
"""Labelled raw command outputs (no exit status in the text), in the corpus
format of shared/corpus/tool_results.jsonl.

Many tools hand the model a command's output and nothing else: a shell
tool that returns stdout and stderr, an MCP server's `run_command`. Whether
the command failed must then be read from the output itself, often only
from its last lines (`error: could not compile …`, pytest's `1 failed`
summary, `make: *** … Error 1`). This script runs real programs installed
here (cargo, rustc, gcc, make, python3, pytest, mypy, tsc, eslint, npm, git,
javac, go) in a
scratch directory, each command with `bash -c '… 2>&1'`, and labels each
output by the command's exit status (non-zero is a failure). It never
reads the output to label it. Half the commands succeed with outputs that
look like failures (counts of zero, `xfailed`, a warning, a `git log` of
commits about failures, `wc -l gone.txt`, search hits in source files).

    python3 -m venv /tmp/v && /tmp/v/bin/pip install pytest click mypy
    (mkdir -p /tmp/ts && cd /tmp/ts && npm install typescript@5 eslint@9)
    apt-get install golang-go   # go scenarios are skipped without `go` on PATH
    python3 scripts/detect-data/raw_commands.py --pytest /tmp/v/bin/pytest --python /tmp/v/bin/python \
        --tsc /tmp/ts/node_modules/.bin/tsc --eslint /tmp/ts/node_modules/.bin/eslint \
        > /work/data/detect/raw-commands.jsonl
    toolwarden eval-detector --mistakes /work/data/detect/raw-commands.jsonl

The fifty-third session's programs (FRESH53: ruff, black, flake8, pylint,
pip, node --test, jest, vitest, eslint's own errors, bash -n, shellcheck,
perl, ruby, sqlite3, curl, cargo clippy and cargo fmt) are found on PATH,
with `--bin` directories first; each runs plainly, through `| tail -20`
(with pipefail) and, for some, in Claude Code's background form (the
output written to a task file, the recorded command a `tail -30` of it,
labelled by the writing command's status); `--fresh53` runs them alone:

    python3 -m venv /tmp/v53 && /tmp/v53/bin/pip install ruff black flake8 pylint pytest
    (mkdir -p /tmp/js && cd /tmp/js && npm init -y && npm install jest vitest eslint@9)
    apt-get install shellcheck ruby
    python3 scripts/detect-data/raw_commands.py --fresh53 --bin /tmp/v53/bin \
        --bin /tmp/js/node_modules/.bin > /work/data/detect/s53d-fresh.jsonl

The fifty-fourth session's (FRESH54: prettier, biome, oxlint, esbuild,
mocha, pyright, isort, yamllint, bandit, coverage, uv, Django's manage.py,
clang, cmake, psql, java, sed, awk, jq, tar, unzip, make -C, lua, php) run
the same ways, `--fresh54` alone; psql's need `--pg URL` (a cluster:
`bash .ci/pg.sh start`), whose server they reach through libpq's
variables:

    python3 -m venv /tmp/v54 && /tmp/v54/bin/pip install isort yamllint bandit coverage django uv pytest
    (mkdir -p /tmp/js54 && cd /tmp/js54 && npm init -y && \
        npm install prettier @biomejs/biome oxlint esbuild mocha pyright)
    apt-get install clang cmake lua5.4 php-cli   # java, psql, zip: already here
    python3 scripts/detect-data/raw_commands.py --fresh54 --bin /tmp/v54/bin \
        --bin /tmp/js54/node_modules/.bin --pg "$(bash .ci/pg.sh start)" \
        > /work/data/detect/s54d-fresh.jsonl

The fifty-fifth session's (FRESH55: cppcheck, clang-tidy, xmllint,
markdownlint, stylelint, htmlhint, tsx, rollup, tox, nox, sphinx-build,
mkdocs, alembic, twine check, pre-commit, ansible-playbook, ocaml,
escript, openssl, gpg, rsync, find, diff, cmp, grep -c and -q, timeout)
run the same ways, `--fresh55` alone:

    python3 -m venv /tmp/v55 && /tmp/v55/bin/pip install tox nox sphinx mkdocs alembic twine \
        pre-commit ansible-core pytest
    (mkdir -p /tmp/js55 && cd /tmp/js55 && npm init -y && \
        npm install markdownlint-cli stylelint htmlhint tsx rollup)
    apt-get install cppcheck clang-tidy libxml2-utils erlang-base ocaml-nox rsync
    python3 scripts/detect-data/raw_commands.py --fresh55 --bin /tmp/v55/bin \
        --bin /tmp/js55/node_modules/.bin > /work/data/detect/s55d-fresh.jsonl

Everything runs offline (npm only with `--offline`; cargo crates without
dependencies). Outputs vary slightly between runs (times, temp paths);
labels do not. Data stays out of the repository.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

MAX_CONTENT = 65536
TIMEOUT = 300

RUST_ONE_ERROR = 'fn main() {\n    let n: i32 = "three";\n    println!("{n}");\n}\n'
RUST_TWO_ERRORS = 'fn main() {\n    let n: i32 = "three";\n    println!("{}", m);\n}\n'
RUST_WARNING = 'fn main() {\n    let unused = 1;\n    println!("ok");\n}\n'
RUST_FAILING_TEST = """fn main() {}

#[cfg(test)]
mod tests {
    #[test]
    fn adds() { assert_eq!(1 + 1, 2); }
    #[test]
    fn subtracts() { assert_eq!(3 - 1, 1, "three minus one"); }
}
"""
RUST_PASSING_TEST = """fn main() {}

#[cfg(test)]
mod tests {
    #[test]
    fn adds() { assert_eq!(1 + 1, 2); }
}
"""
RUST_LIB_FAILING_TEST = "#[cfg(test)]\nmod tests {\n    #[test]\n    fn f() { assert_eq!(1, 2); }\n}\n"
CARGO_TOML = '[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'

PY_TESTS_ONE_FAIL = """def test_a():
    assert 1 + 1 == 2

def test_b():
    assert "abc".upper() == "ABC"

def test_c():
    assert sum([1, 2]) == 4

def test_d():
    assert True
"""
PY_TESTS_PASS = "def test_a():\n    assert 1 + 1 == 2\n\ndef test_b():\n    assert True\n"
PY_TESTS_XFAIL = """import pytest

def test_a():
    assert True

@pytest.mark.xfail(reason="known bug")
def test_b():
    assert False

@pytest.mark.skip(reason="slow")
def test_c():
    pass
"""
PY_TESTS_FIXTURE_ERROR = """import pytest

@pytest.fixture
def db():
    raise RuntimeError("cannot open database")

def test_a(db):
    assert db

def test_b():
    assert True
"""
PY_TESTS_IMPORT_ERROR = "import no_such_module_here\n\ndef test_a():\n    assert True\n"
UNITTEST_FAIL = """import unittest

class T(unittest.TestCase):
    def test_ok(self):
        self.assertEqual(1, 1)

    def test_bad(self):
        self.assertEqual(len("abc"), 4)

if __name__ == "__main__":
    unittest.main()
"""
UNITTEST_ERROR = """import unittest

class T(unittest.TestCase):
    def test_boom(self):
        {}["missing"]

if __name__ == "__main__":
    unittest.main()
"""
UNITTEST_OK = """import unittest

class T(unittest.TestCase):
    def test_ok(self):
        self.assertEqual(1, 1)

    @unittest.expectedFailure
    def test_known(self):
        self.assertEqual(1, 2)

if __name__ == "__main__":
    unittest.main()
"""
ARGPARSE_TOOL = """import argparse

p = argparse.ArgumentParser(prog="deploy.py", description="Deploy a build.")
p.add_argument("target", help="where to deploy")
p.add_argument("--env", choices=["staging", "prod"], default="staging")
args = p.parse_args()
print(f"deploying to {args.target} ({args.env})")
"""
CLICK_TOOL = """import click

@click.command()
@click.argument("name")
@click.option("--count", default=1, help="how many greetings")
def main(name, count):
    \"\"\"Greet NAME.\"\"\"
    for _ in range(count):
        click.echo(f"hello {name}")

main()
"""
SCRIPT_WITH_SUMMARY = """results = {"passed": 12, "failed": 0}
print("running checks...")
print(f"{results['passed']} passed, {results['failed']} failed")
"""
SCRIPT_ERRORS_HANDLED = """import sys
for name in ["a.csv", "b.csv"]:
    print(f"{name}: error: bad header, skipped", file=sys.stderr)
print("imported 40 rows")
"""
SCRIPT_LATE_TRACEBACK = """import json
print("loading config")
print("parsing 3 files")
json.loads("{bad json")
"""
PY_TYPE_ERRORS = 'def f(x: int) -> str:\n    return x\n\ny: int = "a"\n'
PY_TYPED_OK = "def f(x: int) -> int:\n    return x\n"
TS_TWO_ERRORS = 'let x: number = "a";\nlet y: string = 1;\n'
TS_ONE_ERROR = 'let z: number = "b";\n'
C_OK = '#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n'
C_LINK_ERROR = "int helper(void);\nint main(void) { return helper(); }\n"
C_WARNINGS_THEN_ERROR = """#include <stdio.h>
int f(int x) { int unused; return x; }
int g(int y) { int also_unused; return y; }
int main(void) {
    printf("%d\\n", f(1) + g(2));
    return undefined_name;
}
"""
MAKEFILE_FAIL = "all:\n\t@echo building\n\tfalse\n"
MAKEFILE_IGNORED = "all:\n\t-false\n\t@echo done anyway\n"
MAKEFILE_OK = "all:\n\t@echo building\n\t@echo done\n"
MAKEFILE_GCC = "prog: main.c\n\tgcc -Wall -o prog main.c\n"
MAKEFILE_RECURSIVE = "all:\n\t$(MAKE) -C sub\n"
JAVA_ERROR = 'public class Main {\n  public static void main(String[] a) {\n    int x = "s";\n  }\n}\n'
JAVA_ERROR_AND_WARNING = """import java.util.*;
public class Main {
  public static void main(String[] a) {
    List l = new ArrayList(); l.add("x");
    int x = "s";
  }
}
"""
JAVA_OK = 'public class Main {\n  public static void main(String[] a) {\n    System.out.println("ok");\n  }\n}\n'
PACKAGE_JSON = """{
  "name": "probe",
  "version": "1.0.0",
  "scripts": {
    "test": "node -e \\"console.log('1 test'); process.exit(1)\\"",
    "ok": "node -e \\"console.log('0 failed, 3 passed')\\"",
    "build": "node build.js"
  }
}
"""
NODE_BUILD = "console.log('bundling');\nthrow new Error('entry point src/index.js missing');\n"

GO_MOD = "module example.com/pkg\n\ngo 1.19\n"
GO_UNDEFINED = 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println(x)\n\ty := 1\n}\n'
GO_SYNTAX_ERROR = 'package main\n\nfunc main() {\n\tif true {\n}\n'
GO_VET_PRINTF = 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Printf("%d\\n", "s")\n}\n'
GO_FIVE_UNDEFINED = 'package main\n\nfunc main() {\n\t_ = a\n\t_ = b\n\t_ = c\n\t_ = d\n\t_ = e\n}\n'
GO_ADD = "package main\n\nfunc Add(a, b int) int { return a + b }\n\nfunc main() {}\n"
GO_TEST_FAILING = """package main

import "testing"

func TestAdd(t *testing.T) {
\tif Add(1, 2) != 4 {
\t\tt.Errorf("Add(1, 2) = %d, want 4", Add(1, 2))
\t}
}

func TestOk(t *testing.T) {}
"""
GO_TEST_PASSING = """package main

import "testing"

func TestAdd(t *testing.T) {
\tif Add(1, 2) != 3 {
\t\tt.Fatal("bad")
\t}
}

func TestRetryAfterFAIL(t *testing.T) {
\tt.Log("FAIL on the first try is expected; the retry passes")
}
"""
GO_TEST_UNDEFINED = 'package main\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n\t_ = y\n}\n'
GO_PANIC = 'package main\n\nfunc main() {\n\tvar m map[string]int\n\tm["a"] = 1\n}\n'
GO_LOG_FATAL = 'package main\n\nimport "log"\n\nfunc main() {\n\tlog.SetFlags(0)\n\tlog.Fatal("config.yaml: missing key port")\n}\n'
GO_NIL_POINTER = """package main

import "fmt"

func main() {
\tfmt.Println("loading 3 files")
\tvar p *struct{ n int }
\tfmt.Println(p.n)
}
"""
GO_MISSING_MODULE = 'package main\n\nimport "github.com/nobody/nothing"\n\nfunc main() { nothing.Do() }\n'
GO_PRINTS_UNDEFINED = 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("# example.com/pkg")\n\tfmt.Println("./main.go:6:14: undefined: x")\n\tfmt.Println("fixed in 1.2.3")\n}\n'
GO_EXITS_3 = """package main

import (
\t"fmt"
\t"os"
)

func main() {
\tfmt.Println("checking 3 files")
\tfmt.Fprintln(os.Stderr, "config.yaml: missing key port")
\tos.Exit(3)
}
"""
GO_KILLS_ITSELF = """package main

import (
\t"fmt"
\t"syscall"
)

func main() {
\tfmt.Println("working")
\tsyscall.Kill(syscall.Getpid(), syscall.SIGKILL)
}
"""
GO_IMPORTS_MISSING = 'package main\n\nimport "example.com/nothere"\n\nfunc main() { nothere.Do() }\n'
GO_PRINTS_LINT = 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("main.go:3:1: exported function Foo should have comment")\n}\n'
GO_GENERATE_MISSING_TOOL = "package main\n\n//go:generate stringer -type=Pill\ntype Pill int\n\nfunc main() {}\n"
GO_GENERATE_FAILS = 'package main\n\n//go:generate sh -c "echo generating; echo gen.go: bad input >&2; exit 1"\n\nfunc main() {}\n'
GO_GENERATE_OK = 'package main\n\n//go:generate sh -c "echo generating pill_string.go; echo main.go:3: wrote 2 types"\n\nfunc main() {}\n'
GO_GENERATE_BAD_DIRECTIVE = 'package main\n\n//go:generate echo "unterminated\n\nfunc main() {}\n'
GO_MAIN_ONLY = "package main\n\nfunc main() {}\n"
# A module proxy in a directory (GOPROXY=file://…), written by the script:
# example.com/x v1.0.0 and v1.1.0, example.com/old (deprecated),
# example.com/r v1.0.0 (retracted by v1.1.0).
GO_PROXY_MODULES = [
    ("example.com/x", "v1.0.0", "module example.com/x\n\ngo 1.19\n", {"x.go": "package x\n\nfunc Do() {}\n"}),
    ("example.com/x", "v1.1.0", "module example.com/x\n\ngo 1.19\n", {"x.go": "package x\n\nfunc Do() {}\n"}),
    ("example.com/old", "v1.0.0", "// Deprecated: use example.com/x instead.\nmodule example.com/old\n\ngo 1.19\n",
     {"old.go": "package old\n"}),
    ("example.com/r", "v1.0.0", "module example.com/r\n\ngo 1.19\n", {"r.go": "package r\n"}),
    ("example.com/r", "v1.1.0", "module example.com/r\n\ngo 1.19\n\nretract v1.0.0 // published by mistake\n",
     {"r.go": "package r\n"}),
]
# The environment of the scenarios that fetch from it ({goproxy}: its path).
# A generator run by `go run ./gen` that logs with the log package and
# ends with log.Fatalf (status 1), or logs and succeeds.
GO_GENERATE_GO_RUN = "package main\n\n//go:generate go run ./gen\n\nfunc main() {}\n"
GO_GEN_LOG_FATALF = ('package main\n\nimport "log"\n\nfunc main() {\n\tlog.Printf("reading pills.json")\n'
                     '\tlog.Fatalf("gen: pills.json: unexpected end of JSON input")\n}\n')
GO_GEN_LOG_OK = ('package main\n\nimport (\n\t"log"\n\t"os"\n)\n\nfunc main() {\n\tlog.Printf("reading pills.json")\n'
                 '\tif err := os.WriteFile("pill_string.go", []byte("package main\\n"), 0o644); err != nil {\n'
                 '\t\tlog.Fatal(err)\n\t}\n\tlog.Printf("wrote pill_string.go: 2 types")\n}\n')


def go_unformatted(n):
    """A syntactically valid Go file gofmt rewrites: n functions with bad
    spacing, its diff about 120 bytes a function."""
    return "package c\n" + "".join(
        f"func F{i}( a int,b int ) int {{\nreturn a+b*{i}\n}}\n" for i in range(n))


def go_long_source(n):
    """A formatted Go file whose raw string holds lines of gofmt's error
    shape, above n more functions (gofmt prints it as it is, status 0)."""
    return ("package c\n\nconst Doc = `\na.go:1:1: expected 'package', found 'func'\nb.go\n`\n"
            + "".join(f"\nfunc F{i}(a int, b int) int {{\n\treturn a + b*{i}\n}}\n" for i in range(n)))


GO_PROXY_ENV = {"GOPROXY": "file://{goproxy}", "GOSUMDB": "off"}
ESLINT_CONFIG = """export default [{
  languageOptions: { globals: { console: "readonly" } },
  rules: { "no-unused-vars": "error", "no-undef": "error" },
}];
"""
JS_LINT_ERRORS = "const unused = 1;\nconsole.log(notDefined);\n"
JS_LINT_WARNING = "// eslint-disable-next-line no-unused-vars\nconst a = 1;\nconsole.log(a);\n"
TS_UNDEFINED_NAMES = 'let a: number = 1;\nconsole.log(a);\nconsole.log(missingName);\nlet b: string = 2;\n'


def cargo_crate(name, main):
    return {f"{name}/Cargo.toml": CARGO_TOML.format(name=name), f"{name}/src/main.rs": main}


def git_repo_with(messages):
    cmds = ["git init -q repo", "cd repo", "git config user.email p@example.com",
            "git config user.name probe"]
    for i, m in enumerate(messages):
        cmds.append(f"echo {i} > f{i}.txt && git add . && git commit -q -m {json.dumps(m)}")
    return " && ".join(cmds)


# (name, files, command[, setup]). The command runs in a fresh scratch
# directory holding `files`, after `setup` if any (its output is not
# recorded); its label is its exit status.
# --- programs nobody tuned the detector to (the fifty-third session)
PY_UNUSED_IMPORT = "import os\n\n\ndef f():\n    return 1\n"
PY_CLEAN = '"""A module."""\n\n\ndef f():\n    """Return one."""\n    return 1\n'
PY_BADLY_FORMATTED = "def f( a,b ):\n  return a+b\n"
PY_TESTS_ERROR_NAMES_PASS = """import pytest

def test_error_handling():
    with pytest.raises(ValueError, match="bad value"):
        raise ValueError("bad value")

def test_failure_is_reported():
    assert "failed" in "1 failed, 0 passed"
"""
NODE_TESTS_FAIL = """const test = require('node:test');
const assert = require('node:assert');
test('adds', () => { assert.strictEqual(1 + 1, 2); });
test('parses the error code', () => { assert.strictEqual(parseInt('E42'.slice(1)), 41); });
"""
NODE_TESTS_PASS = """const test = require('node:test');
const assert = require('node:assert');
test('throws on bad input', () => { assert.throws(() => JSON.parse('{'), SyntaxError); });
test('error handling', () => { assert.strictEqual(String(new Error('x')), 'Error: x'); });
"""
JEST_FAIL = """test('adds', () => { expect(1 + 1).toBe(2); });
test('parses the error code', () => { expect(parseInt('E42'.slice(1))).toBe(41); });
"""
JEST_PASS = """test('throws on bad input', () => { expect(() => JSON.parse('{')).toThrow(SyntaxError); });
test('error handling: 0 failed', () => { expect(String(new Error('x'))).toBe('Error: x'); });
"""
VITEST_FAIL = "import { test, expect } from 'vitest';\n" + JEST_FAIL
VITEST_PASS = "import { test, expect } from 'vitest';\n" + JEST_PASS
SH_SYNTAX_ERROR = "#!/bin/bash\nif [ -f x ]; then\n  echo yes\nfi fi\necho done\n"
SH_LINT_WARNINGS = "#!/bin/bash\nfor f in $(ls *.txt); do\n  echo $f\ndone\n"
SH_CLEAN = '#!/bin/bash\nfor f in ./*.txt; do\n  echo "$f"\ndone\n'
PERL_DIE = 'print "reading config\\n";\nopen(my $fh, "<", "no_such.conf") or die "cannot open no_such.conf: $!\\n";\n'
PERL_SYNTAX = 'my $x = 1;\nprint "x=$x\\n"\nmy $y = 2;\n'
PERL_WARN_OK = 'use warnings;\nwarn "warning: 3 records skipped\\n";\nprint "error count: 0\\n";\n'
RUBY_RAISE = 'puts "loading"\nraise ArgumentError, "unknown mode: fast"\n'
RUBY_NAME_ERROR = 'def run\n  helper(1)\nend\nrun\n'
RUBY_SYNTAX = 'def f\n  puts "x"\n'
RUBY_OK = 'puts "errors: 0"\nputs "failed: none"\n'
SQL_SCHEMA = "CREATE TABLE jobs(id INTEGER PRIMARY KEY, status TEXT, message TEXT);\n" \
    "INSERT INTO jobs VALUES (1, 'failed', 'Error: connection refused'), (2, 'ok', '');\n"
RUST_UNUSED_FOR_CLIPPY = 'fn main() {\n    let v = vec![1, 2, 3];\n    println!("{}", v.len() == 0);\n}\n'
RUST_CLEAN = 'fn main() {\n    println!("errors: 0");\n}\n'
RUST_BADLY_FORMATTED = 'fn main() { let x=1;\n    println!("{}",x); }\n'
ESLINT_BAD_CONFIG = "export default [{ rules: { 'no-unused-vars': 'eror' } }];\n"
ESLINT_MISSING_PLUGIN = "import foo from 'eslint-plugin-no-such-thing';\nexport default [foo.configs.recommended];\n"


# --- programs nobody tuned the detector to (the fifty-fourth session)
JS_UNFORMATTED = "const x = {a:1,b:2}\nfunction f( ){return x}\n"
JS_FORMATTED = "const x = { a: 1, b: 2 };\nfunction f() {\n  return x;\n}\nf();\n"
JS_SYNTAX_ERROR = "const x = {a: 1,\nfunction f() {}\n"
JS_BIOME_FORMATTED = "const x = { a: 1, b: 2 };\nfunction f() {\n\treturn x;\n}\nf();\n"
BIOME_DEBUGGER_WARN = '{"linter": {"rules": {"suspicious": {"noDebugger": "warn"}}}}\n'
JS_DEBUGGER = "function f(a) {\n  debugger;\n  return a;\n}\nf(1);\n"
JS_ERROR_LOG_OK = 'console.error("ERROR: retrying connection (attempt 1)");\nconsole.log("0 errors");\n'
MOCHA_FAIL = """const assert = require('node:assert');
describe('codes', () => {
  it('adds', () => { assert.strictEqual(1 + 1, 2); });
  it('parses the error code', () => { assert.strictEqual(parseInt('E42'.slice(1)), 41); });
});
"""
MOCHA_PASS = """const assert = require('node:assert');
describe('error handling', () => {
  it('throws on bad input', () => { assert.throws(() => JSON.parse('{'), SyntaxError); });
  it('reports 0 failed', () => { assert.strictEqual(String(new Error('x')), 'Error: x'); });
});
"""
PY_TYPE_ERROR = 'def f(x: int) -> str:\n    return x\n\n\nprint(f(1))\n'
PY_TYPED_CLEAN = 'def f(x: int) -> int:\n    return x\n\n\nprint(f(1))\n'
PY_UNSORTED_IMPORTS = "import sys\nimport os\n\nprint(os.sep, sys.argv)\n"
PY_SORTED_IMPORTS = "import os\nimport sys\n\nprint(os.sep, sys.argv)\n"
PY_SHELL_TRUE = "import subprocess\n\n\ndef run(cmd):\n    return subprocess.call(cmd, shell=True)\n"
PY_LOG_ERROR_OK = "import logging\nlogging.error('connection lost, retrying')\nprint('done: 0 failed')\n"
YAML_BAD = "name: app\nsteps:\n  - run: make\n   - run: test\n"
YAML_WARN = "name: app\nsteps:\n  - run: make\n"
YAMLLINT_CONF = "extends: default\nrules:\n  document-start: {level: warning}\n"
COV_MOD = "def used():\n    return 1\n\n\ndef unused(x):\n    if x:\n        return 2\n    return 3\n"
COV_TEST = "from mod import used\n\n\ndef test_used():\n    assert used() == 1\n"
DJANGO_MANAGE = """import os
import sys

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings")
from django.core.management import execute_from_command_line

execute_from_command_line(sys.argv)
"""
DJANGO_SETTINGS = """SECRET_KEY = "s54d"
INSTALLED_APPS = ["app"]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
ROOT_URLCONF = "proj.urls"
USE_TZ = True
"""
DJANGO_TESTS_FAIL = """from django.test import SimpleTestCase


class T(SimpleTestCase):
    def test_ok(self):
        self.assertEqual(1, 1)

    def test_error_code(self):
        self.assertEqual(int("E42"[1:]), 41)
"""
DJANGO_TESTS_PASS = """from django.test import SimpleTestCase


class T(SimpleTestCase):
    def test_error_handling(self):
        with self.assertRaises(ValueError):
            int("x")

    def test_failure_is_reported(self):
        self.assertIn("failed", "1 failed")
"""
DJANGO_MODEL_ERROR = "from django.db import models\n\n\nclass Item(models.Model):\n" \
    "    owner = models.ForeignKey(\"Owner\", on_delete=models.CASCADE)\n"
DJANGO_MODEL_WARNING = "from django.db import models\n\n\nclass Item(models.Model):\n    name = models.CharField(max_length=10)\n"
C_SYNTAX_ERROR = "int main(void) {\n    int n = 1\n    return n;\n}\n"
C_WARNING = "#include <stdio.h>\nint main(void) {\n    int unused;\n    printf(\"errors: %d\\n\", 0);\n    return 0;\n}\n"
C_UNDEFINED = "int helper(void);\nint main(void) {\n    return helper();\n}\n"
CMAKE_TYPO = "cmake_minimum_required(VERSION 3.13)\nproject(app NONE)\nadd_executabl(app main.c)\n"
CMAKE_WARNING = "cmake_minimum_required(VERSION 3.13)\nproject(app NONE)\nmessage(WARNING \"option FAST is deprecated\")\n"
CMAKE_COMPILE_ERROR = "cmake_minimum_required(VERSION 3.13)\nproject(app C)\nadd_executable(app main.c)\n"
SQL_SCRIPT_ERROR = "SELECT 'migrating' AS step;\nSELECT * FROM no_such_table_s54d;\nSELECT 'done' AS step;\n"
JAVA_THROW = """public class A {
    public static void main(String[] args) {
        System.out.println("loading config");
        throw new IllegalArgumentException("unknown mode: fast");
    }
}
"""
JAVA_COMPILE_ERROR = "public class A {\n    public static void main(String[] args) {\n        int n = 1\n    }\n}\n"
JAVA_ERROR_LOG_OK = """public class A {
    public static void main(String[] args) {
        System.err.println("[main] ERROR app.Db - connection lost, retrying (attempt 1)");
        System.out.println("done: 0 failed");
    }
}
"""
LOGS_JSON = '[{"level": "error", "msg": "disk full"}, {"level": "info", "msg": "ok"}]\n'
LUA_RUNTIME_ERROR = 'print("loading")\nhelper(1)\n'
LUA_SYNTAX_ERROR = 'function f()\n  print("x")\n'
LUA_OK = 'print("errors: 0")\nprint("failed: none")\n'
PHP_THROW = '<?php\necho "loading\\n";\nthrow new InvalidArgumentException("unknown mode: fast");\n'
PHP_SYNTAX_ERROR = '<?php\n$x = 1\necho $x;\n'
PHP_WARNING_OK = '<?php\necho $missing ?? "none", "\\n";\necho intdiv(4, 2) . " errors: 0\\n";\n$a = [];\necho @$a["k"];\necho "done\\n";\n'
PHP_WARNING_OK2 = '<?php\necho $undefined;\necho "done: 0 failed\\n";\n'


SCENARIOS = [
    # --- cargo / rustc
    ("cargo-build-type-error", cargo_crate("app", RUST_ONE_ERROR), "cd app && cargo build"),
    ("cargo-build-two-errors", cargo_crate("app", RUST_TWO_ERRORS), "cd app && cargo build"),
    ("cargo-build-quiet-error", cargo_crate("app", RUST_ONE_ERROR), "cd app && cargo build -q"),
    ("cargo-build-warning", cargo_crate("app", RUST_WARNING), "cd app && cargo build"),
    ("cargo-test-failing", cargo_crate("app", RUST_FAILING_TEST), "cd app && cargo test"),
    ("cargo-test-passing", cargo_crate("app", RUST_PASSING_TEST), "cd app && cargo test"),
    ("cargo-test-workspace-no-fail-fast", {
        "Cargo.toml": '[workspace]\nmembers = ["a", "b"]\nresolver = "2"\n',
        "a/Cargo.toml": CARGO_TOML.format(name="a"), "a/src/lib.rs": RUST_LIB_FAILING_TEST,
        "b/Cargo.toml": CARGO_TOML.format(name="b"), "b/src/lib.rs": RUST_LIB_FAILING_TEST,
    }, "cargo test --no-fail-fast"),
    ("rustc-error", {"bad.rs": RUST_TWO_ERRORS}, "rustc bad.rs"),
    ("rustc-warning", {"w.rs": RUST_WARNING}, "rustc w.rs && ./w"),
    # --- pytest
    ("pytest-one-failed", {"test_m.py": PY_TESTS_ONE_FAIL}, "{pytest} -p no:cacheprovider"),
    ("pytest-q-one-failed", {"test_m.py": PY_TESTS_ONE_FAIL}, "{pytest} -q -p no:cacheprovider"),
    ("pytest-fixture-error", {"test_m.py": PY_TESTS_FIXTURE_ERROR}, "{pytest} -p no:cacheprovider"),
    ("pytest-collection-error", {"test_m.py": PY_TESTS_IMPORT_ERROR}, "{pytest} -p no:cacheprovider"),
    ("pytest-passed", {"test_m.py": PY_TESTS_PASS}, "{pytest} -p no:cacheprovider"),
    ("pytest-q-passed", {"test_m.py": PY_TESTS_PASS}, "{pytest} -q -p no:cacheprovider"),
    ("pytest-xfail-skip", {"test_m.py": PY_TESTS_XFAIL}, "{pytest} -p no:cacheprovider"),
    ("pytest-q-xfail", {"test_m.py": PY_TESTS_XFAIL}, "{pytest} -q -p no:cacheprovider"),
    # --- unittest
    ("unittest-failure", {"t.py": UNITTEST_FAIL}, "python3 t.py"),
    ("unittest-error", {"t.py": UNITTEST_ERROR}, "python3 t.py"),
    ("unittest-ok-expected-failure", {"t.py": UNITTEST_OK}, "python3 t.py"),
    # --- Python scripts
    ("argparse-missing-argument", {"deploy.py": ARGPARSE_TOOL}, "python3 deploy.py"),
    ("argparse-invalid-choice", {"deploy.py": ARGPARSE_TOOL}, "python3 deploy.py web --env qa"),
    ("argparse-help", {"deploy.py": ARGPARSE_TOOL}, "python3 deploy.py --help"),
    ("click-missing-argument", {"c.py": CLICK_TOOL}, "{python} c.py"),
    ("click-help", {"c.py": CLICK_TOOL}, "{python} c.py --help"),
    ("argparse-ok", {"deploy.py": ARGPARSE_TOOL}, "python3 deploy.py web"),
    ("script-zero-failed", {"s.py": SCRIPT_WITH_SUMMARY}, "python3 s.py"),
    ("script-handled-errors", {"s.py": SCRIPT_ERRORS_HANDLED}, "python3 s.py"),
    ("script-late-traceback", {"s.py": SCRIPT_LATE_TRACEBACK}, "python3 s.py"),
    # --- type checkers
    ("mypy-errors", {"bad.py": PY_TYPE_ERRORS, "ok.py": PY_TYPED_OK}, "{python} -m mypy --no-color-output bad.py ok.py"),
    ("mypy-ok", {"ok.py": PY_TYPED_OK}, "{python} -m mypy ok.py"),
    ("tsc-pretty-one-file", {"a.ts": TS_TWO_ERRORS}, "{tsc} --pretty --noEmit a.ts"),
    ("tsc-pretty-two-files", {"a.ts": TS_TWO_ERRORS, "b.ts": TS_ONE_ERROR}, "{tsc} --pretty --noEmit a.ts b.ts"),
    ("tsc-pretty-ok", {"ok.ts": "let ok: number = 1;\n"}, "{tsc} --pretty --noEmit ok.ts"),
    # --- gcc / make
    ("gcc-ok", {"main.c": C_OK}, "gcc -Wall -o prog main.c && ./prog"),
    ("gcc-link-error", {"main.c": C_LINK_ERROR}, "gcc -o prog main.c"),
    ("gcc-warnings-then-error", {"main.c": C_WARNINGS_THEN_ERROR}, "gcc -Wall -o prog main.c"),
    ("make-recipe-fails", {"Makefile": MAKEFILE_FAIL}, "make"),
    ("make-missing-target", {"Makefile": MAKEFILE_OK}, "make deploy"),
    ("make-ignored-error", {"Makefile": MAKEFILE_IGNORED}, "make"),
    ("make-ok", {"Makefile": MAKEFILE_OK}, "make"),
    ("make-gcc-error", {"Makefile": MAKEFILE_GCC, "main.c": C_WARNINGS_THEN_ERROR}, "make"),
    ("make-gcc-link-error", {"Makefile": MAKEFILE_GCC, "main.c": C_LINK_ERROR}, "make"),
    ("make-keep-going", {"Makefile": "all: a b\na:\n\tfalse\nb:\n\t@echo b built\n"}, "make -k"),
    ("make-recursive", {"Makefile": MAKEFILE_RECURSIVE, "sub/Makefile": MAKEFILE_FAIL}, "make"),
    # --- javac
    ("javac-error", {"Main.java": JAVA_ERROR}, "javac Main.java"),
    ("javac-error-and-warning", {"Main.java": JAVA_ERROR_AND_WARNING}, "javac -Xlint:unchecked Main.java"),
    ("javac-ok", {"Main.java": JAVA_OK}, "javac Main.java && java Main"),
    # --- npm (offline)
    ("npm-test-fails", {"package.json": PACKAGE_JSON}, "npm test"),
    ("npm-missing-script", {"package.json": PACKAGE_JSON}, "npm run deploy"),
    ("npm-build-throws", {"package.json": PACKAGE_JSON, "build.js": NODE_BUILD}, "npm run build"),
    ("npm-ok-script", {"package.json": PACKAGE_JSON}, "npm run ok"),
    ("npm-bad-package-json", {"package.json": "{\"name\": \"probe\",\n"}, "npm install --offline"),
    ("npm-offline-not-cached", {"package.json": PACKAGE_JSON},
     "npm install --offline --no-audit --no-fund left-pad@1.3.0"),
    ("npm-install-nothing", {"package.json": PACKAGE_JSON}, "npm install --offline --no-audit --no-fund"),
    # --- git
    ("git-log-oneline", {}, git_repo_with(
        ["initial", "fix: tests failed on CI", "tests failed on CI: retry flaky ones"])
     + " && git log --oneline"),
    ("git-log-oneline-build-failed", {}, git_repo_with(
        ["initial", "build failed on arm64, pin gcc"]) + " && git log --oneline"),
    ("git-merge-conflict", {}, git_repo_with(["base"])
     + " && git checkout -q -b side && echo side > f0.txt && git commit -qam side"
     + " && git checkout -q - && echo main > f0.txt && git commit -qam main && git merge side"),
    ("git-cherry-pick-conflict", {}, git_repo_with(["base"])
     + " && git checkout -q -b side && echo side > f0.txt && git commit -qam side"
     + " && git checkout -q - && echo main > f0.txt && git commit -qam main && git cherry-pick side"),
    ("git-rebase-conflict", {}, git_repo_with(["base"])
     + " && git checkout -q -b side && echo side > f0.txt && git commit -qam side"
     + " && git checkout -q - && echo main > f0.txt && git commit -qam main"
     + " && git checkout -q side && git rebase -q -"),
    ("git-push-rejected", {}, "git init -q --bare remote.git && " + git_repo_with(["one"])
     + " && git push -q ../remote.git HEAD:main && git commit -q --amend -m two"
     + " && git push ../remote.git HEAD:main"),
    # --- go (`go` on PATH; Go's build cache shared by the scenarios)
    ("go-build-undefined", dict({"go.mod": GO_MOD}, **{"main.go": GO_UNDEFINED}), "go build ./..."),
    ("go-run-undefined", {"main.go": GO_UNDEFINED}, "go run main.go"),
    ("go-build-syntax-error", dict({"go.mod": GO_MOD}, **{"main.go": GO_SYNTAX_ERROR}), "go build ./..."),
    ("go-vet-printf", dict({"go.mod": GO_MOD}, **{"main.go": GO_VET_PRINTF}), "go vet ./..."),
    ("go-vet-ok", dict({"go.mod": GO_MOD}, **{"main.go": GO_ADD}), "go vet ./... && echo vet clean"),
    ("go-build-ok", dict({"go.mod": GO_MOD}, **{"main.go": GO_ADD}), "go build -v ./..."),
    ("go-test-failing", dict({"go.mod": GO_MOD}, **{"main.go": GO_ADD, "main_test.go": GO_TEST_FAILING}),
     "go test ./..."),
    ("go-test-v-failing", dict({"go.mod": GO_MOD}, **{"main.go": GO_ADD, "main_test.go": GO_TEST_FAILING}),
     "go test -v ./..."),
    ("go-test-build-failed", dict({"go.mod": GO_MOD}, **{"main.go": GO_ADD, "main_test.go": GO_TEST_UNDEFINED}),
     "go test ./..."),
    ("go-test-two-packages-one-fails", dict({"go.mod": GO_MOD}, **{
        "main.go": GO_ADD, "main_test.go": GO_TEST_PASSING,
        "sub/sub.go": GO_ADD.replace("package main", "package sub").replace("\nfunc main() {}\n", ""),
        "sub/sub_test.go": GO_TEST_FAILING.replace("package main", "package sub").replace(
            "\nfunc TestOk(t *testing.T) {}\n", "")}), "go test ./..."),
    ("go-test-passing", dict({"go.mod": GO_MOD}, **{"main.go": GO_ADD, "main_test.go": GO_TEST_PASSING}),
     "go test ./..."),
    ("go-test-v-passing", dict({"go.mod": GO_MOD}, **{"main.go": GO_ADD, "main_test.go": GO_TEST_PASSING}),
     "go test -v ./..."),
    ("go-test-local-failing", dict({"go.mod": GO_MOD}, **{"main.go": GO_ADD, "main_test.go": GO_TEST_FAILING}),
     "go test"),
    ("go-test-local-build-failed", dict({"go.mod": GO_MOD}, **{"main.go": GO_ADD, "main_test.go": GO_TEST_UNDEFINED}),
     "go test"),
    ("go-binary-panic", dict({"go.mod": GO_MOD}, **{"main.go": GO_NIL_POINTER}), "go build -o app . && ./app"),
    ("go-run-panic", dict({"go.mod": GO_MOD}, **{"main.go": GO_PANIC}), "go run ."),
    ("go-run-log-fatal", dict({"go.mod": GO_MOD}, **{"main.go": GO_LOG_FATAL}), "go run ."),
    ("go-build-missing-module", dict({"go.mod": GO_MOD}, **{"main.go": GO_MISSING_MODULE}), "go build ./..."),
    ("go-build-missing-module-readonly", dict({"go.mod": GO_MOD}, **{"main.go": GO_MISSING_MODULE}),
     "GOFLAGS=-mod=readonly go build ./..."),
    ("gofmt-syntax-error", {"main.go": "func main() {}\n"}, "gofmt -l ."),
    ("go-run-prints-report", dict({"go.mod": GO_MOD}, **{"main.go": GO_PRINTS_UNDEFINED}), "go run ."),
    ("go-build-log-tail", dict({"go.mod": GO_MOD}, **{"main.go": GO_UNDEFINED}),
     "go build ./... > build.log 2>&1; tail -3 build.log"),
    # --- go run, go generate, go get, go list, go mod init, gofmt over several files
    ("go-run-exit-status", dict({"go.mod": GO_MOD}, **{"main.go": GO_EXITS_3}), "go run ."),
    ("go-run-killed", dict({"go.mod": GO_MOD}, **{"main.go": GO_KILLS_ITSELF}), "go run ."),
    ("go-run-missing-module-readonly", dict({"go.mod": GO_MOD}, **{"main.go": GO_IMPORTS_MISSING}), "go run .",
     None, {"GOFLAGS": ""}),
    ("go-run-test-file", dict({"go.mod": GO_MOD}, **{"main.go": GO_ADD, "main_test.go": GO_TEST_PASSING}),
     "go run main_test.go"),
    ("go-run-no-packages", dict({"go.mod": GO_MOD}, **{"main.go": GO_ADD}), "go run ./nope"),
    ("go-run-prints-lint", dict({"go.mod": GO_MOD}, **{"main.go": GO_PRINTS_LINT}), "go run ."),
    ("go-generate-missing-tool", dict({"go.mod": GO_MOD}, **{"main.go": GO_GENERATE_MISSING_TOOL}),
     "go generate ./..."),
    ("go-generate-fails", dict({"go.mod": GO_MOD}, **{"main.go": GO_GENERATE_FAILS}), "go generate -v ./..."),
    ("go-generate-bad-directive", dict({"go.mod": GO_MOD}, **{"main.go": GO_GENERATE_BAD_DIRECTIVE}),
     "go generate ./..."),
    ("go-generate-ok", dict({"go.mod": GO_MOD}, **{"main.go": GO_GENERATE_OK}), "go generate -x ./..."),
    ("go-get-added", dict({"go.mod": GO_MOD}, **{"main.go": GO_MAIN_ONLY}), "go get example.com/x@v1.0.0",
     None, GO_PROXY_ENV),
    ("go-get-deprecated", dict({"go.mod": GO_MOD}, **{"main.go": GO_MAIN_ONLY}), "go get example.com/old",
     None, GO_PROXY_ENV),
    ("go-get-retracted", dict({"go.mod": GO_MOD}, **{"main.go": GO_MAIN_ONLY}), "go get example.com/r@v1.0.0",
     "go get example.com/r@v1.0.0", GO_PROXY_ENV),
    ("go-get-no-such-version", dict({"go.mod": GO_MOD}, **{"main.go": GO_MAIN_ONLY}),
     "go get example.com/x@v9.9.9", None, GO_PROXY_ENV),
    ("go-get-lookup-disabled", dict({"go.mod": GO_MOD}, **{"main.go": GO_MAIN_ONLY}), "go get example.com/x"),
    ("go-list-e-deps-errors", dict({"go.mod": GO_MOD}, **{"main.go": GO_IMPORTS_MISSING}),
     "go list -e -f '{{range .DepsErrors}}{{.}}{{end}}' ."),
    ("go-list-e-error-field", dict({"go.mod": GO_MOD}, **{"main.go": GO_MAIN_ONLY, "bad/bad.go": "func f() {}\n"}),
     "go list -e -f '{{.ImportPath}} {{.Error}}' ./bad example.com/nothere"),
    ("go-list-e-json", dict({"go.mod": GO_MOD}, **{"main.go": GO_MAIN_ONLY, "bad/bad.go": "func f() {}\n"}),
     "go list -e -json ./bad"),
    ("go-list-missing-package", dict({"go.mod": GO_MOD}, **{"main.go": GO_MAIN_ONLY}),
     "go list example.com/nothere"),
    ("go-list-no-directory", dict({"go.mod": GO_MOD}, **{"main.go": GO_MAIN_ONLY}), "go list ./nope"),
    ("go-list-e-no-module", {"main.go": GO_MAIN_ONLY}, "go list -e ."),
    ("go-mod-init", {"main.go": GO_MAIN_ONLY}, "go mod init example.com/n"),
    ("go-mod-init-exists", dict({"go.mod": GO_MOD}, **{"main.go": GO_MAIN_ONLY}), "go mod init example.com/n"),
    ("go-mod-init-no-path", {"main.go": GO_MAIN_ONLY}, "go mod init"),
    ("gofmt-two-files-errors", {"a.go": "func main() {}\n", "b.go": "package b\nfoo\n",
                                "c.go": "package c\nfunc C() {\nx := 1\n_ = x\n}\n"}, "gofmt -l ."),
    ("gofmt-d-errors-then-diff", {"a.go": "func main() {}\n",
                                  "c.go": "package c\nfunc C() {\nx := 1\n_ = x\n}\n"}, "gofmt -d ."),
    # --- fresh scenarios of the fiftieth session, run before any rule
    # was changed for them: programs and failure forms the rows above lack
    ("python-module-not-found", {}, "python3 -m no_such_tool_here"),
    ("python-syntax-error", {"s.py": "def f(:\n    pass\n"}, "python3 s.py"),
    ("python-sys-exit-message", {"s.py": "import sys\nprint('checking config')\nsys.exit('config.yaml: missing key \"port\"')\n"},
     "python3 s.py"),
    ("python-prints-ok", {"s.py": "print('errors: 0')\nprint('warnings: 2')\n"}, "python3 s.py"),
    ("node-reference-error", {"a.js": "console.log('start');\nfoo();\n"}, "node a.js"),
    ("node-syntax-error", {"a.js": "let x = ;\n"}, "node a.js"),
    ("node-exit-code-silent", {"a.js": "console.log('validated 3 files');\nprocess.exitCode = 2;\n"}, "node a.js"),
    ("node-ok", {"a.js": "console.log('Error handling: ok');\n"}, "node a.js"),
    ("jq-parse-error", {"a.json": "{\"a\": 1,}\n"}, "jq .a a.json"),
    ("jq-ok", {"a.json": "{\"error\": null, \"a\": 1}\n"}, "jq . a.json"),
    ("curl-refused", {}, "curl -sS http://127.0.0.1:9/health"),
    ("git-not-a-repo", {}, "git status"),
    ("git-bad-branch", {}, git_repo_with(["one"]) + " && git checkout no-such-branch"),
    ("git-status-ok", {}, git_repo_with(["one"]) + " && echo x > f9.txt && git status --short"),
    ("tar-missing-file", {}, "tar czf out.tgz nope.txt"),
    ("sqlite-syntax-error", {}, "sqlite3 db.sqlite 'SELEC 1;'"),
    ("sqlite-ok", {}, "sqlite3 db.sqlite 'SELECT 1;'"),
    ("perl-die", {"a.pl": "print \"start\\n\";\ndie \"cannot open config: No such file\\n\";\n"}, "perl a.pl"),
    ("gcc-undeclared", {"main.c": "int main(void) { return y; }\n"}, "gcc -c main.c"),
    ("cargo-run-panic", cargo_crate("app", 'fn main() {\n    let v: Vec<i32> = vec![];\n    println!("{}", v[0]);\n}\n'),
     "cd app && cargo run -q"),
    ("rustc-ok-warnings", {"w.rs": RUST_WARNING}, "rustc w.rs"),
    ("bash-set-e-silent", {}, "set -e; echo step one; false; echo step two"),
    ("make-no-makefile", {}, "make"),
    ("make-dry-run-ok", {"Makefile": MAKEFILE_FAIL}, "make -n"),
    # --- go generate's own log.Fatalf (`generate: …`), a generator's;
    # gofmt's errors above more than 8 KiB of diffs or 200 names
    ("go-generate-log-fatalf", dict({"go.mod": GO_MOD}, **{"main.go": GO_GENERATE_GO_RUN,
                                                           "gen/main.go": GO_GEN_LOG_FATALF}),
     "go generate ./..."),
    ("go-generate-log-ok", dict({"go.mod": GO_MOD}, **{"main.go": GO_GENERATE_GO_RUN, "gen/main.go": GO_GEN_LOG_OK}),
     "go generate -v ./..."),
    ("go-generate-bad-run-regexp", dict({"go.mod": GO_MOD}, **{"main.go": GO_GENERATE_OK}),
     "go generate -run '[' ./..."),
    ("go-generate-file-removed", dict({"go.mod": GO_MOD}, **{
        "a.go": "package main\n\n//go:generate rm -f b.go\n\nfunc main() {}\n",
        "b.go": "package main\n\n//go:generate echo b\n"}), "go generate ./..."),
    ("gofmt-d-error-above-long-diff", {"a.go": "func main() {}\n", "c.go": go_unformatted(120)}, "gofmt -d ."),
    ("gofmt-d-long-diff", {"c.go": go_unformatted(120)}, "gofmt -d ."),
    ("gofmt-l-error-above-many-names", dict({"a.go": "func main() {}\n"},
                                            **{f"c{i:03}.go": go_unformatted(1) for i in range(250)}), "gofmt -l ."),
    ("gofmt-l-many-names", {f"c{i:03}.go": go_unformatted(1) for i in range(250)}, "gofmt -l ."),
    ("gofmt-long-source", {"c.go": go_long_source(300)}, "gofmt c.go"),
    ("gofmt-d-long-source-diff", {"c.go": go_long_source(300).replace("func F299(a int, b int)", "func F299( a int,b int )")},
     "gofmt -d c.go"),
    # --- a go command's output through `tail` (pipefail: the status is
    # go's): its last lines
    ("go-build-errors-tail", dict({"go.mod": GO_MOD}, **{"main.go": GO_FIVE_UNDEFINED}),
     "set -o pipefail; go build ./... 2>&1 | tail -3"),
    ("go-build-readonly-tail", dict({"go.mod": GO_MOD}, **{"main.go": GO_MISSING_MODULE}),
     "set -o pipefail; GOFLAGS=-mod=readonly go build ./... 2>&1 | tail -n 2"),
    ("go-mod-tidy-missing-tail", dict({"go.mod": GO_MOD}, **{"main.go": GO_IMPORTS_MISSING}),
     "set -o pipefail; go mod tidy 2>&1 | tail -n 5"),
    ("go-build-ok-tail", dict({"go.mod": GO_MOD}, **{"main.go": GO_ADD}),
     "set -o pipefail; go build -v ./... 2>&1 | tail -3"),
    ("go-test-passing-tail", dict({"go.mod": GO_MOD}, **{"main.go": GO_ADD, "main_test.go": GO_TEST_PASSING}),
     "set -o pipefail; go test -v ./... 2>&1 | tail -5"),
    ("go-mod-init-tail", {"main.go": GO_MAIN_ONLY}, "set -o pipefail; go mod init example.com/n 2>&1 | tail -2"),
    ("go-run-prints-lint-tail", dict({"go.mod": GO_MOD}, **{"main.go": GO_PRINTS_LINT}),
     "set -o pipefail; go run . 2>&1 | tail -1"),
    # --- variable assignments before the command (`NAME=value`, quoted or
    # not, and `env [-i] [-u NAME] NAME=value`): the same program runs
    ("go-run-no-packages-cgo-off", dict({"go.mod": GO_MOD}, **{"main.go": GO_ADD}), "CGO_ENABLED=0 go run ./nope"),
    ("go-generate-missing-tool-env", dict({"go.mod": GO_MOD}, **{"main.go": GO_GENERATE_MISSING_TOOL}),
     "env GOFLAGS=-mod=mod go generate ./..."),
    ("go-mod-init-exists-env-i", dict({"go.mod": GO_MOD}, **{"main.go": GO_MAIN_ONLY}),
     "env -i PATH=/usr/bin:/bin HOME=/tmp go mod init example.com/n"),
    ("go-list-missing-package-env-u", dict({"go.mod": GO_MOD}, **{"main.go": GO_MAIN_ONLY}),
     "env -u GOFLAGS go list example.com/nothere"),
    ("gofmt-two-files-errors-quoted", {"a.go": "func main() {}\n", "b.go": "package b\nfoo\n",
                                       "c.go": "package c\nfunc C() {\nx := 1\n_ = x\n}\n"},
     'LC_ALL="C" GOFLAGS="-mod=mod -v" gofmt -l .'),
    ("go-build-missing-module-exported", dict({"go.mod": GO_MOD}, **{"main.go": GO_MISSING_MODULE}),
     "GOFLAGS=-mod=readonly; export GOFLAGS; go build ./..."),
    ("go-test-failing-cgo-off", dict({"go.mod": GO_MOD}, **{"main.go": GO_ADD, "main_test.go": GO_TEST_FAILING}),
     "CGO_ENABLED=0 go test ./..."),
    ("go-build-ok-goflags", dict({"go.mod": GO_MOD}, **{"main.go": GO_ADD}), "GOFLAGS=-mod=mod go build -v ./..."),
    ("go-test-passing-cgo-off", dict({"go.mod": GO_MOD}, **{"main.go": GO_ADD, "main_test.go": GO_TEST_PASSING}),
     "CGO_ENABLED=0 go test ./..."),
    ("go-mod-init-goflags", {"main.go": GO_MAIN_ONLY}, "GOFLAGS=-mod=mod go mod init example.com/n"),
    ("go-list-goflags-e", dict({"go.mod": GO_MOD}, **{"main.go": GO_MAIN_ONLY, "bad/bad.go": "func f() {}\n"}),
     "GOFLAGS=-e go list -f '{{.ImportPath}} {{.Error}}' ./bad example.com/nothere"),
    ("go-list-exported-goflags-e", dict({"go.mod": GO_MOD}, **{"main.go": GO_IMPORTS_MISSING}),
     "export GOFLAGS=-e && go list -f '{{range .DepsErrors}}{{.}}{{end}}' ."),
    ("tail-go-build-log-lc-all", dict({"go.mod": GO_MOD}, **{"main.go": GO_UNDEFINED}), "LC_ALL=C tail -3 build.log",
     "go build ./... > build.log 2>&1"),
    ("env-cat-go-test-log", dict({"go.mod": GO_MOD}, **{"main.go": GO_ADD, "main_test.go": GO_TEST_FAILING}),
     "env LANG=C cat test.log", "go test ./... > test.log 2>&1"),
    ("tail-make-log-quoted", {"Makefile": MAKEFILE_FAIL}, 'LC_ALL="C" tail -n 1 make.log', "make > make.log 2>&1"),
    ("tail-missing-log-lc-all", {}, "LC_ALL=C tail -3 build.log"),
    ("cargo-test-failing-backtrace", cargo_crate("app", RUST_FAILING_TEST), "cd app && RUST_BACKTRACE=1 cargo test"),
    ("cargo-build-type-error-env", cargo_crate("app", RUST_ONE_ERROR), "cd app && env CARGO_TERM_COLOR=never cargo build"),
    ("npm-test-fails-node-env", {"package.json": PACKAGE_JSON}, "NODE_ENV=test npm test"),
    ("npm-ok-script-node-env", {"package.json": PACKAGE_JSON}, "NODE_ENV=test npm run ok"),
    ("pytest-one-failed-pythonpath", {"test_m.py": PY_TESTS_ONE_FAIL}, "PYTHONPATH=. {pytest} -p no:cacheprovider"),
    ("pytest-passed-pythonpath", {"test_m.py": PY_TESTS_PASS}, "PYTHONPATH=. {pytest} -p no:cacheprovider"),
    ("python-late-traceback-env", {"s.py": SCRIPT_LATE_TRACEBACK}, "PYTHONPATH=. python3 s.py"),
    ("make-recipe-fails-env", {"Makefile": MAKEFILE_FAIL}, "env FOO=1 make"),
    ("make-ok-env", {"Makefile": MAKEFILE_OK}, "env FOO=1 make"),
    # --- commands that only print files: a log of an earlier failed run
    # (written by the scenario's setup, not part of the command)
    ("tail-go-build-log", dict({"go.mod": GO_MOD}, **{"main.go": GO_UNDEFINED}), "tail -3 build.log",
     "go build ./... > build.log 2>&1"),
    ("cat-go-test-log", dict({"go.mod": GO_MOD}, **{"main.go": GO_ADD, "main_test.go": GO_TEST_FAILING}),
     "cat test.log", "go test ./... > test.log 2>&1"),
    ("tail-make-log", {"Makefile": MAKEFILE_FAIL}, "tail -n 1 make.log 2>&1", "make > make.log 2>&1"),
    ("head-traceback-log", {"s.py": SCRIPT_LATE_TRACEBACK}, "head -n 20 run.log",
     "python3 s.py > run.log 2>&1"),
    ("grep-error-log", {"s.py": SCRIPT_LATE_TRACEBACK}, "grep -n -e Error -e Traceback run.log",
     "python3 s.py > run.log 2>&1"),
    ("tail-missing-log", {}, "tail -3 build.log"),
    ("cat-missing-log", {}, "cat build.log"),
    # --- fresh scenarios of the fifty-first session, run before any rule
    # was changed for them: Python's runpy refusing a module, jq's errors,
    # a go command's stdout alone through tail, `go list --e`
    ("python-m-package-no-main", {"app/__init__.py": ""}, "python3 -m app"),
    ("python-m-submodule-missing", {}, "python3 -m os.no_such_tool_here"),
    ("python-m-missing-after-output", {}, "echo 'checking tools'; python3 -m no_such_tool_here"),
    ("python-missing-script-after-output", {}, "echo 'running checks'; python3 no_such_script.py"),
    ("python-json-tool-bad-input", {"a.json": "{\"a\": 1,}\n"}, "python3 -m json.tool a.json"),
    ("python-optional-deps-report", {"s.py": "try:\n    import no_such_yaml_here\nexcept ImportError as e:\n"
                                     "    print(f'yaml: {e}')\n"}, "python3 s.py"),
    ("python-m-json-tool-ok", {"a.json": "{\"error\": \"No module named x\"}\n"}, "python3 -m json.tool a.json"),
    ("jq-runtime-error", {}, "echo '{\"a\": 1}' | jq '.a.b'"),
    ("jq-compile-error", {"a.json": "{\"a\": 1}\n"}, "jq '.a |' a.json"),
    ("jq-missing-file", {}, "jq . no_such.json"),
    ("jq-jsonl-bad-line", {"l.jsonl": "{\"a\": 1}\n{\"a\": 2}\n{\"a\": 3,}\n"}, "jq -c .a l.jsonl"),
    ("jq-error-after-outputs", {"a.json": "[{\"name\": \"x\"}, {\"name\": \"y\"}, 3]\n"}, "jq -r '.[] | .name' a.json"),
    ("jq-exit-status-null", {"a.json": "{\"a\": 1}\n"}, "jq -e .missing a.json"),
    ("jq-ok-error-messages", {"r.json": "{\"errors\": [\"parse error: Unexpected token } in JSON at position 9\", "
                              "\"jq: error: x is not defined\"]}\n"}, "jq -r '.errors[]' r.json"),
    ("jq-ok-length", {"a.json": "{\"items\": []}\n"}, "jq '.items | length' a.json"),
    ("go-build-errors-tail-no-2to1", dict({"go.mod": GO_MOD}, **{"main.go": GO_FIVE_UNDEFINED}),
     "set -o pipefail; go build ./... | tail -3"),
    ("go-list-errors-tail-no-2to1", dict({"go.mod": GO_MOD}, **{"main.go": GO_MAIN_ONLY, "bad/bad.go": "func f() {}\n"}),
     "set -o pipefail; go list ./... | tail -3"),
    ("go-vet-ok-tail-no-2to1", dict({"go.mod": GO_MOD}, **{"main.go": GO_ADD}), "set -o pipefail; go vet ./... | tail -3"),
    ("go-list-double-dash-e", dict({"go.mod": GO_MOD}, **{"main.go": GO_MAIN_ONLY, "bad/bad.go": "func f() {}\n"}),
     "go list --e -f '{{.ImportPath}} {{.Error}}' ./bad example.com/nothere"),
    ("go-list-double-dash-e-deps", dict({"go.mod": GO_MOD}, **{"main.go": GO_IMPORTS_MISSING}),
     "go list --e -f '{{range .DepsErrors}}{{.}}{{end}}' ."),
    ("go-list-e-equals-true", dict({"go.mod": GO_MOD}, **{"main.go": GO_MAIN_ONLY, "bad/bad.go": "func f() {}\n"}),
     "go list -e=1 -f '{{.ImportPath}} {{.Error}}' ./bad"),
    # --- eslint, tsc without --pretty (`--eslint` / `--tsc`)
    ("eslint-errors", {"eslint.config.mjs": ESLINT_CONFIG, "a.js": JS_LINT_ERRORS}, "{eslint} a.js"),
    ("eslint-ok", {"eslint.config.mjs": ESLINT_CONFIG, "a.js": JS_LINT_WARNING}, "{eslint} a.js"),
    ("eslint-warning-only", {"eslint.config.mjs": ESLINT_CONFIG, "a.js": "var x = 1;\nconsole.log(x);\n"},
     "{eslint} --rule 'no-var: warn' a.js"),
    ("eslint-max-warnings", {"eslint.config.mjs": ESLINT_CONFIG, "a.js": "var x = 1;\nconsole.log(x);\n"},
     "{eslint} --max-warnings 0 --rule 'no-var: warn' a.js"),
    ("tsc-undefined-name", {"a.ts": TS_UNDEFINED_NAMES}, "{tsc} --noEmit a.ts"),
    ("tsc-later-file-errors", {"ok1.ts": "export const a = 1;\n", "ok2.ts": "export const b = 2;\n",
                               "z.ts": TS_UNDEFINED_NAMES}, "{tsc} --noEmit --listFiles ok1.ts ok2.ts z.ts"),
    # --- other successes that read like failures
    ("wc-gone", {"gone.txt": "x\n" * 410}, "wc -l gone.txt"),
    ("wc-conflict", {"conflict.rs": "y" * 408 + "\n"}, "wc -c conflict.rs"),
    ("grep-source-hits", {"src/build.py": 'log("error: could not compile")\nif failed:\n'
                          '    print("=== 1 failed in 0.1s ===")\n',
                          "src/Makefile.txt": "# make: *** [all] Error 1 means a recipe failed\n"},
     "grep -rn -e 'could not compile' -e 'failed in' -e 'Error 1' src"),
    ("echo-summary-ok", {}, "echo 'lint: 0 errors, 0 failed'; echo done"),
]


# The fifty-third session's programs, each run plainly, through `| tail -20`
# as Claude Code runs them (pipefail: the status is the program's), and
# (TASK_OUTPUT_FORMS) as Claude Code's background task: the command writes
# its output to a file and a later `tail -30` of that file is the result,
# labelled by the command's status. A program not on PATH (`--bin`) is
# skipped.
FRESH53 = [
    # python linters and formatters (PyPI, in a venv: --bin VENV/bin)
    ("ruff-errors", {"a.py": PY_UNUSED_IMPORT}, "ruff check --no-cache a.py"),
    ("ruff-ok", {"a.py": PY_CLEAN}, "ruff check --no-cache a.py"),
    ("ruff-format-check-fail", {"a.py": PY_BADLY_FORMATTED}, "ruff format --no-cache --check a.py"),
    ("ruff-format-check-ok", {"a.py": PY_CLEAN}, "ruff format --no-cache --check a.py"),
    ("black-check-fail", {"a.py": PY_BADLY_FORMATTED}, "black --check a.py"),
    ("black-check-ok", {"a.py": PY_CLEAN}, "black --check a.py"),
    ("flake8-errors", {"a.py": PY_UNUSED_IMPORT}, "flake8 a.py"),
    ("flake8-ok", {"a.py": PY_CLEAN}, "flake8 a.py && echo 'flake8: 0 errors'"),
    ("flake8-exit-zero", {"a.py": PY_UNUSED_IMPORT}, "flake8 --exit-zero a.py"),
    ("pylint-errors", {"a.py": PY_UNUSED_IMPORT}, "pylint a.py"),
    ("pylint-ok", {"a.py": PY_CLEAN}, "pylint a.py"),
    ("pytest-error-names-pass", {"test_e.py": PY_TESTS_ERROR_NAMES_PASS}, "pytest -q -p no:cacheprovider test_e.py"),
    ("pytest-error-names-pass-verbose", {"test_e.py": PY_TESTS_ERROR_NAMES_PASS},
     "pytest -v -p no:cacheprovider test_e.py"),
    ("python-c-syntax-error", {}, "python3 -c 'x = (1,'"),
    ("python-c-raise", {}, "python3 -c 'import json; print(\"loading\"); json.loads(\"{\")'"),
    ("pip-install-missing-offline", {}, "python3 -m pip install --disable-pip-version-check --retries 0 "
     "--timeout 1 --index-url http://127.0.0.1:9/simple no-such-package-xyz"),
    ("pip-install-missing-file", {}, "python3 -m pip install --disable-pip-version-check -r requirements.txt"),
    ("pip-check-ok", {}, "python3 -m pip --disable-pip-version-check list 2>&1 | grep -i -c error || true"),
    # node, jest, vitest, eslint (npm, offline: --bin NODE_MODULES/.bin)
    ("node-e-throw", {}, "node -e 'console.log(\"starting\"); throw new TypeError(\"x is not a function\")'"),
    ("node-e-ok-error-text", {}, "node -e 'console.log(\"Error: none\"); console.log(\"0 errors\")'"),
    ("node-test-fail", {"t.test.js": NODE_TESTS_FAIL}, "node --test t.test.js"),
    ("node-test-pass", {"t.test.js": NODE_TESTS_PASS}, "node --test t.test.js"),
    ("jest-fail", {"a.test.js": JEST_FAIL, "package.json": "{}\n"}, "jest --ci a.test.js"),
    ("jest-pass", {"a.test.js": JEST_PASS, "package.json": "{}\n"}, "jest --ci a.test.js"),
    ("vitest-fail", {"a.test.mjs": VITEST_FAIL, "package.json": "{}\n"}, "vitest run --reporter=default a.test.mjs"),
    ("vitest-pass", {"a.test.mjs": VITEST_PASS, "package.json": "{}\n"}, "vitest run --reporter=default a.test.mjs"),
    ("eslint-bad-config", {"eslint.config.mjs": ESLINT_BAD_CONFIG, "a.js": "console.log(1);\n"}, "eslint a.js"),
    ("eslint-missing-plugin", {"eslint.config.mjs": ESLINT_MISSING_PLUGIN, "a.js": "console.log(1);\n"}, "eslint a.js"),
    ("eslint-no-config", {"a.js": "console.log(1);\n"}, "eslint a.js"),
    # shell
    ("bash-n-syntax-error", {"a.sh": SH_SYNTAX_ERROR}, "bash -n a.sh"),
    ("bash-n-ok", {"a.sh": SH_CLEAN}, "bash -n a.sh && echo 'syntax ok: 0 errors'"),
    ("bash-run-syntax-error", {"a.sh": SH_SYNTAX_ERROR}, "bash a.sh"),
    ("shellcheck-warnings", {"a.sh": SH_LINT_WARNINGS}, "shellcheck a.sh"),
    ("shellcheck-ok", {"a.sh": SH_CLEAN}, "shellcheck a.sh && echo 'shellcheck: no issues'"),
    ("shellcheck-gcc-format", {"a.sh": SH_LINT_WARNINGS}, "shellcheck -f gcc a.sh"),
    # perl, ruby
    ("perl-die", {"a.pl": PERL_DIE}, "perl a.pl"),
    ("perl-syntax-error", {"a.pl": PERL_SYNTAX}, "perl a.pl"),
    ("perl-warn-ok", {"a.pl": PERL_WARN_OK}, "perl a.pl"),
    ("ruby-raise", {"a.rb": RUBY_RAISE}, "ruby a.rb"),
    ("ruby-name-error", {"a.rb": RUBY_NAME_ERROR}, "ruby a.rb"),
    ("ruby-syntax-error", {"a.rb": RUBY_SYNTAX}, "ruby a.rb"),
    ("ruby-ok", {"a.rb": RUBY_OK}, "ruby a.rb"),
    # sqlite3's CLI
    ("sqlite3-no-table", {"s.sql": SQL_SCHEMA}, "sqlite3 db.sqlite < s.sql && sqlite3 db.sqlite 'SELECT * FROM job;'"),
    ("sqlite3-syntax-error", {"s.sql": SQL_SCHEMA}, "sqlite3 db.sqlite < s.sql && sqlite3 db.sqlite 'SELEC 1;'"),
    ("sqlite3-ok-error-rows", {"s.sql": SQL_SCHEMA},
     "sqlite3 db.sqlite < s.sql && sqlite3 db.sqlite \"SELECT status, message FROM jobs WHERE status = 'failed';\""),
    # curl
    ("curl-closed-port", {}, "curl http://127.0.0.1:9/health"),
    ("curl-closed-port-silent", {}, "curl -sS http://127.0.0.1:9/health"),
    ("curl-file-ok-error-json", {"r.json": "{\"error\": null, \"failed\": 0}\n"}, "curl -sS file://$PWD/r.json"),
    # cargo clippy, cargo fmt
    ("cargo-clippy-deny-warnings", {"Cargo.toml": CARGO_TOML.replace("{name}", "app"),
                                    "src/main.rs": RUST_UNUSED_FOR_CLIPPY},
     "cargo clippy -q --offline -- -D warnings"),
    ("cargo-clippy-warnings-ok", {"Cargo.toml": CARGO_TOML.replace("{name}", "app"),
                                  "src/main.rs": RUST_UNUSED_FOR_CLIPPY}, "cargo clippy -q --offline"),
    ("cargo-fmt-check-fail", {"Cargo.toml": CARGO_TOML.replace("{name}", "app"),
                              "src/main.rs": RUST_BADLY_FORMATTED}, "cargo fmt --check"),
    ("cargo-fmt-check-ok", {"Cargo.toml": CARGO_TOML.replace("{name}", "app"),
                            "src/main.rs": RUST_CLEAN}, "cargo fmt --check && echo 'fmt: 0 files changed'"),
]
# Claude Code's background form for a few of them: the command's output in
# its task file, read later with `tail -30` (a file reader's call).
TASK_OUTPUT_FORMS = ["ruff-errors", "ruff-ok", "pylint-errors", "pytest-error-names-pass", "node-test-fail",
                     "node-test-pass", "jest-fail", "jest-pass", "cargo-clippy-deny-warnings",
                     "cargo-fmt-check-fail", "cargo-fmt-check-ok", "perl-die", "ruby-raise", "ruby-ok"]
# go's file form (`> log 2>&1; tail -3 log`).
GO_FILE_FORMS = [
    ("go-build-errors-file-form", {"go.mod": "module example.com/m\n\ngo 1.19\n",
                                   "main.go": "package main\n\nfunc main() {\n\tx := 1\n}\n"},
     "go build ./... > build.log 2>&1; tail -3 build.log"),
    ("go-build-ok-file-form", {"go.mod": "module example.com/m\n\ngo 1.19\n",
                               "main.go": "package main\n\nfunc main() {}\n"},
     "go build ./... > build.log 2>&1; tail -3 build.log"),
]


def fresh53():
    """FRESH53's scenarios, each plainly and through tail, the background
    forms (the setup's status labels them) and go's file forms."""
    out = []
    for name, files, command in FRESH53:
        out.append((name, files, command))
        out.append((name + "-tail", files, f"set -o pipefail; {command} 2>&1 | tail -20"))
    for name, files, command in FRESH53:
        if name in TASK_OUTPUT_FORMS:
            setup = f"mkdir -p tasks; ( {command} ) > tasks/b53d.output 2>&1; echo $? > .status"
            out.append((name + "-task", files, "tail -30 tasks/b53d.output", setup))
    for name, files, command in GO_FILE_FORMS:
        out.append((name, files, command, "go build ./... > /dev/null 2>&1; echo $? > .status"))
    for row in out:
        NEEDS[row[0]] = row[2].split()[0] if not row[0].endswith(("-task", "-tail")) else NEEDS[row[0].rsplit("-", 1)[0]]
    return out


# The program a fifty-third session scenario needs on PATH.
NEEDS = {}


# The fifty-fourth session's programs (FRESH54), run as FRESH53's are:
# plainly, through `| tail -20` and, for TASK_OUTPUT_FORMS_54, in Claude
# Code's background form. A fourth field is a setup run before the command
# (its output not recorded; it never writes `.status` here). psql's rows
# need `--pg URL` (a cluster: `bash .ci/pg.sh start`), else are skipped.
DJANGO_PROJECT = {"manage.py": DJANGO_MANAGE, "proj/__init__.py": "", "proj/settings.py": DJANGO_SETTINGS,
                  "proj/urls.py": "urlpatterns = []\n", "app/__init__.py": ""}
COV_SETUP = "coverage run -m pytest -q -p no:cacheprovider test_mod.py"
FRESH54 = [
    # formatters and linters (npm, offline: --bin NODE_MODULES/.bin)
    ("prettier-check-fail", {"a.js": JS_UNFORMATTED}, "prettier --check a.js"),
    ("prettier-check-ok", {"a.js": JS_FORMATTED}, "prettier --check a.js"),
    ("prettier-syntax-error", {"a.js": JS_SYNTAX_ERROR}, "prettier --check a.js"),
    ("biome-check-fail", {"a.js": JS_UNFORMATTED}, "biome check a.js"),
    ("biome-check-ok", {"a.js": JS_BIOME_FORMATTED}, "biome check a.js"),
    ("biome-lint-error", {"a.js": JS_DEBUGGER}, "biome lint a.js"),
    ("biome-lint-warning-ok", {"a.js": JS_DEBUGGER, "biome.json": BIOME_DEBUGGER_WARN}, "biome lint a.js"),
    ("oxlint-deny-warnings", {"a.js": JS_DEBUGGER}, "oxlint --deny-warnings a.js"),
    ("oxlint-error", {"a.js": JS_DEBUGGER}, "oxlint -D correctness a.js"),
    ("oxlint-warnings-ok", {"a.js": JS_DEBUGGER}, "oxlint a.js"),
    ("oxlint-ok", {"a.js": JS_FORMATTED}, "oxlint a.js"),
    ("esbuild-syntax-error", {"a.js": JS_SYNTAX_ERROR}, "esbuild a.js --bundle --outfile=out.js"),
    ("esbuild-ok", {"a.js": JS_FORMATTED}, "esbuild a.js --bundle --outfile=out.js"),
    ("esbuild-missing-import", {"a.js": "import x from './nothere.js';\nconsole.log(x);\n"},
     "esbuild a.js --bundle --outfile=out.js"),
    ("node-error-log-ok", {"a.js": JS_ERROR_LOG_OK}, "node a.js"),
    ("mocha-fail", {"test/a.spec.js": MOCHA_FAIL}, "mocha"),
    ("mocha-pass", {"test/a.spec.js": MOCHA_PASS}, "mocha"),
    ("pyright-error", {"a.py": PY_TYPE_ERROR}, "pyright a.py"),
    ("pyright-ok", {"a.py": PY_TYPED_CLEAN}, "pyright a.py"),
    # python tools (PyPI, in a venv: --bin VENV/bin)
    ("isort-check-fail", {"a.py": PY_UNSORTED_IMPORTS}, "isort --check-only a.py"),
    ("isort-check-diff-fail", {"a.py": PY_UNSORTED_IMPORTS}, "isort --check-only --diff a.py"),
    ("isort-check-ok", {"a.py": PY_SORTED_IMPORTS}, "isort --check-only a.py && echo 'isort: 0 files would change'"),
    ("yamllint-error", {"a.yaml": YAML_BAD}, "yamllint a.yaml"),
    ("yamllint-parsable-error", {"a.yaml": YAML_BAD}, "yamllint -f parsable a.yaml"),
    ("yamllint-warning-ok", {"a.yaml": YAML_WARN, ".yamllint": YAMLLINT_CONF}, "yamllint a.yaml"),
    ("bandit-issue", {"a.py": PY_SHELL_TRUE}, "bandit -q a.py"),
    ("bandit-ok", {"a.py": PY_SORTED_IMPORTS}, "bandit a.py"),
    ("coverage-fail-under", {"mod.py": COV_MOD, "test_mod.py": COV_TEST}, "coverage report --fail-under=90", COV_SETUP),
    ("coverage-ok", {"mod.py": COV_MOD, "test_mod.py": COV_TEST}, "coverage report --fail-under=10", COV_SETUP),
    ("uv-install-missing-offline", {}, "uv venv -q --cache-dir .uvc .venv && "
     "uv pip install --offline --cache-dir .uvc --python .venv no-such-package-xyz"),
    ("uv-pip-check-ok", {}, "uv venv -q --cache-dir .uvc .venv && uv pip check --cache-dir .uvc --python .venv"),
    ("python-log-error-ok", {"a.py": PY_LOG_ERROR_OK}, "python3 a.py"),
    ("django-test-fail", {**DJANGO_PROJECT, "app/tests.py": DJANGO_TESTS_FAIL}, "python3 manage.py test"),
    ("django-test-pass", {**DJANGO_PROJECT, "app/tests.py": DJANGO_TESTS_PASS}, "python3 manage.py test -v 2"),
    ("django-check-error", {**DJANGO_PROJECT, "app/models.py": DJANGO_MODEL_ERROR}, "python3 manage.py check"),
    ("django-check-warning-ok", {**DJANGO_PROJECT, "app/models.py": DJANGO_MODEL_WARNING}, "python3 manage.py check"),
    # C toolchain (Debian: clang, cmake)
    ("clang-syntax-error", {"a.c": C_SYNTAX_ERROR}, "clang -c a.c"),
    ("clang-warning-ok", {"a.c": C_WARNING}, "clang -Wall -o a a.c && ./a"),
    ("clang-link-error", {"a.c": C_UNDEFINED}, "clang -o a a.c"),
    ("cmake-unknown-command", {"CMakeLists.txt": CMAKE_TYPO}, "cmake -S . -B build"),
    ("cmake-warning-ok", {"CMakeLists.txt": CMAKE_WARNING}, "cmake -S . -B build"),
    ("cmake-build-compile-error", {"CMakeLists.txt": CMAKE_COMPILE_ERROR, "main.c": C_SYNTAX_ERROR},
     "cmake --build build", "cmake -S . -B build"),
    ("cmake-no-source-dir", {}, "cmake -S nothere -B build"),
    # psql (PostgreSQL's client; --pg)
    ("psql-closed-port", {}, "psql -h 127.0.0.1 -p 9 -c 'SELECT 1'"),
    ("psql-bad-query", {}, "psql -c 'SELECT * FROM no_such_table_s54d'"),
    ("psql-script-on-error-stop", {"s.sql": SQL_SCRIPT_ERROR}, "psql -v ON_ERROR_STOP=1 -f s.sql"),
    ("psql-ok-error-rows", {}, "psql -c \"SELECT 'ERROR: disk full' AS message, 'failed' AS state, 0 AS errors\""),
    # java run time (source-file mode)
    ("java-throw", {"A.java": JAVA_THROW}, "java A.java"),
    ("java-compile-error", {"A.java": JAVA_COMPILE_ERROR}, "java A.java"),
    ("java-error-log-ok", {"A.java": JAVA_ERROR_LOG_OK}, "java A.java"),
    # sed, awk, jq, tar, unzip, make -C
    ("sed-unterminated-s", {"f.txt": "a b\n"}, "sed -e 's/a/b' f.txt"),
    ("sed-missing-file", {}, "sed -n '1p' nothere.txt"),
    ("awk-syntax-error", {"f.txt": "a b\n"}, "awk '{print $1' f.txt"),
    ("awk-ok-error-column", {"f.txt": "ERROR disk full\nINFO ok\n"}, "awk '$1 == \"ERROR\" {print}' f.txt"),
    ("jq-ok-error-objects", {"logs.json": LOGS_JSON}, "jq -c '.[] | select(.level == \"error\")' logs.json"),
    ("tar-missing-archive", {}, "tar xzf missing.tar.gz"),
    ("tar-corrupt-archive", {"bad.tar": "this is not a tar archive\n" * 40}, "tar xf bad.tar"),
    ("tar-ok-error-names", {"logs/error.log": "x\n", "logs/failed-jobs.txt": "y\n"}, "tar tf logs.tar",
     "tar cf logs.tar logs"),
    ("unzip-corrupt", {"bad.zip": "PK not really a zip\n" * 10}, "unzip bad.zip"),
    ("unzip-missing", {}, "unzip missing.zip"),
    ("unzip-ok-error-names", {"logs/error.log": "x\n"}, "unzip -o logs.zip", "zip -qr logs.zip logs && rm -r logs"),
    ("make-C-missing-dir", {}, "make -C nothere"),
    # lua, php (Debian: lua5.4, php-cli)
    ("lua-runtime-error", {"a.lua": LUA_RUNTIME_ERROR}, "lua5.4 a.lua"),
    ("lua-syntax-error", {"a.lua": LUA_SYNTAX_ERROR}, "lua5.4 a.lua"),
    ("lua-ok", {"a.lua": LUA_OK}, "lua5.4 a.lua"),
    ("php-throw", {"a.php": PHP_THROW}, "php a.php"),
    ("php-lint-error", {"a.php": PHP_SYNTAX_ERROR}, "php -l a.php"),
    ("php-lint-ok", {"a.php": PHP_WARNING_OK}, "php -l a.php"),
    ("php-warning-ok", {"a.php": PHP_WARNING_OK2}, "php a.php"),
]
TASK_OUTPUT_FORMS_54 = ["prettier-check-fail", "prettier-check-ok", "mocha-fail", "mocha-pass", "pyright-error",
                        "pyright-ok", "django-test-fail", "django-test-pass", "cmake-build-compile-error",
                        "java-throw", "php-throw", "lua-runtime-error"]


def fresh54():
    """FRESH54's scenarios, each plainly and through tail, and the
    background forms (the setup's status labels them)."""
    return fresh_round(FRESH54, TASK_OUTPUT_FORMS_54, "b54d")


def fresh_round(scenarios, task_forms, task_id):
    """A round's scenarios (name, files, command and an optional setup),
    each plainly and through tail, and those named in `task_forms` in
    Claude Code's background form (written to `tasks/<task_id>.output`,
    the setup's status labelling the row)."""
    out = []
    for name, files, command, *setup in scenarios:
        out.append((name, files, command, *setup))
        out.append((name + "-tail", files, f"set -o pipefail; {command} 2>&1 | tail -20", *setup))
    for name, files, command, *setup in scenarios:
        if name in task_forms:
            first = f"{setup[0]} > /dev/null 2>&1; " if setup else ""
            write = f"{first}mkdir -p tasks; ( {command} ) > tasks/{task_id}.output 2>&1; echo $? > .status"
            out.append((name + "-task", files, f"tail -30 tasks/{task_id}.output", write))
    for row in out:
        base = row[0]
        if base.endswith(("-task", "-tail")):
            base = base.rsplit("-", 1)[0]
        NEEDS[row[0]] = next(c for n, _, c, *_ in scenarios if n == base).split()[0]
    return out


# The fifty-fifth session's programs (FRESH55), run as FRESH54's are:
# plainly, through `| tail -20` and, for TASK_OUTPUT_FORMS_55, in Claude
# Code's background form; a fourth field is a setup (its output not
# recorded). Every row's command opens with the program it needs on PATH.
C_OUT_OF_BOUNDS = "int main(void) {\n    int a[2] = {0, 1};\n    a[5] = 1;\n    return a[0];\n}\n"
C_CLEAN_ERRORS = '#include <stdio.h>\nint main(void) {\n    int errors = 0;\n    printf("errors: %d\\n", errors);\n    return errors;\n}\n'
C_DIVIDE_BY_ZERO = "int f(int x) {\n    int z = 0;\n    return x / z;\n}\n"
XML_MISMATCH = "<?xml version=\"1.0\"?>\n<log>\n  <entry><error>disk full</entry>\n</log>\n"
XML_LOG = "<?xml version=\"1.0\"?>\n<log>\n  <entry level=\"error\"><error>disk full</error></entry>\n" \
    "  <entry level=\"info\"><error/></entry>\n</log>\n"
XSD_LOG = """<?xml version="1.0"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">
  <xs:element name="log">
    <xs:complexType><xs:sequence>
      <xs:element name="entry" maxOccurs="unbounded">
        <xs:complexType><xs:sequence>
          <xs:element name="error" type="xs:string" minOccurs="0"/>
        </xs:sequence><xs:attribute name="level" type="xs:string" use="required"/></xs:complexType>
      </xs:element>
    </xs:sequence></xs:complexType>
  </xs:element>
</xs:schema>
"""
XML_INVALID = "<?xml version=\"1.0\"?>\n<log>\n  <entry><error>disk full</error></entry>\n  <failure/>\n</log>\n"
MD_BAD = "# Release notes\n## Errors\nFixed the failure on start.  \n\n\n* one\n+ two\n"
MD_CLEAN = "# Errors and failures\n\nNo failures found: 0 errors.\n"
CSS_BAD = "a { color: #ff; }\nb {}\n"
CSS_CLEAN = ".error { color: #f00; }\n.failed { margin: 0; }\n"
STYLELINT_ERRORS = '{"rules": {"color-no-invalid-hex": true, "block-no-empty": true}}\n'
STYLELINT_WARNINGS = '{"rules": {"block-no-empty": [true, {"severity": "warning"}]}}\n'
HTML_BAD = "<!DOCTYPE html>\n<html>\n<head><title>Errors</title></head>\n<body>\n<div><span>error</div>\n" \
    "<img src=\"a.png\" SRC=\"b.png\">\n</body>\n</html>\n"
HTML_CLEAN = "<!DOCTYPE html>\n<html>\n<head><title>Errors: 0</title></head>\n<body>\n" \
    "<p class=\"error\">No failures.</p>\n</body>\n</html>\n"
TS_THROW = 'console.log("loading");\nconst n: number = 1;\nthrow new Error("config missing: " + n);\n'
TS_SYNTAX_ERROR = "const x: number = {a: 1,\nfunction f() {}\n"
TS_ERROR_TEXT_OK = 'const errors: string[] = [];\nconsole.log("Error: none");\nconsole.log(`${errors.length} failed`);\n'
JS_IMPORTS_MISSING = "import x from './nothere.js';\nconsole.log(x);\n"
JS_IMPORTS_EXTERNAL = "import x from 'left-pad';\nconsole.log(x);\n"
TOX_INI = "[tox]\nenvlist = py\nskipsdist = true\n\n[testenv]\nskip_install = true\ncommands = {command}\n"
NOXFILE = """import nox


@nox.session(venv_backend="none")
def tests(session):
    session.run("python3", "-c", {code!r})
"""
SPHINX_CONF = "project = 'probe'\nextensions = []\n"
SPHINX_INDEX_MISSING = "Probe\n=====\n\n.. toctree::\n\n   nothere\n"
SPHINX_INDEX_OK = "Errors\n======\n\nNo failures: 0 errors.\n"
MKDOCS_YML_MISSING = "site_name: probe\nnav:\n  - Home: index.md\n  - Errors: nothere.md\n"
MKDOCS_YML_OK = "site_name: probe\nnav:\n  - Home: index.md\n"
ALEMBIC_SETUP = ("alembic init migrations && sed -i 's#^sqlalchemy.url = .*#sqlalchemy.url = sqlite:///app.db#' "
                 "alembic.ini && cp v/*.py migrations/versions/")
ALEMBIC_REVISION = '''"""{message}"""
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade():
    op.execute("{sql}")


def downgrade():
    pass
'''
MKWHEEL = '''import sys
import zipfile

kind = sys.argv[1]
meta = "Metadata-Version: 2.1\\nName: probe\\nVersion: 1.0\\nSummary: errors and failures\\n"
if kind == "rst":
    meta += "Description-Content-Type: text/x-rst\\n\\nProbe\\n=====\\n\\n.. nothere-directive::\\n\\n`broken <link\\n"
elif kind == "md":
    meta += "Description-Content-Type: text/markdown\\n\\n# Probe\\n\\nError: none.\\n"
with zipfile.ZipFile("dist/probe-1.0-py3-none-any.whl", "w") as z:
    z.writestr("probe/__init__.py", "")
    z.writestr("probe-1.0.dist-info/METADATA", meta)
    z.writestr("probe-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\\nGenerator: s55d\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n")
    z.writestr("probe-1.0.dist-info/RECORD", "")
'''
PRE_COMMIT_CONFIG = """repos:
  - repo: local
    hooks:
      - id: no-todo
        name: no TODO markers
        entry: TODO
        language: pygrep
        files: \\.py$
      - id: no-tabs-in-yaml
        name: no tabs in yaml
        entry: "\\t"
        language: pygrep
        files: \\.ya?ml$
"""
GIT_ADD = "git init -q && git add -A"
PLAYBOOK_FAIL = """- hosts: localhost
  gather_facts: false
  tasks:
    - name: check the service
      command: /bin/false
    - name: report
      debug: msg="done"
"""
PLAYBOOK_IGNORED = """- hosts: localhost
  gather_facts: false
  tasks:
    - name: check the service
      command: /bin/false
      ignore_errors: true
    - name: report
      debug: msg="errors handled, 0 failed"
"""
PLAYBOOK_BAD_SYNTAX = "- hosts: localhost\n  tasks:\n    - name: x\n      command: echo\n     debug: msg=1\n"
ANSIBLE = "ansible-playbook -i localhost, -c local -e ansible_python_interpreter=python3"
OCAML_RAISE = 'print_endline "loading";;\nfailwith "config missing";;\n'
OCAML_TYPE_ERROR = 'let x : int = "three";;\nprint_int x;;\n'
OCAML_OK = 'print_endline "Error: none";;\nPrintf.printf "%d failed\\n" 0;;\n'
ERL_BADMATCH = '#!/usr/bin/env escript\nmain(_) ->\n    io:format("loading~n"),\n    1 = length([a, b]).\n'
ERL_SYNTAX_ERROR = '#!/usr/bin/env escript\nmain(_) ->\n    io:format("x~n")\n    ok.\n'
ERL_OK = '#!/usr/bin/env escript\nmain(_) ->\n    io:format("errors: ~p~nfailed: none~n", [0]).\n'
OPENSSL_CERT = ("openssl req -x509 -newkey rsa:2048 -nodes -keyout k.pem -out c.pem -days 1 "
                "-subj '/CN=error-reports.example'")
GPG_HOME = "mkdir -m 700 g && gpg --homedir g --batch --passphrase '' --quick-gen-key 'Probe <probe@example.com>' " \
    "ed25519 sign never && gpg --homedir g --batch -b f.txt && gpgconf --homedir g --kill gpg-agent"
APP_LOG = "INFO start\nWARN slow disk\nINFO done\n"
FRESH55 = [
    # C checkers (Debian: cppcheck, clang-tidy)
    ("cppcheck-error-exitcode", {"a.c": C_OUT_OF_BOUNDS}, "cppcheck --error-exitcode=1 a.c"),
    ("cppcheck-error-default-ok", {"a.c": C_OUT_OF_BOUNDS}, "cppcheck a.c"),
    ("cppcheck-clean-ok", {"a.c": C_CLEAN_ERRORS}, "cppcheck --error-exitcode=1 --enable=style a.c"),
    ("clang-tidy-warnings-as-errors", {"a.c": C_DIVIDE_BY_ZERO}, "clang-tidy -warnings-as-errors='*' a.c --"),
    ("clang-tidy-syntax-error", {"a.c": C_SYNTAX_ERROR}, "clang-tidy a.c --"),
    ("clang-tidy-warning-ok", {"a.c": C_DIVIDE_BY_ZERO}, "clang-tidy a.c --"),
    # xmllint (Debian: libxml2-utils)
    ("xmllint-not-well-formed", {"a.xml": XML_MISMATCH}, "xmllint --noout a.xml"),
    ("xmllint-schema-invalid", {"a.xml": XML_INVALID, "log.xsd": XSD_LOG}, "xmllint --noout --schema log.xsd a.xml"),
    ("xmllint-schema-ok", {"a.xml": XML_LOG, "log.xsd": XSD_LOG}, "xmllint --noout --schema log.xsd a.xml"),
    ("xmllint-xpath-ok-errors", {"a.xml": XML_LOG}, "xmllint --xpath '//entry[@level=\"error\"]' a.xml"),
    # markdownlint, stylelint, htmlhint, tsx, rollup (npm, offline: --bin NODE_MODULES/.bin)
    ("markdownlint-fail", {"a.md": MD_BAD}, "markdownlint a.md"),
    ("markdownlint-ok", {"a.md": MD_CLEAN}, "markdownlint a.md && echo 'markdownlint: 0 errors'"),
    ("stylelint-errors", {"a.css": CSS_BAD, ".stylelintrc.json": STYLELINT_ERRORS}, "stylelint a.css"),
    ("stylelint-warning-ok", {"a.css": CSS_BAD, ".stylelintrc.json": STYLELINT_WARNINGS}, "stylelint a.css"),
    ("stylelint-no-config", {"a.css": CSS_CLEAN}, "stylelint a.css"),
    ("htmlhint-errors", {"a.html": HTML_BAD}, "htmlhint a.html"),
    ("htmlhint-ok", {"a.html": HTML_CLEAN}, "htmlhint a.html"),
    ("tsx-throw", {"a.ts": TS_THROW}, "tsx a.ts"),
    ("tsx-syntax-error", {"a.ts": TS_SYNTAX_ERROR}, "tsx a.ts"),
    ("tsx-ok-error-text", {"a.ts": TS_ERROR_TEXT_OK}, "tsx a.ts"),
    ("rollup-missing-import", {"a.js": JS_IMPORTS_MISSING}, "rollup a.js --file out.js"),
    ("rollup-external-warning-ok", {"a.js": JS_IMPORTS_EXTERNAL}, "rollup a.js --file out.js"),
    # python tools (PyPI, in a venv: --bin VENV/bin)
    ("tox-fail", {"tox.ini": TOX_INI.format(command="python -c \"print('running'); raise SystemExit(3)\"")},
     "tox -e py"),
    ("tox-ok", {"tox.ini": TOX_INI.format(command="python -c \"print('0 failed, 0 errors')\"")}, "tox -e py"),
    ("nox-fail", {"noxfile.py": NOXFILE.format(code="print('running'); raise SystemExit(2)")}, "nox -s tests"),
    ("nox-ok", {"noxfile.py": NOXFILE.format(code="print('Error: none; 0 failed')")}, "nox -s tests"),
    ("sphinx-build-W", {"conf.py": SPHINX_CONF, "index.rst": SPHINX_INDEX_MISSING}, "sphinx-build -W -b html . _build"),
    ("sphinx-build-warning-ok", {"conf.py": SPHINX_CONF, "index.rst": SPHINX_INDEX_MISSING},
     "sphinx-build -b html . _build"),
    ("sphinx-build-ok", {"conf.py": SPHINX_CONF, "index.rst": SPHINX_INDEX_OK}, "sphinx-build -W -b html . _build"),
    ("mkdocs-strict-fail", {"mkdocs.yml": MKDOCS_YML_MISSING, "docs/index.md": MD_CLEAN}, "mkdocs build --strict"),
    ("mkdocs-warning-ok", {"mkdocs.yml": MKDOCS_YML_MISSING, "docs/index.md": MD_CLEAN}, "mkdocs build"),
    ("mkdocs-ok", {"mkdocs.yml": MKDOCS_YML_OK, "docs/index.md": MD_CLEAN}, "mkdocs build --strict"),
    ("alembic-upgrade-fail", {"v/0001_a.py": ALEMBIC_REVISION.format(
        message="fill jobs", sql="INSERT INTO no_such_table VALUES (1)")}, "alembic upgrade head", ALEMBIC_SETUP),
    ("alembic-no-config", {}, "alembic upgrade head"),
    ("alembic-upgrade-ok", {"v/0001_a.py": ALEMBIC_REVISION.format(
        message="create errors table", sql="CREATE TABLE errors (id INTEGER, failed INTEGER)")},
     "alembic upgrade head", ALEMBIC_SETUP),
    ("twine-check-fail", {"mkwheel.py": MKWHEEL, "dist/.keep": ""}, "twine check dist/*.whl",
     "python3 mkwheel.py rst"),
    ("twine-check-warning-ok", {"mkwheel.py": MKWHEEL, "dist/.keep": ""}, "twine check dist/*.whl",
     "python3 mkwheel.py none"),
    ("twine-check-ok", {"mkwheel.py": MKWHEEL, "dist/.keep": ""}, "twine check dist/*.whl", "python3 mkwheel.py md"),
    ("pre-commit-fail", {".pre-commit-config.yaml": PRE_COMMIT_CONFIG, "a.py": "# TODO remove\nx = 1\n"},
     "pre-commit run --all-files", GIT_ADD),
    ("pre-commit-ok", {".pre-commit-config.yaml": PRE_COMMIT_CONFIG, "a.py": "x = 1  # errors: 0\n"},
     "pre-commit run --all-files", GIT_ADD),
    ("ansible-task-fails", {"p.yml": PLAYBOOK_FAIL}, f"{ANSIBLE} p.yml"),
    ("ansible-ignored-error-ok", {"p.yml": PLAYBOOK_IGNORED}, f"{ANSIBLE} p.yml"),
    ("ansible-syntax-check-fail", {"p.yml": PLAYBOOK_BAD_SYNTAX}, f"{ANSIBLE} --syntax-check p.yml"),
    ("ansible-syntax-check-ok", {"p.yml": PLAYBOOK_IGNORED}, f"{ANSIBLE} --syntax-check p.yml"),
    # ocaml, escript (Debian: ocaml-nox, erlang-base)
    ("ocaml-raise", {"a.ml": OCAML_RAISE}, "ocaml a.ml"),
    ("ocaml-type-error", {"a.ml": OCAML_TYPE_ERROR}, "ocaml a.ml"),
    ("ocaml-ok", {"a.ml": OCAML_OK}, "ocaml a.ml"),
    ("escript-badmatch", {"a.erl": ERL_BADMATCH}, "escript a.erl"),
    ("escript-syntax-error", {"a.erl": ERL_SYNTAX_ERROR}, "escript a.erl"),
    ("escript-ok", {"a.erl": ERL_OK}, "escript a.erl"),
    # openssl, gpg
    ("openssl-bad-pem", {"c.pem": "-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n"},
     "openssl x509 -in c.pem -noout -subject"),
    ("openssl-verify-self-signed", {}, "openssl verify c.pem", OPENSSL_CERT),
    ("openssl-subject-ok", {}, "openssl x509 -in c.pem -noout -subject", OPENSSL_CERT),
    ("gpg-verify-bad", {"f.txt": "release 1.0\n"}, "gpg --homedir g --verify f.txt.sig f.txt",
     GPG_HOME + " && echo tampered >> f.txt"),
    ("gpg-verify-ok", {"f.txt": "release 1.0: 0 errors\n"}, "gpg --homedir g --verify f.txt.sig f.txt", GPG_HOME),
    # rsync, find, diff, cmp, grep, timeout
    ("rsync-missing-source", {"dest/.keep": ""}, "rsync -a nothere/ dest/"),
    ("rsync-ok-error-names", {"logs/error.log": "x\n", "logs/failed-jobs.txt": "y\n"}, "rsync -av logs/ backup/"),
    ("find-missing-dir", {"src/a.py": ""}, "find src nothere -name '*.py'"),
    ("find-ok-error-names", {"logs/error.log": "", "logs/failed.txt": ""}, "find . -name '*error*' -o -name '*fail*'"),
    ("diff-differ", {"a.txt": "errors: 0\nstatus: ok\n", "b.txt": "errors: 2\nstatus: failed\n"}, "diff -u a.txt b.txt"),
    ("diff-missing-file", {"a.txt": "x\n"}, "diff a.txt nothere.txt"),
    ("diff-same-ok", {"a.txt": "errors: 0\n", "b.txt": "errors: 0\n"}, "diff -u a.txt b.txt && echo 'no differences'"),
    ("cmp-differ", {"a.bin": "abcdef\n", "b.bin": "abXdef\n"}, "cmp a.bin b.bin"),
    ("grep-count-none", {"app.log": APP_LOG}, "grep -c ERROR app.log"),
    ("grep-count-ok", {"app.log": APP_LOG + "ERROR disk full\n"}, "grep -c ERROR app.log"),
    ("grep-q-none", {"app.log": APP_LOG}, "grep -q ERROR app.log"),
    ("grep-q-ok", {"app.log": APP_LOG}, "grep -q WARN app.log"),
    ("timeout-expires", {}, "timeout 1 sh -c 'echo waiting for server; sleep 5'"),
    ("timeout-ok", {}, "timeout 5 sh -c 'echo \"timeout: 30s, retries: 0, failed: 0\"'"),
]
TASK_OUTPUT_FORMS_55 = ["cppcheck-error-exitcode", "clang-tidy-syntax-error", "tsx-throw", "tsx-ok-error-text",
                        "tox-fail", "tox-ok", "sphinx-build-W", "mkdocs-strict-fail", "mkdocs-ok",
                        "ansible-task-fails", "ansible-ignored-error-ok", "ocaml-raise"]


def fresh55():
    """FRESH55's scenarios, as FRESH54's (`fresh_round`)."""
    return fresh_round(FRESH55, TASK_OUTPUT_FORMS_55, "b55d")


def run(name, files, command, pytest, python, tsc, eslint, gocache, setup=None, go_env=None, pg=None):
    """The command's output and exit status; a setup that writes the file
    `.status` labels the row with that status instead (a command whose
    output it wrote to a file, read by the recorded command)."""
    tmp = tempfile.mkdtemp(prefix=f"probe-{name}-")
    try:
        for path, text in files.items():
            full = os.path.join(tmp, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w") as f:
                f.write(text)
        env = dict(os.environ, NO_COLOR="1", TERM="dumb", CARGO_TERM_COLOR="never",
                   CARGO_TARGET_DIR=os.path.join(tmp, "target"), PYTHONDONTWRITEBYTECODE="1",
                   npm_config_cache=os.path.join(tmp, ".npm"), npm_config_update_notifier="false",
                   GOCACHE=gocache, GOPATH=os.path.join(gocache, "gopath"), GOPROXY="off",
                   GOFLAGS="-mod=mod", GOTOOLCHAIN="local", GO111MODULE="on")
        if pg:
            # psql's scenarios connect where the URL says, through libpq's
            # variables (the commands name no server).
            from urllib.parse import urlsplit
            url = urlsplit(pg)
            env.update(PGHOST=url.hostname, PGPORT=str(url.port or 5432), PGUSER=url.username or "postgres",
                       PGDATABASE=url.path.lstrip("/"))
        goproxy = os.path.join(gocache, "proxy")
        env.update({k: v.replace("{goproxy}", goproxy) for k, v in (go_env or {}).items()})
        cmd = command.replace("{pytest}", pytest or "pytest").replace("{python}", python)
        cmd = cmd.replace("{tsc}", tsc or "tsc").replace("{eslint}", eslint or "eslint")
        if setup:
            # Before the command, its output not recorded (a log to read).
            subprocess.run(["bash", "-c", setup], cwd=tmp, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=TIMEOUT)
        p = subprocess.run(["bash", "-c", f"( {cmd} ) 2>&1"], cwd=tmp, env=env,
                           stdout=subprocess.PIPE, timeout=TIMEOUT)
        status = p.returncode
        if os.path.exists(os.path.join(tmp, ".status")):
            with open(os.path.join(tmp, ".status")) as f:
                status = int(f.read())
        return p.stdout.decode("utf-8", "replace").replace(tmp, "/tmp/probe"), status
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pytest", help="a pytest executable (pytest scenarios are skipped without it)")
    ap.add_argument("--python", default="python3",
                    help="a python3 with click installed (click scenarios fail without it)")
    ap.add_argument("--tsc", help="a tsc executable (typescript; tsc scenarios are skipped without it)")
    ap.add_argument("--eslint", help="an eslint 9 executable (eslint scenarios are skipped without it)")
    ap.add_argument("--only", help="comma-separated scenario names")
    ap.add_argument("--bin", action="append", default=[],
                    help="a directory to put first on PATH (a venv's bin, node_modules/.bin); repeatable")
    ap.add_argument("--fresh53", action="store_true",
                    help="run only the fifty-third session's scenarios (FRESH53 and their forms)")
    ap.add_argument("--fresh54", action="store_true",
                    help="run only the fifty-fourth session's scenarios (FRESH54 and their forms)")
    ap.add_argument("--fresh55", action="store_true",
                    help="run only the fifty-fifth session's scenarios (FRESH55 and their forms)")
    ap.add_argument("--pg", help="a PostgreSQL URL for psql's scenarios (skipped without it)")
    args = ap.parse_args()
    only = set(args.only.split(",")) if args.only else None
    if args.bin:
        os.environ["PATH"] = os.pathsep.join([*map(os.path.abspath, args.bin), os.environ["PATH"]])
    gocache = tempfile.mkdtemp(prefix="probe-gocache-")
    try:
        write_go_proxy(os.path.join(gocache, "proxy"))
        scenarios(args, only, gocache)
    finally:
        shutil.rmtree(gocache, ignore_errors=True)


def write_go_proxy(root):
    """A module proxy in a directory, in the GOPROXY protocol's layout
    (`PATH/@v/list`, `VERSION.info`, `.mod`, `.zip`), of GO_PROXY_MODULES."""
    import zipfile
    for path, version, gomod, files in GO_PROXY_MODULES:
        d = os.path.join(root, path, "@v")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "list"), "a") as f:
            f.write(version + "\n")
        with open(os.path.join(d, version + ".info"), "w") as f:
            json.dump({"Version": version, "Time": "2024-01-01T00:00:00Z"}, f)
        with open(os.path.join(d, version + ".mod"), "w") as f:
            f.write(gomod)
        with zipfile.ZipFile(os.path.join(d, version + ".zip"), "w") as z:
            z.writestr(f"{path}@{version}/go.mod", gomod)
            for name, text in files.items():
                z.writestr(f"{path}@{version}/{name}", text)


def scenarios(args, only, gocache):
    if args.fresh55:
        rows = fresh55()
    elif args.fresh54:
        rows = fresh54()
    elif args.fresh53:
        rows = fresh53()
    else:
        rows = SCENARIOS + fresh53() + fresh54() + fresh55()
    for name, files, command, *setup in rows:
        if only and name not in only:
            continue
        if name in NEEDS and not shutil.which(NEEDS[name]):
            print(f"{name}: skipped (no {NEEDS[name]} on PATH)", file=sys.stderr)
            continue
        if "{pytest}" in command and not args.pytest:
            print(f"{name}: skipped (no --pytest)", file=sys.stderr)
            continue
        if "{tsc}" in command and not args.tsc:
            print(f"{name}: skipped (no --tsc)", file=sys.stderr)
            continue
        if "{eslint}" in command and not args.eslint:
            print(f"{name}: skipped (no --eslint)", file=sys.stderr)
            continue
        if NEEDS.get(name) == "psql" and not args.pg:
            print(f"{name}: skipped (no --pg)", file=sys.stderr)
            continue
        uses = " ".join([command, *(x for x in setup if isinstance(x, str))])
        # (`go` as a word: `cargo clippy` runs no go)
        if re.search(r"(?:^|[\s;&|(])(?:go|gofmt) ", uses) and not shutil.which("go"):
            print(f"{name}: skipped (no go)", file=sys.stderr)
            continue
        text, status = run(name, files, command, args.pytest, args.python, args.tsc,
                           args.eslint, gocache, *setup, pg=args.pg)
        print(json.dumps({
            "source": f"probe:raw-commands:{name}",
            "provider": "openai",
            "tool_name": "shell",
            "command": command.replace("{pytest}", "pytest").replace("{python}", "python3")
            .replace("{tsc}", "tsc").replace("{eslint}", "eslint"),
            "content": text[:MAX_CONTENT],
            "content_chars": len(text),
            "truncated": len(text) > MAX_CONTENT,
            "exit_status": status,
            "is_error": status != 0,
            "label_basis": "exit status of the command run with bash -c",
        }, ensure_ascii=False))
        print(f"{name}: exit {status}", file=sys.stderr)


if __name__ == "__main__":
    main()
