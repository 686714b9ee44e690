//! Tests of the `failure_summary` rule: outputs of real programs run here
//! (cargo 1.95, pytest 9.2, Python 3.11 unittest and argparse, click 8,
//! tsc 5.9.3, GNU make 4.3, gcc, javac, npm 11, git, jest 30, vitest 4,
//! node 20's `--test`, ruff 0.17, black 26, pip 23, curl 7.88, perl
//! 5.36; GNU tar 1.34, cmake 3.25, pyright 1.1.414, coverage 7.17,
//! prettier 3.10, oxlint 1.95, biome 2.6, php 8.2; tox 4.67, nox
//! 2026.10, Sphinx 9.0, MkDocs 1.6, xmllint 2.9.14, OpenSSL 3.0, GnuPG
//! 2.2, rsync 3.5, GNU find 4.9, htmlhint 1.9, pre-commit 4.7,
//! ansible-core 2.19, Erlang/OTP 25's escript), each with its exit
//! status, as `scripts/detect-data/raw_commands.py` records them (temp
//! paths replaced by `/tmp/probe`). No exit status is in the text: the
//! tool that ran them hands over the output alone.

use proptest::prelude::*;

use super::{Detector, SUMMARY_TAIL_BYTES};

/// Each of `texts` is `failure_summary`'s when `failed`, and none is when
/// not (another rule may still read it).
fn summary_exactly_when(failed: bool, texts: &[String]) -> Result<(), TestCaseError> {
    let d = Detector::default();
    for text in texts {
        if failed {
            prop_assert_eq!(d.explain(text), Some("failure_summary"), "{:?}", text);
        } else {
            prop_assert_ne!(d.explain(text), Some("failure_summary"), "{:?}", text);
        }
    }
    Ok(())
}

/// Outputs of commands that failed (exit status in the comment).
const FAILED: &[&str] = &[
    // cargo build (101)
    "   Compiling app v0.1.0 (/tmp/probe/app)\nerror[E0308]: mismatched types\n --> src/main.rs:2:18\n  |\n2 |     let n: i32 = \"three\";\n  |            ---   ^^^^^^^ expected `i32`, found `&str`\n  |            |\n  |            expected due to this\n\nFor more information about this error, try `rustc --explain E0308`.\nerror: could not compile `app` (bin \"app\") due to 1 previous error\n",
    // cargo test (101)
    "test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.08s\n\nerror: test failed, to rerun pass `--bin app`\n",
    // cargo test --no-fail-fast in a workspace (101)
    "test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\nerror: 2 targets failed:\n    `-p a --lib`\n    `-p b --lib`\n",
    // rustc alone (1)
    "  |            expected due to this\n\nerror: aborting due to 2 previous errors\n\nSome errors have detailed explanations: E0308, E0425.\nFor more information about an error, try `rustc --explain E0308`.\n",
    // pytest (1)
    "============================= test session starts ==============================\nplatform linux -- Python 3.11.7, pytest-9.2.0, pluggy-1.7.0\nrootdir: /tmp/probe\ncollected 4 items\n\ntest_m.py ..F.                                                           [100%]\n\n=========================== short test summary info ============================\nFAILED test_m.py::test_c - assert 3 == 4\n========================= 1 failed, 3 passed in 0.03s ==========================\n",
    // pytest -q (1)
    "..F.                                                                     [100%]\n=================================== FAILURES ===================================\n____________________________________ test_c ____________________________________\n\n    def test_c():\n>       assert sum([1, 2]) == 4\nE       assert 3 == 4\nE        +  where 3 = sum([1, 2])\n\ntest_m.py:8: AssertionError\n=========================== short test summary info ============================\nFAILED test_m.py::test_c - assert 3 == 4\n1 failed, 3 passed in 0.02s\n",
    // pytest, an error in a fixture (1)
    "ERROR test_m.py::test_a - RuntimeError: cannot open database\n========================== 1 passed, 1 error in 0.02s ==========================\n",
    // pytest, an error during collection (2)
    "ERROR test_m.py\n!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!\n=============================== 1 error in 0.10s ===============================\n",
    // unittest (1)
    "F.\n======================================================================\nFAIL: test_bad (__main__.T.test_bad)\n----------------------------------------------------------------------\nTraceback (most recent call last):\n  File \"/tmp/probe/t.py\", line 8, in test_bad\n    self.assertEqual(len(\"abc\"), 4)\nAssertionError: 3 != 4\n\n----------------------------------------------------------------------\nRan 2 tests in 0.000s\n\nFAILED (failures=1)\n",
    "E\n----------------------------------------------------------------------\nRan 1 test in 0.000s\n\nFAILED (errors=1)\n",
    // Python refusing a module or a script (runpy's `sys.executable: …`,
    // status 1; the interpreter's own, status 2), python 3.11 here
    "/root/.pyenv/versions/3.11.7/bin/python3: No module named no_such_tool_here\n",
    "/root/.pyenv/versions/3.11.7/bin/python3: No module named app.__main__; 'app' is a package and cannot be directly executed\n",
    "/root/.pyenv/versions/3.11.7/bin/python3: Error while finding module specification for 'os.no_such_tool_here' (ModuleNotFoundError: __path__ attribute not found on 'os' while trying to find 'os.no_such_tool_here')\n",
    "checking tools\n/root/.pyenv/versions/3.11.7/bin/python3: No module named no_such_tool_here\n",
    "running checks\npython3: can't open file '/tmp/probe/no_such_script.py': [Errno 2] No such file or directory\n",
    // jq 1.6, a compile error below another command's output (3)
    "checking\njq: error: syntax error, unexpected $end (Unix shell quoting issues?) at <top-level>, line 1:\n.a |   \njq: 1 compile error\n",
    // make (2)
    "building\nfalse\nmake: *** [Makefile:3: all] Error 1\n",
    "make: *** No rule to make target 'deploy'.  Stop.\n",
    "make -C sub\nmake[1]: Entering directory '/tmp/probe/sub'\nbuilding\nfalse\nmake[1]: *** [Makefile:3: all] Error 1\nmake[1]: Leaving directory '/tmp/probe/sub'\nmake: *** [Makefile:2: all] Error 2\n",
    "false\nmake: *** [Makefile:3: a] Error 1\nb built\nmake: Target 'all' not remade because of errors.\n",
    // npm (1)
    "npm error Missing script: \"deploy\"\nnpm error\nnpm error To see a list of scripts, run:\nnpm error   npm run\nnpm error A complete log of this run can be found in: /tmp/probe/.npm/_logs/2026-12-01T00_07_07_175Z-debug-0.log\n",
    // gcc, the linker (1)
    "/usr/bin/ld: /tmp/ccD6ELMk.o: in function `main':\nmain.c:(.text+0x5): undefined reference to `helper'\ncollect2: error: ld returned 1 exit status\n",
    // javac (1)
    "Main.java:4: warning: [unchecked] unchecked call to add(E) as a member of the raw type List\n    List l = new ArrayList(); l.add(\"x\");\n                                   ^\n  where E is a type-variable:\n    E extends Object declared in interface List\nMain.java:5: error: incompatible types: String cannot be converted to int\n    int x = \"s\";\n            ^\n1 error\n1 warning\n",
    // tsc --pretty (2), its colours as it prints them
    "\x1b[96ma.ts\x1b[0m:\x1b[93m1\x1b[0m:\x1b[93m5\x1b[0m - \x1b[91merror\x1b[0m\x1b[90m TS2322: \x1b[0mType 'string' is not assignable to type 'number'.\n\n\x1b[7m1\x1b[0m let x: number = \"a\";\n\x1b[7m \x1b[0m \x1b[91m    ~\x1b[0m\n\n\nFound 2 errors in the same file, starting at: a.ts\x1b[90m:1\x1b[0m\n\n",
    "\x1b[7m1\x1b[0m let z: number = \"b\";\n\x1b[7m \x1b[0m \x1b[91m    ~\x1b[0m\n\n\nFound 3 errors in 2 files.\n\nErrors  Files\n     2  a.ts\x1b[90m:1\x1b[0m\n     1  b.ts\x1b[90m:1\x1b[0m\n",
    // argparse (2)
    "usage: deploy.py [-h] [--env {staging,prod}] target\ndeploy.py: error: the following arguments are required: target\n",
    "usage: deploy.py [-h] [--env {staging,prod}] target\ndeploy.py: error: argument --env: invalid choice: 'qa' (choose from 'staging', 'prod')\n",
    // click (2)
    "Usage: c.py [OPTIONS] NAME\nTry 'c.py --help' for help.\n\nError: Missing argument 'NAME'.\n",
    // git merge, cherry-pick, rebase, push (1)
    "Auto-merging f0.txt\nCONFLICT (content): Merge conflict in f0.txt\nAutomatic merge failed; fix conflicts and then commit the result.\n",
    "Auto-merging f0.txt\nCONFLICT (content): Merge conflict in f0.txt\nerror: could not apply 18b262a... side\nhint: After resolving the conflicts, mark them with\nhint: \"git add/rm <pathspec>\", then run\nhint: \"git cherry-pick --continue\".\nhint: You can instead skip this commit with \"git cherry-pick --skip\".\nhint: To abort and get back to the state before \"git cherry-pick\",\nhint: run \"git cherry-pick --abort\".\nhint: Disable this message with \"git config advice.mergeConflict false\"\n",
    "Auto-merging f0.txt\nCONFLICT (content): Merge conflict in f0.txt\nerror: could not apply c97f74c... side\nhint: Disable this message with \"git config advice.mergeConflict false\"\nCould not apply c97f74c... side\n",
    "To ../remote.git\n ! [rejected]        HEAD -> main (non-fast-forward)\nerror: failed to push some refs to '../remote.git'\nhint: Updates were rejected because a pushed branch tip is behind its remote\nhint: counterpart. If you want to integrate the remote changes, use 'git pull'\nhint: before pushing again.\nhint: See the 'Note about fast-forwards' in 'git push --help' for details.\n",
    // jest 30 (1): a failed test; a suite that did not run (a syntax error)
    "      at Object.toBe (a.test.js:2:72)\n\nTest Suites: 1 failed, 1 total\nTests:       1 failed, 1 passed, 2 total\nSnapshots:   0 total\nTime:        0.653 s\nRan all test suites matching a.test.js.\n",
    "      at transformSync (../js/node_modules/@babel/core/src/transform.ts:66:52)\n\nTest Suites: 1 failed, 1 total\nTests:       0 total\nSnapshots:   0 total\nTime:        0.599 s\nRan all test suites matching b.test.js.\n",
    // vitest 4 (1), plain and coloured
    "      4|\n\n\u{23af}\u{23af}\u{23af}\u{23af}[1/1]\u{23af}\n\n\n Test Files  1 failed (1)\n      Tests  1 failed | 1 passed (2)\n   Start at  05:03:37\n   Duration  526ms (transform 34ms, setup 0ms, import 52ms, tests 15ms, environment 0ms)\n\n",
    "\x1b[2m Test Files \x1b[22m \x1b[1m\x1b[31m1 failed\x1b[39m\x1b[22m\x1b[90m (1)\x1b[39m\n\x1b[2m      Tests \x1b[22m \x1b[1m\x1b[31m1 failed\x1b[39m\x1b[22m\x1b[90m (1)\x1b[39m\n\x1b[2m   Start at \x1b[22m 05:10:00\n\x1b[2m   Duration \x1b[22m 446ms\x1b[2m (transform 46ms, setup 0ms, import 68ms, tests 8ms, environment 0ms)\x1b[22m\n\n",
    // node --test, node 20's TAP reporter (1)
    "  ...\n1..2\n# tests 2\n# suites 0\n# pass 1\n# fail 1\n# cancelled 0\n# skipped 0\n# todo 0\n# duration_ms 260.576382\n",
    // tar-missing-archive (2)
    "tar (child): missing.tar.gz: Cannot open: No such file or directory\ntar (child): Error is not recoverable: exiting now\ntar: Child returned status 2\ntar: Error is not recoverable: exiting now\n",
    // tar-corrupt-archive (2)
    "tar: This does not look like a tar archive\ntar: Skipping to next header\ntar: Exiting with failure status due to previous errors\n",
    // cmake -S . -B build of a C project calling add_executabl (1; its
    // `CMake Error` opening the output is error_label's)
    "-- The C compiler identification is GNU 12.2.0\n-- Detecting C compiler ABI info\n-- Detecting C compiler ABI info - done\n-- Check for working C compiler: /usr/bin/cc - skipped\n-- Detecting C compile features\n-- Detecting C compile features - done\nCMake Error at CMakeLists.txt:3 (add_executabl):\n  Unknown CMake command \"add_executabl\".\n\n\n-- Configuring incomplete, errors occurred!\nSee also \"/tmp/probe/build/CMakeFiles/CMakeOutput.log\".\n",
    // pyright-error (1)
    "/tmp/probe/a.py\n  /tmp/probe/a.py:2:12 - error: Type \"int\" is not assignable to return type \"str\"\n  \u{a0}\u{a0}\"int\" is not assignable to \"str\" (reportReturnType)\n1 error, 0 warnings, 0 informations\n",
    // coverage-fail-under (2)
    "Name          Stmts   Miss  Cover\n---------------------------------\nmod.py            6      3    50%\ntest_mod.py       3      0   100%\n---------------------------------\nTOTAL             9      3    67%\nCoverage failure: total of 67 is less than fail-under=90\n",
    // prettier-check-fail (1)
    "Checking formatting...\n[warn] a.js\n[warn] Code style issues found in the above file. Run Prettier with --write to fix.\n",
    // prettier-syntax-error (2)
    "Checking formatting...\n[error] a.js: SyntaxError: Unexpected token, expected \",\" (2:10)\n[error]   1 | const x = {a: 1,\n[error] > 2 | function f() {}\n[error]     |          ^\n[error]   3 |\nError occurred when checking code style in the above file.\n",
    // oxlint-error (1)
    "\n  x eslint(no-debugger): `debugger` statement is not allowed\n   ,-[a.js:2:3]\n 1 | function f(a) {\n 2 |   debugger;\n   :   ^^^^^^^^^\n 3 |   return a;\n   `----\n  help: Remove the debugger statement\n\nFound 0 warnings and 1 error.\nFinished in 7ms on 1 file with 96 rules using 2 threads.\n",
    // biome-check-fail (1)
    "\n  × Formatter would have printed the following content:\n  \n    1   │ - const·x·=·{a:1,b:2}\n    2   │ - function·f(·){return·x}\n      1 │ + const·x·=·{·a:·1,·b:·2·};\n      2 │ + function·f()·{\n      3 │ + → return·x;\n      4 │ + }\n    3 5 │   \n  \n\nChecked 1 file in 3ms. No fixes applied.\nFound 1 error.\nFound 1 warning.\ncheck ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━\n\n  × Some errors were emitted while running checks.\n  \n\n",
    // biome-lint-error (1)
    "  \n  i Unsafe fix: Remove debugger statement\n  \n    1 1 │   function f(a) {\n    2   │ - ··debugger;\n    3 2 │     return a;\n    4 3 │   }\n  \n\nChecked 1 file in 3ms. No fixes applied.\nFound 1 error.\nlint ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━\n\n  × Some errors were emitted while running checks.\n  \n\n",
    // php-lint-error (255)
    "PHP Parse error:  syntax error, unexpected token \"echo\" in a.php on line 3\nErrors parsing a.php\n",
    // php 8.2 running a script: a parse error; a fatal error below output,
    // in the log's form (stderr) and on standard output (display_errors) (255)
    "PHP Parse error:  syntax error, unexpected token \"echo\" in /tmp/ox/e.php on line 4\n",
    "start\nPHP Fatal error:  Allowed memory size of 8388608 bytes exhausted (tried to allocate 20000768 bytes) in /tmp/ox/m.php on line 5\n",
    "start\n\nFatal error: Allowed memory size of 8388608 bytes exhausted (tried to allocate 20000768 bytes) in /tmp/ox/m.php on line 5\n",
    // mocha 12 (1): its list of failures below its counts, plainly and through tail -20
    "\n\n  codes\n    ✔ adds\n    1) parses the error code\n\n\n  1 passing (12ms)\n  1 failing\n\n  1) codes\n       parses the error code:\n\n      AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n\n42 !== 41\n\n      + expected - actual\n\n      -42\n      +41\n      \n      at Context.<anonymous> (test/a.spec.js:4:46)\n      at process.processImmediate (node:internal/timers:483:21)\n\n\n\n",
    "  1 passing (19ms)\n  1 failing\n\n  1) codes\n       parses the error code:\n\n      AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n\n42 !== 41\n\n      + expected - actual\n\n      -42\n      +41\n      \n      at Context.<anonymous> (test/a.spec.js:4:46)\n      at process.processImmediate (node:internal/timers:483:21)\n\n\n\n",
    // yamllint 1.38 (1): an error below a warning, in its standard and
    // parsable formats; three files, the last with an error alone
    "a.yaml\n  1:1       warning  missing document start \"---\"  (document-start)\n  4:4       error    syntax error: expected <block end>, but found '<block sequence start>' (syntax)\n\n",
    "a.yaml:1:1: [warning] missing document start \"---\" (document-start)\na.yaml:4:4: [error] syntax error: expected <block end>, but found '<block sequence start>' (syntax)\n",
    "d1.yaml\n  1:1       warning  missing document start \"---\"  (document-start)\n  2:1       error    duplication of key \"a\" in mapping  (key-duplicates)\n\nd2.yaml\n  1:1       warning  missing document start \"---\"  (document-start)\n  2:1       error    syntax error: expected ',' or ']', but got '<stream end>' (syntax)\n\nd3.yaml\n  2:6       error    trailing spaces  (trailing-spaces)\n\n",
    // ruff 0.17 format --check (1): one file, two of three files, --diff
    "unformatted: File would be reformatted\n --> a.py:1:7\n  |\n  - def f( a,b ):\n  -   return a+b\n1 + def f(a, b):\n2 +     return a + b\n  |\n\n1 file would be reformatted\n",
    "unformatted: File would be reformatted\n --> c.py:1:2\n  |\n  - y=2\n1 + y = 2\n  |\n\n2 files would be reformatted, 1 file already formatted\n",
    "+    return a + b\n\n1 file would be reformatted\n",
    // unzip 6.0 bad.zip, unzip -l e.zip of a file that is no zip (9)
    "Archive:  bad.zip\n  End-of-central-directory signature not found.  Either this file is not\n  a zipfile, or it constitutes one disk of a multi-part archive.  In the\n  latter case the central directory and zipfile comment will be found on\n  the last disk(s) of this archive.\nunzip:  cannot find zipfile directory in one of bad.zip or\n        bad.zip.zip, and cannot find bad.zip.ZIP, period.\n",
    "Archive:  e.zip\n  End-of-central-directory signature not found.  Either this file is not\n  a zipfile, or it constitutes one disk of a multi-part archive.  In the\n  latter case the central directory and zipfile comment will be found on\n  the last disk(s) of this archive.\nunzip:  cannot find zipfile directory in one of e.zip or\n        e.zip.zip, and cannot find e.zip.ZIP, period.\n",
    // mocha 12 (2): a pending test, two failures
    "\n\n  api\n    ✔ lists users\n    - pending one\n    1) rejects bad input\n    2) counts\n\n\n  1 passing (16ms)\n  1 pending\n  2 failing\n\n  1) api\n       rejects bad input:\n     TypeError: bad input\n      at Context.<anonymous> (test/a.spec.js:5:41)\n      at process.processImmediate (node:internal/timers:483:21)\n\n  2) api\n       counts:\n\n      AssertionError [ERR_ASSERTION]: Expected values to be strictly deep-equal:\n+ actual - expected\n\n  [\n    1,\n+   2\n-   3\n  ]\n      + expected - actual\n\n       [\n         1\n      -  2\n      +  3\n       ]\n      \n      at Context.<anonymous> (test/a.spec.js:6:31)\n      at process.processImmediate (node:internal/timers:483:21)\n\n\n\n",
    // ruff 0.17 check (1): its count above its advice on fixes; with
    // --fix, errors left; the concise format
    "F401 [*] `os` imported but unused\n --> a.py:1:8\n  |\n1 | import os\n  |        ^^\nhelp: Remove unused import: `os`\n  |\n  - import os\n1 |\n  |\n\nFound 1 error.\n[*] 1 fixable with `--fix`.\n",
    "note: This is an unsafe fix and may change runtime behavior\n\nFound 3 errors (2 fixed, 1 remaining).\n1 unsafe fix available with `--fix --unsafe-fixes`.\n",
    "a.py:1:8: F401 [*] `os` imported but unused\na.py:2:8: F401 [*] `sys` imported but unused\na.py:6:5: F841 Local variable `x` is assigned to but never used\nFound 3 errors.\n[*] 2 fixable with `--fix` (1 unsafe fix available with `--fix --unsafe-fixes`).\n",
    // black 26 --check (1), and a source it cannot parse (123)
    "would reformat a.py\n\nOh no! \u{1f4a5} \u{1f494} \u{1f4a5}\n1 file would be reformatted.\n",
    "would reformat b.py\nerror: cannot parse: c.py:1:6\n    def f(:\n         ^\nParseError: bad input\n\nOh no! \u{1f4a5} \u{1f494} \u{1f4a5}\n1 file would be reformatted, 1 file would be left unchanged, 1 file would fail to reformat.\n",
    // pip 23 install of a package no index has (1)
    "Looking in indexes: http://127.0.0.1:9/simple\nLooking in links: /opt/wheels\nERROR: Could not find a version that satisfies the requirement no-such-package-xyz (from versions: none)\nERROR: No matching distribution found for no-such-package-xyz\n",
    // curl 7.88 to a closed port below its progress meter (7)
    "  % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current\n                                 Dload  Upload   Total   Spent    Left  Speed\n\r  0     0    0     0    0     0      0      0 --:--:-- --:--:-- --:--:--     0\r  0     0    0     0    0     0      0      0 --:--:-- --:--:-- --:--:--     0\ncurl: (7) Failed to connect to 127.0.0.1 port 9 after 0 ms: Couldn't connect to server\n",
    // perl 5.36: a syntax error (255), a missing module below a line
    // (`echo running checks; perl -e 'use No::Such::Mod;'`, 2)
    "syntax error at a.pl line 3, near \"my \"\nExecution of a.pl aborted due to compilation errors.\n",
    "running checks\nCan't locate No/Such/Mod.pm in @INC (you may need to install the No::Such::Mod module) (@INC contains: /etc/perl /usr/local/lib/x86_64-linux-gnu/perl/5.36.0 /usr/local/share/perl/5.36.0 /usr/lib/x86_64-linux-gnu/perl5/5.36 /usr/share/perl5 /usr/lib/x86_64-linux-gnu/perl-base /usr/lib/x86_64-linux-gnu/perl/5.36 /usr/share/perl/5.36 /usr/local/lib/site_perl) at -e line 1.\nBEGIN failed--compilation aborted at -e line 1.\n",
    // tox 4.67 (3): an environment whose command failed
    "py: commands[0]> python -c 'print('\"'\"'running'\"'\"'); raise SystemExit(3)'\nrunning\npy: exit 3 (0.05 seconds) /tmp/probe> python -c 'print('\"'\"'running'\"'\"'); raise SystemExit(3)' pid=20711\n  py: FAIL code 3 (2.01=setup[1.96]+cmd[0.05] seconds)\n  evaluation failed :( (2.21 seconds)\n",
    // nox 2026.10 (1): a session whose command failed
    "nox > Running session tests\nnox > uv binary not found.\nnox > python3 -c 'print('\"'\"'running'\"'\"'); raise SystemExit(2)'\nrunning\nnox > Command python3 -c 'print('\"'\"'running'\"'\"'); raise SystemExit(2)' failed with exit code 2\nnox > Session tests failed.\n",
    // sphinx-build 9.0 -W on a warning (1), through tail -20
    "copying assets: done\nwriting output... [100%] index\n\ngenerating indices... genindex done\nwriting additional pages... search done\ndumping search index in English (code: en)... done\ndumping object inventory... done\nbuild finished with problems, 1 warning (with warnings treated as errors).\n",
    // mkdocs 1.6 build --strict on a warning (1)
    "INFO    -  Cleaning site directory\nINFO    -  Building documentation to directory: /tmp/probe/site\nWARNING -  A reference to 'nothere.md' is included in the 'nav' configuration, which is not found in the documentation files.\n\nAborted with 1 warnings in strict mode!\n",
    // xmllint 2.9.14 --schema of two files, the second rejected (3)
    "ok.xml validates\na.xml:3: element entry: Schemas validity error : Element 'entry': The attribute 'level' is required but missing.\na.xml:4: element failure: Schemas validity error : Element 'failure': This element is not expected. Expected is ( entry ).\na.xml fails to validate\n",
    // openssl 3.0 verify of a self-signed certificate (2)
    "CN = error-reports.example\nerror 18 at 0 depth lookup: self-signed certificate\nerror c.pem: verification failed\n",
    // gpg 2.2 --verify of a file changed since it was signed (1)
    "gpg: Signature made Wed Dec  2 11:01:36 2026 UTC\ngpg:                using EDDSA key 15A9027837452744D834B5D457990F3789D2B854\ngpg: checking the trustdb\ngpg: marginals needed: 3  completes needed: 1  trust model: pgp\ngpg: depth: 0  valid:   1  signed:   0  trust: 0-, 0q, 0n, 0m, 0f, 1u\ngpg: BAD signature from \"Probe <probe@example.com>\" [ultimate]\n",
    // rsync 3.5 -a of a missing source (23)
    "rsync: [sender] change_dir \"/tmp/probe/nothere\" failed: No such file or directory (2)\nrsync error: some files/attrs were not transferred (see previous errors) (code 23) at main.c(1394) [sender=3.5.0]\n",
    // GNU find 4.9 of a folder and a missing one (1)
    "src/a.py\nfind: \u{2018}nothere\u{2019}: No such file or directory\n",
    // htmlhint 1.9 (1): its findings, coloured whatever the terminal, then
    // its count
    "\n   /tmp/probe/a.html\n\u{1b}[37m      L5 |\u{1b}[90m<div><span>error</div>\u{1b}[39m\n\u{1b}[37m               ^ \u{1b}[31mTag must be paired, missing: [ </span> ], start tag match failed [ <span> ] on line 5. (tag-pair)\u{1b}[39m\n\nScanned 1 files, found 2 errors in 1 files (12 ms)\n",
    // escript of a script it cannot compile (127)
    "a.erl:4:5: syntax error before: ok\nescript: There were compilation errors.\n",
];

/// Outputs of commands that succeeded (exit status 0) and mention
/// failures, errors or the programs' failure forms.
const SUCCEEDED: &[&str] = &[
    // cargo build with a warning; cargo test
    "   Compiling app v0.1.0 (/tmp/probe/app)\nwarning: unused variable: `unused`\n --> src/main.rs:2:9\n  |\n2 |     let unused = 1;\n  |         ^^^^^^ help: if this is intentional, prefix it with an underscore: `_unused`\n  |\n  = note: `#[warn(unused_variables)]` (part of `#[warn(unused)]`) on by default\n\nwarning: `app` (bin \"app\") generated 1 warning (run `cargo fix --bin \"app\" -p app` to apply 1 suggestion)\n    Finished `dev` profile [unoptimized + debuginfo] target(s) in 0.22s\n",
    "running 1 test\ntest tests::adds ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\n",
    "warning: unused variable: `unused`\n --> w.rs:2:9\n\nwarning: 1 warning emitted\n\nok\n",
    // pytest: passed, xfailed, skipped
    "test_m.py ..                                                             [100%]\n\n============================== 2 passed in 0.01s ===============================\n",
    ".xs                                                                      [100%]\n1 passed, 1 skipped, 1 xfailed in 0.02s\n",
    "=================== 1 passed, 1 skipped, 1 xfailed in 0.02s ====================\n",
    // unittest with an expected failure
    "x.\n----------------------------------------------------------------------\nRan 2 tests in 0.001s\n\nOK (expected failures=1)\n",
    // make: an ignored error, a success
    "false\nmake: [Makefile:2: all] Error 1 (ignored)\ndone anyway\n",
    "make: Nothing to be done for 'all'.\n",
    // npm: a script printing a zero count, an install with nothing to do
    "\n> probe@1.0.0 ok\n> node -e \"console.log('0 failed, 3 passed')\"\n\n0 failed, 3 passed\n",
    "\nup to date in 530ms\n",
    // argparse's and click's help (usage without an error)
    "usage: deploy.py [-h] [--env {staging,prod}] target\n\nDeploy a build.\n\npositional arguments:\n  target                where to deploy\n\noptions:\n  -h, --help            show this help message and exit\n  --env {staging,prod}\n",
    "Usage: c.py [OPTIONS] NAME\n\n  Greet NAME.\n\nOptions:\n  --count INTEGER  how many greetings\n  --help           Show this message and exit.\n",
    // mypy without an error; with errors, mypy's first line is a
    // diagnostic (`error_label`), its closing `Found 2 errors in 1 file
    // (checked 2 source files)` is not needed
    "Success: no issues found in 1 source file\n",
    // a table of counts under a count of zero
    "Found 0 errors in 2 files.\n\nErrors  Files\n     0  a.ts\n",
    // a script that reports per-file errors, then its result
    "a.csv: error: bad header, skipped\nb.csv: error: bad header, skipped\nimported 40 rows\n",
    // the same closing words in search hits, quoted or indented
    "src/Makefile.txt:1:# make: *** [all] Error 1 means a recipe failed\nsrc/build.py:1:log(\"error: could not compile\")\nsrc/build.py:3:    print(\"=== 1 failed in 0.1s ===\")\n",
    "    echo \"error: could not compile\"\n",
    "def test_summary():\n    assert summary == \"1 failed, 3 passed in 0.02s\"\n",
    // counts of zero
    "lint: 0 errors, 0 failed\ndone\n",
    "0 errors\n",
    "running checks...\n12 passed, 0 failed\n",
    // a program's report of a missing module (0); names like python's
    "yaml: No module named 'no_such_yaml_here'\n",
    "python-dateutil: No module named dateutil\npython3.11x: can't open file 'a'\n",
    // jest, vitest and node --test, all passed (tests named after errors)
    "PASS ./a.test.js\n  \u{2713} throws on bad input (8 ms)\n  \u{2713} error handling: 0 failed (1 ms)\n\nTest Suites: 1 passed, 1 total\nTests:       2 passed, 2 total\nSnapshots:   0 total\nTime:        0.79 s\nRan all test suites matching a.test.js.\n",
    "\n RUN  v4.1.12 /tmp/probe\n\n \u{2713} a.test.mjs (2 tests) 5ms\n\n Test Files  1 passed (1)\n      Tests  2 passed (2)\n   Start at  05:03:39\n   Duration  358ms (transform 21ms, setup 0ms, import 35ms, tests 5ms, environment 0ms)\n\n",
    "# Subtest: error handling\nok 2 - error handling\n  ---\n  duration_ms: 0.323437\n  ...\n1..2\n# tests 2\n# suites 0\n# pass 2\n# fail 0\n# cancelled 0\n# skipped 0\n# todo 0\n# duration_ms 193.082324\n",
    // ruff with nothing found, or every error fixed; black formatting,
    // `--check` of a formatted file, `--diff` (which exits 0)
    "All checks passed!\n",
    "Found 1 error (1 fixed, 0 remaining).\n",
    "All done! \u{2728} \u{1f370} \u{2728}\n1 file would be left unchanged.\n",
    "-  return a+b\n+def f(a, b):\n+    return a + b\nwould reformat b.py\n\nAll done! \u{2728} \u{1f370} \u{2728}\n1 file would be reformatted.\n",
    "reformatted b2.py\n\nAll done! \u{2728} \u{1f370} \u{2728}\n1 file reformatted.\n",
    // a report line of black's shape below another line
    "Oh no! \u{1f4a5}\n1 file would be reformatted.\n",
    // a perl program's own words (`warn`, a count); curl's error in
    // search hits of several files
    "warning: 3 records skipped\nerror count: 0\n",
    "ci/deploy.log:3:curl: (7) Failed to connect to 127.0.0.1 port 9 after 0 ms: Couldn't connect to server\nci/retry.log:9:curl: (28) Operation timed out after 5000 milliseconds\n",
    // a git push that worked
    "To ../remote.git\n * [new branch]      HEAD -> main\n", // prettier-check-ok (0)
    "Checking formatting...\nAll matched files use Prettier code style!\n",
    // pyright-ok (0)
    "0 errors, 0 warnings, 0 informations\n",
    // oxlint-ok (0)
    "Found 0 warnings and 0 errors.\nFinished in 8ms on 1 file with 96 rules using 2 threads.\n",
    // oxlint-warnings-ok (0)
    "\n  ! eslint(no-debugger): `debugger` statement is not allowed\n   ,-[a.js:2:3]\n 1 | function f(a) {\n 2 |   debugger;\n   :   ^^^^^^^^^\n 3 |   return a;\n   `----\n  help: Remove the debugger statement\n\nFound 1 warning and 0 errors.\nFinished in 6ms on 1 file with 96 rules using 2 threads.\n",
    // coverage-ok (0)
    "Name          Stmts   Miss  Cover\n---------------------------------\nmod.py            6      3    50%\ntest_mod.py       3      0   100%\n---------------------------------\nTOTAL             9      3    67%\n",
    // cmake-warning-ok (0)
    "CMake Warning at CMakeLists.txt:3 (message):\n  option FAST is deprecated\n\n\n-- Configuring done\n-- Generating done\n-- Build files have been written to: /tmp/probe/build\n",
    // biome-lint-warning-ok (0)
    "    3 │   return a;\n    4 │ }\n  \n  i A debugger statement pauses the program when a debugger is open. It is meant for debugging only, and it should not be left in code that is shipped.\n  \n  i Unsafe fix: Remove debugger statement\n  \n    1 1 │   function f(a) {\n    2   │ - ··debugger;\n    3 2 │     return a;\n    4 3 │   }\n  \n\nChecked 1 file in 2ms. No fixes applied.\nFound 1 warning.\n",
    // biome-check-ok (0)
    "Checked 1 file in 3ms. No fixes applied.\n",
    // php-warning-ok (0)
    "PHP Warning:  Undefined variable $undefined in /tmp/probe/a.php on line 2\ndone: 0 failed\n",
    // php-lint-ok (0)
    "No syntax errors detected in a.php\n",
    // tar-ok-error-names (0)
    "logs/\nlogs/failed-jobs.txt\nlogs/error.log\n",
    // php 8.2: a warning as the last line (the script went on and exited 0)
    "done\nPHP Warning:  Undefined array key \"k\" in /tmp/ox/w.php on line 4\n",
    // mocha-pass (0)
    "\n\n  error handling\n    ✔ throws on bad input\n    ✔ reports 0 failed\n\n\n  2 passing (5ms)\n\n",
    // unzip -o logs.zip (0); a sentence ending so below another line
    "Archive:  logs.zip\n   creating: logs/\n extracting: logs/error.log          \n",
    "notes\n    it cannot find the key, period.\n",
    // ruff 0.17 format: --check of a formatted file, a run that
    // reformatted (0); black --diff's report (0)
    "1 file already formatted\n",
    "2 files reformatted, 1 file left unchanged\n",
    "would reformat a.py\nAll done! \u{2728} \u{1f370} \u{2728}\n1 file would be reformatted, 2 files would be left unchanged.\n",
    // yamllint 1.38, warnings alone (0); its lines without a file's name
    "a.yaml\n  1:1       warning  missing document start \"---\"  (document-start)\n\n",
    "a.yaml:1:1: [warning] missing document start \"---\" (document-start)\n",
    "  4:4       error    syntax error (syntax)\n",
    // a Node trace below a log's line that counts failing checks
    "checks: 3 passing (2 skipped)\n  1 failing\nretrying\n    at retry (lib/r.js:3:9)\n",
    "  2 passing (5ms)\n  1 failing\n\nsee report.txt\n      at main (a.js:1:1)\n",
    // tar's and prettier's words in other programs' lines
    "tar: a.tar: Cannot open: No such file or directory (retrying with b.tar)\nextracted 3 files\n",
    "[warn] Code style issues found in the above file. Run Prettier with --write to fix.\nFormatted 1 file with --write.\n",
    // tox-ok, nox-ok (0): every environment or session passed, printing
    // zero counts
    "py: commands[0]> python -c 'print('\"'\"'0 failed, 0 errors'\"'\"')'\n0 failed, 0 errors\n  py: OK (2.91=setup[2.83]+cmd[0.09] seconds)\n  congratulations :) (3.06 seconds)\n",
    "nox > Running session tests\nnox > uv binary not found.\nnox > python3 -c 'print('\"'\"'Error: none; 0 failed'\"'\"')'\nError: none; 0 failed\nnox > Session tests was successful.\n",
    // sphinx-build-warning-ok, mkdocs-warning-ok (0): the warning without
    // -W or --strict
    "dumping search index in English (code: en)... done\ndumping object inventory... done\nbuild succeeded, 1 warning.\n\nThe HTML pages are in _build.\n",
    "INFO    -  Cleaning site directory\nINFO    -  Building documentation to directory: /tmp/probe/site\nWARNING -  A reference to 'nothere.md' is included in the 'nav' configuration, which is not found in the documentation files.\nINFO    -  Documentation built in 0.30 seconds\n",
    // xmllint-schema-ok, openssl-subject-ok, gpg-verify-ok (0)
    "a.xml validates\n",
    "subject=CN = error-reports.example\n",
    "gpg: Signature made Wed Dec  2 11:01:37 2026 UTC\ngpg:                using EDDSA key 72B71CDC1E9CF57C8BA257AD56310C1AA3877642\ngpg: checking the trustdb\ngpg: marginals needed: 3  completes needed: 1  trust model: pgp\ngpg: depth: 0  valid:   1  signed:   0  trust: 0-, 0q, 0n, 0m, 0f, 1u\ngpg: Good signature from \"Probe <probe@example.com>\" [ultimate]\n",
    // rsync-ok-error-names, find-ok-error-names (0)
    "sending incremental file list\ncreated directory backup\n./\nerror.log\nfailed-jobs.txt\n\nsent 198 bytes  received 86 bytes  568.00 bytes/sec\ntotal size is 4  speedup is 0.01\n",
    "./logs/failed.txt\n./logs/error.log\n",
    // the words in a sentence or a file's name
    "the report explains why config.xml fails to validate\n",
    "find: searched 3 folders, 0 missing\n",
    // htmlhint-ok (0)
    "\nScanned 1 files, no errors found (50 ms).\n",
];

#[test]
fn failure_summaries() {
    let d = Detector::default();
    for text in FAILED {
        assert_eq!(
            d.explain(text),
            Some("failure_summary"),
            "should fire failure_summary: {text:?}"
        );
    }
    for text in SUCCEEDED {
        assert_eq!(d.explain(text), None, "should not fire: {text:?}");
    }
}

/// Task runners' reports (`runners.rs`): a failed step above or below
/// steps that passed. pre-commit's report is read from its first line
/// too, so output below it does not hide the failed hook.
const RUNNERS_FAILED: &[&str] = &[
    // pre-commit 4.7 run --all-files (1): a hook that failed above one
    // that passed; the failed hook last, its output ending the report
    "no TODO markers..........................................................Failed\n- hook id: no-todo\n- exit code: 1\n\na.py:1:# TODO remove\n\nno tabs in yaml..........................................................Passed\n",
    "no tabs in yaml..........................................................Passed\nno TODO markers..........................................................Failed\n- hook id: no-todo\n- exit code: 1\n\na.py:1:# TODO remove\n",
    // ansible-playbook 2.19 of a failing task (2), through tail -20
    "\nPLAY [localhost] ***************************************************************\n\nTASK [check the service] *******************************************************\n[ERROR]: Task failed: Module failed: non-zero return code\nOrigin: /tmp/probe/p.yml:4:7\n\n2   gather_facts: false\n3   tasks:\n4     - name: check the service\n        ^ column 7\n\nfatal: [localhost]: FAILED! => {\"changed\": true, \"cmd\": [\"/bin/false\"], \"msg\": \"non-zero return code\", \"rc\": 1}\n\nPLAY RECAP *********************************************************************\nlocalhost                  : ok=0    changed=0    unreachable=0    failed=1    skipped=0    rescued=0    ignored=0   \n\n",
];

/// Their reports of runs that passed, and a dotted status in another
/// program's log.
const RUNNERS_SUCCEEDED: &[&str] = &[
    // pre-commit-ok (0); a step's dotted status in another program's log
    "no TODO markers..........................................................Passed\nno tabs in yaml..........................................................Passed\n",
    "step one.............Passed\nstep two.............Failed\nretrying\nstep two.............Passed\n",
    // ansible-ignored-error-ok (0): the task's error ignored
    "TASK [check the service] *******************************************************\n[ERROR]: Task failed: Module failed: non-zero return code\nOrigin: /tmp/probe/p.yml:4:7\n\n2   gather_facts: false\n3   tasks:\n4     - name: check the service\n        ^ column 7\n\nfatal: [localhost]: FAILED! => {\"changed\": true, \"cmd\": [\"/bin/false\"], \"delta\": \"0:00:00.013376\", \"end\": \"2026-12-02 11:01:07.893498\", \"msg\": \"non-zero return code\", \"rc\": 1, \"start\": \"2026-12-02 11:01:07.880122\", \"stderr\": \"\", \"stderr_lines\": [], \"stdout\": \"\", \"stdout_lines\": []}\n...ignoring\n\nTASK [report] ******************************************************************\nok: [localhost] => {\n    \"msg\": \"errors handled, 0 failed\"\n}\n\nPLAY RECAP *********************************************************************\nlocalhost                  : ok=2    changed=1    unreachable=0    failed=0    skipped=0    rescued=0    ignored=1   \n\n",
];

#[test]
fn task_runners_reports() {
    let d = Detector::default();
    for text in RUNNERS_FAILED {
        assert_eq!(
            d.explain(text),
            Some("failure_summary"),
            "should fire failure_summary: {text:?}"
        );
    }
    for text in RUNNERS_SUCCEEDED {
        assert_eq!(d.explain(text), None, "should not fire: {text:?}");
    }
}

#[test]
fn a_prog_error_needs_its_usage_line() {
    let d = Detector::default();
    // argparse's error without argparse's usage line is some program's
    // report of one item (it went on; its last line is the error only by
    // chance here).
    assert_eq!(
        d.explain("imported 3 rows\nb.csv: error: bad header\n"),
        None
    );
    // the usage line of another program
    assert_eq!(
        d.explain("usage: other [-h]\ndeploy.py: error: the following arguments are required: x\n"),
        None
    );
    // a subcommand's prog has a space
    assert_eq!(
        d.explain(
            "usage: tool deploy [-h] target\ntool deploy: error: the following arguments are required: target\n"
        ),
        Some("failure_summary")
    );
    // a prog whose name opens like another closing line
    assert_eq!(
        d.explain("usage: make.py [-h] target\nmake.py: error: the following arguments are required: target\n"),
        Some("failure_summary")
    );
    // click's `Error:` needs its `Try … --help` line
    assert_eq!(d.explain("done\nError: Missing argument 'NAME'.\n"), None);
    assert_eq!(
        d.explain("Usage: c [OPTIONS]\nTry \"c --help\" for help.\n\nError: No such option: --x\n"),
        Some("failure_summary")
    );
}

/// The package managers' words for a failed script, as their sources
/// print them: npm 10's lifecycle error (npm 11 prints it only for a
/// workspace: a single package's failed script is silent), with npm's
/// update banner below; pnpm's code between (thin) spaces; yarn 1's, with
/// its pointer to the documentation below.
#[test]
fn package_managers_failed_scripts() {
    let d = Detector::default();
    for text in [
        "\n> app@1.0.0 check\n> npm run lint\n\n✖ 35 problems (30 errors, 5 warnings)\n\nnpm error Lifecycle script `check` failed with error:\nnpm error code 1\nnpm error command failed\nnpm error command sh -c npm run lint\nnpm notice\nnpm notice New major version of npm available! 10.9.3 -> 11.6.0\nnpm notice Changelog: https://github.com/npm/cli/releases/tag/v11.6.0\nnpm notice To update run: npm install -g npm@11.6.0\nnpm notice\n",
        "\n> web@0.1.0 build /app\n> next build\n\nType error: x\n ELIFECYCLE  Command failed with exit code 1.\n",
        "src/a.ts: raw <div> layout\nELIFECYCLE  Command failed with exit code 2.\n",
        "explain:check failed\n ELIFECYCLE  Command failed with exit code 1.\n WARN   Local package.json exists, but node_modules missing, did you mean to install?\n",
        "building\n\u{2009}ELIFECYCLE\u{2009} Command failed with exit code 1.",
        "building\n\x1b[41m\x1b[30m ELIFECYCLE \x1b[39m\x1b[49m \x1b[31mCommand failed with exit code 1.\x1b[39m\n",
        "building\n ERR_PNPM_RECURSIVE_RUN_FIRST_FAIL  web@0.0.1 build: `vite build`\n",
        "Ran all test suites.\nerror Command failed with exit code 1.\ninfo Visit https://yarnpkg.com/en/docs/cli/run for documentation about this command.\n",
    ] {
        assert_eq!(d.explain(text), Some("failure_summary"), "{text:?}");
    }
    for text in [
        // an install that worked, then npm's update banner
        "\nadded 1 package in 1s\nnpm notice\nnpm notice New major version of npm available! 10.9.3 -> 11.6.0\nnpm notice To update run: npm install -g npm@11.6.0\nnpm notice\n",
        // pnpm and yarn that worked; a status of 0 is no failure
        "\n> web@0.1.0 build /app\n> next build\n\n ✓ Compiled successfully\n",
        "$ jest\nTests: 3 passed\nDone in 1.52s.\n",
        "building\n ELIFECYCLE  Command failed with exit code 0.\n",
        "building\nELIFECYCLEX Command failed with exit code 1.\n",
        "building\n ERR_PNPM_\n",
        "building\nerror Command failed with exit code 0.\n",
        // a script that ends with a warning of pnpm's is not the failure
        "done\n WARN  deprecated glob@7.2.3\n",
    ] {
        assert_eq!(d.explain(text), None, "{text:?}");
    }
}

/// Compilers that print no closing line (gcc): an error diagnostic below
/// the first three lines, with only the compiler's report below it.
#[test]
fn a_compiler_error_among_warnings() {
    let d = Detector::default();
    for text in [
        // gcc -Wall -c b.c a.c (1): b.c's warning, a.c's error, a.c's warnings
        "b.c: In function ‘f’:\nb.c:1:20: warning: unused variable ‘unused’ [-Wunused-variable]\n    1 | int f(int x) { int unused; return x; }\n      |                    ^~~~~~\na.c: In function ‘main’:\na.c:2:12: error: ‘undefined_name’ undeclared (first use in this function)\n    2 |     return undefined_name;\n      |            ^~~~~~~~~~~~~~\na.c:2:12: note: each undeclared identifier is reported only once for each function it appears in\na.c: In function ‘g’:\na.c:5:20: warning: unused variable ‘also_unused’ [-Wunused-variable]\n    5 | int g(int y) { int also_unused; return y; }\n      |                    ^~~~~~~~~~~\na.c: At top level:\na.c:4:12: warning: ‘unused’ defined but not used [-Wunused-function]\n    4 | static int unused(void) { return 0; }\n      |            ^~~~~~\n",
        // gcc -Wall -o prog main.c (1): warnings, then the error and its note
        "main.c: In function ‘f’:\nmain.c:2:20: warning: unused variable ‘unused’ [-Wunused-variable]\n    2 | int f(int x) { int unused; return x; }\n      |                    ^~~~~~\nmain.c: In function ‘g’:\nmain.c:3:20: warning: unused variable ‘also_unused’ [-Wunused-variable]\n    3 | int g(int y) { int also_unused; return y; }\n      |                    ^~~~~~~~~~~\nmain.c: In function ‘main’:\nmain.c:6:12: error: ‘undefined_name’ undeclared (first use in this function)\n    6 |     return undefined_name;\n      |            ^~~~~~~~~~~~~~\nmain.c:6:12: note: each undeclared identifier is reported only once for each function it appears in\n",
        // tsc (not on a terminal) run by `npm run` (npm 11 adds nothing)
        "\n> app@1.0.0 typecheck\n> tsc --noEmit\n\nsrc/a.ts(3,5): error TS2322: Type 'string' is not assignable to type 'number'.\nsrc/b.ts(1,7): error TS2304: Cannot find name 'x'.\n",
        // clang's count of warnings and errors; -Werror's line; colours
        "building lib\ncompiling util.c\ncompiling main.c\nmain.c:1:20: warning: unused variable 'u' [-Wunused-variable]\n    1 | int f(int x) { int u; return x; }\n      |                    ^\nmain.c:3:12: error: use of undeclared identifier 'y'\n    3 |     return y;\n      |            ^\n1 warning and 1 error generated.\n",
        "building lib\ncompiling util.c\ncompiling main.c\nb.c: In function ‘f’:\nb.c:1:20: error: unused variable ‘unused’ [-Werror=unused-variable]\n    1 | int f(int x) { int unused; return x; }\n      |                    ^~~~~~\ncc1: all warnings being treated as errors\n",
        "a\nb\nc\n\x1b[01m\x1b[Kmain.c:6:12:\x1b[m\x1b[K \x1b[01;31m\x1b[Kerror: \x1b[m\x1b[K‘x’ undeclared\n    6 |     return x;\n",
    ] {
        assert_eq!(d.explain(text), Some("failure_summary"), "{text:?}");
    }
    for text in [
        // gcc -Wall -c c.c b.c (0): warnings only
        "c.c: In function ‘h’:\nc.c:1:36: warning: unused variable ‘u3’ [-Wunused-variable]\n    1 | int h(int x) { int u1; int u2; int u3; return x; }\n      |                                    ^~\nc.c:1:28: warning: unused variable ‘u2’ [-Wunused-variable]\n    1 | int h(int x) { int u1; int u2; int u3; return x; }\n      |                            ^~\nc.c:1:20: warning: unused variable ‘u1’ [-Wunused-variable]\n    1 | int h(int x) { int u1; int u2; int u3; return x; }\n      |                    ^~\nb.c: In function ‘f’:\nb.c:1:20: warning: unused variable ‘unused’ [-Wunused-variable]\n    1 | int f(int x) { int unused; return x; }\n      |                    ^~~~~~\n",
        // a search of build logs: each hit is `log:line:`, then the text
        "x\ny\nz\nbuild.log:3:main.c:6:12: error: ‘x’ undeclared\nbuild.log:9:main.c:9:5: warning: unused\n",
        // the error, then the command went on (a fallback that worked)
        "a\nb\nc\nmain.c:6:12: error: ‘x’ undeclared\n    6 |     return x;\nfalling back to the bundled build\nbuilt 3 targets\n",
        // cargo built on after a build script's probe failed
        "   Compiling sys v0.1.0\nwarning: sys@0.1.0: probing for zstd\nx\ny\nprobe.c:1:10: fatal error: zstd.h: No such file or directory\n    1 | #include <zstd.h>\n      |          ^~~~~~~~\n    Finished `dev` profile [unoptimized + debuginfo] target(s) in 2.1s\n",
        // no source file's path: a program's own numbered messages
        "import started\nrow 1 ok\nrow 2 ok\nrows:12:3: error: bad date, skipped\n",
        // indented (quoted, a file's text)
        "x\ny\nz\n    main.c:6:12: error: ‘x’ undeclared\n",
    ] {
        assert_eq!(d.explain(text), None, "{text:?}");
    }
    // Only the end of a long output is read.
    let error = "a\nb\nc\nmain.c:6:12: error: ‘x’ undeclared\n";
    let excerpt = "    6 |     return x;\n".repeat(super::compiler::REPORT_TAIL_BYTES / 20);
    assert_eq!(d.explain(&format!("{error}{excerpt}")), None);
    let few = "    6 |     return x;\n".repeat(32);
    assert_eq!(d.explain(&format!("{error}{few}")), Some("failure_summary"));
    // A file's text is no excerpt: too many indented lines in a row.
    let file = "    6 |     return x;\n".repeat(33);
    assert_eq!(d.explain(&format!("{error}{file}")), None);
    let notes = "a.c:1:1: note: x\n    1 | y\n      | ^\n".repeat(40);
    assert_eq!(
        d.explain(&format!("{error}{notes}")),
        Some("failure_summary")
    );
}

#[test]
fn a_client_stated_success_vetoes_a_summary() {
    let d = Detector::default();
    let text = "Exit code: 0\nWall time: 0.4 seconds\nOutput:\nerror: could not compile `app` (bin \"app\") due to 1 previous error\n";
    assert_eq!(d.explain(text), None);
    let text = "FAILED (failures=1)\n[The command completed with exit code 0.]";
    assert_eq!(d.explain(text), None);
}

#[test]
fn only_the_tail_is_read() {
    let d = Detector::default();
    let closing = "make: *** [Makefile:3: all] Error 1\n";
    // Colour codes do not hide it.
    assert_eq!(
        d.explain("\x1b[31m1 failed\x1b[0m, 3 passed in 0.02s\n"),
        Some("failure_summary")
    );
    // The closing line, then more output than the window: not read.
    let after = "compiling module\n".repeat(SUMMARY_TAIL_BYTES / 17 + 1);
    assert_eq!(d.explain(&format!("{closing}{after}")), None);
    // A line the window cuts is not read from its middle.
    let long = format!("{}{}", "x".repeat(SUMMARY_TAIL_BYTES), closing);
    assert_eq!(d.explain(&long), None);
    // A closing line is short: a longer last line is not read as one.
    let long_line = format!("done\nerror: could not compile `app` {}\n", "x".repeat(600));
    assert_eq!(d.explain(&long_line), None);
    // More advice lines than are skipped: the advice is the last word.
    let hints = "hint: see the docs\n".repeat(17);
    assert_eq!(
        d.explain(&format!(
            "To ../r.git\n ! [rejected]        HEAD -> main (fetch first)\nerror: failed to push some refs to 'r'\n{hints}"
        )),
        None
    );
    // The rule can be turned off.
    let off = Detector::new(&super::DetectorConfig {
        disable: vec!["failure_summary".into()],
        ..Default::default()
    })
    .expect("valid");
    assert_eq!(off.explain(closing), None);
}

proptest! {
    /// Any tail (advice lines, indented lines, colour codes, a window cut
    /// inside a multi-byte character) is read without a panic.
    #[test]
    fn no_tail_panics(
        parts in proptest::collection::vec(
            prop_oneof![
                "\\PC{0,40}".prop_map(|s| s),
                Just("\n".to_owned()),
                Just("hint: x\n".to_owned()),
                Just("    `-p a --lib`\n".to_owned()),
                Just("\x1b[31m".to_owned()),
                Just("é€😀".to_owned()),
                Just("usage: p [-h]\np: error: x\n".to_owned()),
                Just(" ELIFECYCLE ".to_owned()),
                Just("\u{2009}".to_owned()),
                Just(" ERR_PNPM_".to_owned()),
                Just("Command failed with exit code 1.".to_owned()),
                Just("npm notice x\n".to_owned()),
                Just("main.c:6:12: error: x\n".to_owned()),
                Just("a.c: In function ‘f’:\n".to_owned()),
                Just("    6 |     return x;\n".to_owned()),
                Just("C:\\src\\a.cs(3,5): error CS1002: x\n".to_owned()),
            ],
            0..200,
        )
    ) {
        let _ = Detector::default().explain(&parts.concat());
    }

    /// Any output (lines of ordinary text) followed by a closing line is a
    /// failure, whatever rule finds it first.
    #[test]
    fn output_then_a_closing_line_fails(
        lines in proptest::collection::vec("[a-zA-Z0-9 .,:/_-]{0,60}", 0..40),
        i in 0..FAILED.len(),
    ) {
        let text = format!("{}\n{}", lines.join("\n"), FAILED[i]);
        prop_assert!(Detector::default().is_failure(&text), "{text:?}");
    }

    /// A compiler's error diagnostic with any of its report's lines below
    /// it is a failure; with a line of ordinary output below them (the
    /// command went on), it is not `failure_summary`'s.
    #[test]
    fn a_compiler_report_holding_an_error(
        lines in proptest::collection::vec("[a-zA-Z0-9 .,/_-]{0,60}", 0..10),
        report in proptest::collection::vec(
            prop_oneof![
                Just("    6 |     return x;"),
                Just("      |            ^~~~"),
                Just("main.c:9:5: warning: unused variable ‘u’ [-Wunused-variable]"),
                Just("main.c:6:12: note: each undeclared identifier is reported only once"),
                Just("main.c: In function ‘g’:"),
                Just("main.c: At top level:"),
                Just("cc1: all warnings being treated as errors"),
                Just("Note: Main.java uses unchecked or unsafe operations."),
                Just("2 warnings generated."),
            ],
            0..30,
        ),
        last in "[a-z][a-z ]{0,30}[a-z]",
    ) {
        let text = format!(
            "{}\nmain.c:6:12: error: ‘x’ undeclared\n{}\n",
            lines.join("\n"),
            report.join("\n"),
        );
        let d = Detector::default();
        prop_assert!(d.is_failure(&text), "{text:?}");
        let went_on = format!("{text}{last}\n");
        prop_assert_ne!(d.explain(&went_on), Some("failure_summary"), "{:?}", went_on);
    }

    /// A test runner's summary (jest's, vitest's, node --test's TAP) is a
    /// failure when it counts a failed suite, file or test (a cancelled
    /// one for node), whatever ran above it, and not this rule's when it
    /// counts none.
    #[test]
    fn a_test_runners_count_of_failures(
        lines in proptest::collection::vec("[a-zA-Z0-9 .,/_-]{0,60}", 0..10),
        runner in 0..3usize,
        failed in 0..3u32,
        passed in 0..50u32,
        cancelled in 0..2u32,
        ms in 1..9999u32,
    ) {
        let total = failed + passed;
        let (summary, fails) = match runner {
            0 => {
                let suites = if failed > 0 { format!("{failed} failed, {total} total") } else { format!("{total} passed, {total} total") };
                (format!("Test Suites: {suites}\nTests:       {passed} passed, {total} total\nSnapshots:   0 total\nTime:        0.{ms} s\nRan all test suites.\n"), failed > 0)
            }
            1 => {
                let files = if failed > 0 { format!("{failed} failed | {passed} passed ({total})") } else { format!("{passed} passed ({passed})") };
                (format!(" Test Files  {files}\n      Tests  {passed} passed ({passed})\n   Start at  05:03:37\n   Duration  {ms}ms (transform 1ms)\n"), failed > 0)
            }
            _ => (format!("1..{total}\n# tests {total}\n# suites 0\n# pass {passed}\n# fail {failed}\n# cancelled {cancelled}\n# skipped 0\n# todo 0\n# duration_ms {ms}.5\n"), failed + cancelled > 0),
        };
        let text = format!("{}\n{summary}", lines.join("\n"));
        let d = Detector::default();
        if fails {
            prop_assert!(d.is_failure(&text), "{:?}", text);
        } else {
            prop_assert_ne!(d.explain(&text), Some("failure_summary"), "{:?}", text);
        }
    }

    /// ruff's count of errors is a failure when errors remain, whatever
    /// ran above it and whichever of its advice lines follow; black's
    /// report is one below `Oh no! 💥 💔 💥`, not below `All done! ✨ 🍰 ✨`.
    #[test]
    fn a_formatters_or_linters_report(
        lines in proptest::collection::vec("[a-zA-Z0-9 .,/_-]{0,60}", 0..10),
        fixed in 0..4u32,
        remaining in 0..4u32,
        advice in proptest::collection::vec(
            prop_oneof![
                Just("[*] 2 fixable with `--fix`."),
                Just("[*] 1 fixable with the `--fix` option."),
                Just("1 unsafe fix available with `--fix --unsafe-fixes`."),
                Just("No fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option)."),
                Just("[notice] A new release of pip is available: 23.2.1 -> 25.3"),
            ],
            0..3,
        ),
        files in 1..20u32,
        failed in any::<bool>(),
    ) {
        let d = Detector::default();
        let total = fixed + remaining;
        let count = if fixed > 0 {
            format!("Found {total} error{} ({fixed} fixed, {remaining} remaining).", if total == 1 { "" } else { "s" })
        } else {
            format!("Found {remaining} error{}.", if remaining == 1 { "" } else { "s" })
        };
        let ruff = format!("{}\n{count}\n{}\n", lines.join("\n"), advice.join("\n"));
        if remaining > 0 {
            prop_assert!(d.is_failure(&ruff), "{:?}", ruff);
        } else {
            prop_assert_ne!(d.explain(&ruff), Some("failure_summary"), "{:?}", ruff);
        }
        let above = if failed { "Oh no! \u{1f4a5} \u{1f494} \u{1f4a5}" } else { "All done! \u{2728} \u{1f370} \u{2728}" };
        let black = format!("{}\n\n{above}\n{files} file{} would be reformatted.\n", lines.join("\n"), if files == 1 { "" } else { "s" });
        if failed {
            prop_assert!(d.is_failure(&black), "{:?}", black);
        } else {
            prop_assert_ne!(d.explain(&black), Some("failure_summary"), "{:?}", black);
        }
    }

    /// pyright's and oxlint's counts are a failure when they count an
    /// error, whatever ran above them and with oxlint's timing below; a
    /// count of warnings alone is not this rule's. cmake's `Configuring
    /// incomplete` is one with or without its `See also` line; `php -l`'s
    /// `Errors parsing …` only below its parse error.
    #[test]
    fn a_checkers_count_or_closing_line(
        lines in proptest::collection::vec("[a-zA-Z0-9 .,/_-]{0,60}", 0..10),
        errors in 0..4u32,
        warnings in 0..4u32,
        ms in 1..999u32,
        see_also in any::<bool>(),
        file in "[a-z][a-z0-9_/]{0,20}\\.php",
        parse_error_above in any::<bool>(),
    ) {
        let d = Detector::default();
        let above = lines.join("\n");
        let plural = |n: u32, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
        let pyright = format!("{above}\n{}, {}, 0 informations\n", plural(errors, "error"), plural(warnings, "warning"));
        let oxlint = format!(
            "{above}\n\nFound {} and {}.\nFinished in {ms}ms on 1 file with 96 rules using 2 threads.\n",
            plural(warnings, "warning"),
            plural(errors, "error"),
        );
        summary_exactly_when(errors > 0, &[pyright, oxlint])?;
        let see = if see_also { "See also \"/src/build/CMakeFiles/CMakeOutput.log\".\n" } else { "" };
        let cmake = format!("{above}\n\n-- Configuring incomplete, errors occurred!\n{see}");
        prop_assert!(d.is_failure(&cmake), "{:?}", cmake);
        let last = if parse_error_above {
            format!("PHP Parse error:  syntax error, unexpected end of file in {file} on line {ms}")
        } else {
            format!("{above} {ms}")
        };
        let php = format!("{last}\nErrors parsing {file}\n");
        if parse_error_above {
            prop_assert!(d.is_failure(&php), "{:?}", php);
        } else {
            prop_assert_ne!(d.explain(&php), Some("failure_summary"), "{:?}", php);
        }
    }

    /// mocha's counts with failures and the list they open, ending with a
    /// failure's frames, are a failure whatever ran above and whatever each
    /// failure's message; the list without mocha's counts above it is not
    /// this rule's.
    #[test]
    fn mochas_list_of_failures(
        lines in proptest::collection::vec("[a-zA-Z0-9 .,/_-]{0,60}", 0..10),
        passing in 0..50u32,
        pending in proptest::option::of(1..5u32),
        failures in proptest::collection::vec(
            ("[a-z][a-z ]{0,20}", proptest::collection::vec("[a-zA-Z0-9 .,:+-]{0,40}", 0..6), 1..4usize),
            1..5,
        ),
        counts in any::<bool>(),
    ) {
        let mut list = String::new();
        for (i, (title, message, frames)) in failures.iter().enumerate() {
            list.push_str(&format!("  {}) suite\n       {title}:\n\n", i + 1));
            for m in message {
                list.push_str(&format!("      {m}\n"));
            }
            for f in 0..*frames {
                list.push_str(&format!("      at fn{f} (test/a.spec.js:{}:{f})\n", i + 1));
            }
            list.push('\n');
        }
        let pending = pending.map(|n| format!("  {n} pending\n")).unwrap_or_default();
        let text = if counts {
            format!("{}\n\n  {passing} passing (9ms)\n{pending}  {} failing\n\n{list}\n\n", lines.join("\n"), failures.len())
        } else {
            format!("{}\n\n{list}\n\n", lines.join("\n"))
        };
        let d = Detector::default();
        if counts {
            prop_assert!(d.is_failure(&text), "{:?}", text);
        } else {
            prop_assert_ne!(d.explain(&text), Some("failure_summary"), "{:?}", text);
        }
    }

    /// yamllint's report is a failure exactly when one of its problems is
    /// an error, in either format, for any files, problems and output
    /// above it (a command's lines before yamllint ran).
    #[test]
    fn yamllints_report(
        lines in proptest::collection::vec("[a-zA-Z0-9 .,/_-]{0,60}", 0..5),
        files in proptest::collection::vec(
            ("[a-z][a-z0-9_/]{0,15}\\.ya?ml", proptest::collection::vec((1..500u32, 1..80u32, any::<bool>(), "[a-z][a-z ]{0,30}"), 1..4)),
            1..4,
        ),
        parsable in any::<bool>(),
    ) {
        let mut report = String::new();
        let mut any_error = false;
        for (name, problems) in &files {
            if !parsable {
                report.push_str(&format!("{name}\n"));
            }
            for (row, column, error, message) in problems {
                any_error |= *error;
                let level = if *error { "error" } else { "warning" };
                if parsable {
                    report.push_str(&format!("{name}:{row}:{column}: [{level}] {message} (rule-x)\n"));
                } else {
                    let at = format!("{row}:{column}");
                    report.push_str(&format!("  {at:<10}{level:<9}{message}  (rule-x)\n"));
                }
            }
            if !parsable {
                report.push('\n');
            }
        }
        let text = format!("{}\n{report}", lines.join("\n"));
        let d = Detector::default();
        if any_error {
            prop_assert!(d.is_failure(&text), "{:?}", text);
        } else {
            prop_assert_ne!(d.explain(&text), Some("failure_summary"), "{:?}", text);
        }
    }

    /// unzip's two-line report of an archive without a central directory
    /// is a failure for any archive's name below any output; its second
    /// line below another line is not this rule's.
    #[test]
    fn unzips_corrupt_archive(
        lines in proptest::collection::vec("[a-zA-Z0-9 .,/_-]{0,60}", 0..10),
        name in "[a-zA-Z0-9_/-]{1,30}",
        report in any::<bool>(),
    ) {
        let above = if report {
            format!("unzip:  cannot find zipfile directory in one of {name}.zip or")
        } else {
            format!("unzip:  cannot find or open {name}.zip, {name}.zip.zip or")
        };
        let text = format!("{}\n{above}\n        {name}.zip.zip, and cannot find {name}.zip.ZIP, period.\n", lines.join("\n"));
        let d = Detector::default();
        if report {
            prop_assert!(d.is_failure(&text), "{:?}", text);
        } else {
            prop_assert_ne!(d.explain(&text), Some("failure_summary"), "{:?}", text);
        }
    }

    /// ruff format's count of files it would reformat is a failure below
    /// any output; black's, which ends with a period, is not this rule's
    /// below `All done!`.
    #[test]
    fn ruff_formats_count(
        lines in proptest::collection::vec("[a-zA-Z0-9 .,/_-]{0,60}", 0..10),
        would in 1..50u32,
        already in proptest::option::of(1..50u32),
    ) {
        let plural = |n: u32| if n == 1 { "file" } else { "files" };
        let already = already.map(|n| format!(", {n} {} already formatted", plural(n))).unwrap_or_default();
        let d = Detector::default();
        let ruff = format!("{}\n\n{would} {} would be reformatted{already}\n", lines.join("\n"), plural(would));
        prop_assert_eq!(d.explain(&ruff), Some("failure_summary"), "{:?}", ruff);
        let black = format!("{}\nAll done! \u{2728} \u{1f370} \u{2728}\n{would} {} would be reformatted.\n", lines.join("\n"), plural(would));
        prop_assert_ne!(d.explain(&black), Some("failure_summary"), "{:?}", black);
    }

    /// tox's, nox's, Sphinx's and MkDocs' lines for a failed run are a
    /// failure below any output, for any duration, session, count of
    /// warnings; their lines for a run that passed are not this rule's.
    #[test]
    fn python_runners_and_doc_builders_closing_lines(
        lines in proptest::collection::vec("[a-zA-Z0-9 .,/_-]{0,60}", 0..10),
        seconds in 0..10_000u32,
        session in "[a-z][a-z0-9_-]{0,15}(?:\\(python='3\\.1[0-3]'\\))?",
        warnings in 1..20u32,
        failed in any::<bool>(),
    ) {
        let above = lines.join("\n");
        let plural = if warnings == 1 { "warning" } else { "warnings" };
        let time = format!("{}.{:02}", seconds / 100, seconds % 100);
        let texts = if failed {
            [
                format!("{above}\n  py: FAIL code 1 ({time} seconds)\n  evaluation failed :( ({time} seconds)\n"),
                format!("{above}\nnox > Session {session} failed.\n"),
                format!("{above}\nbuild finished with problems, {warnings} {plural} (with warnings treated as errors).\n"),
                format!("{above}\n\nAborted with {warnings} warnings in strict mode!\n"),
            ]
        } else {
            [
                format!("{above}\n  py: OK ({time} seconds)\n  congratulations :) ({time} seconds)\n"),
                format!("{above}\nnox > Session {session} was successful.\n"),
                format!("{above}\nbuild succeeded, {warnings} {plural}.\n\nThe HTML pages are in _build.\n"),
                format!("{above}\nINFO    -  Documentation built in {time} seconds\n"),
            ]
        };
        summary_exactly_when(failed, &texts)?;
    }

    /// xmllint's, openssl verify's, gpg's, rsync's and GNU find's lines
    /// for a failure are one below any output, for any file's name; the
    /// same programs' lines for a success are not this rule's.
    #[test]
    fn unix_tools_closing_lines(
        lines in proptest::collection::vec("[a-zA-Z0-9 .,/_-]{0,60}", 0..10),
        file in "[a-zA-Z0-9_./-]{1,30}",
        code in 1..40u32,
        failed in any::<bool>(),
    ) {
        // (below a line of output: find's complaint alone is
        // shell_diagnostic's)
        let above = format!("running\n{}", lines.join("\n"));
        let texts = if failed {
            [
                format!("{above}\n{file} fails to validate\n"),
                format!("{above}\nerror {file}: verification failed\n"),
                format!("{above}\ngpg: BAD signature from \"Probe <p@example.com>\" [ultimate]\n"),
                format!("{above}\nrsync error: some files/attrs were not transferred (see previous errors) (code {code}) at main.c(1394) [sender=3.5.0]\n"),
                format!("{above}\nfind: \u{2018}{file}\u{2019}: No such file or directory\n"),
            ]
        } else {
            [
                format!("{above}\n{file} validates\n"),
                format!("{above}\n{file}: OK\n"),
                format!("{above}\ngpg: Good signature from \"Probe <p@example.com>\" [ultimate]\n"),
                format!("{above}\ntotal size is {code}  speedup is 0.01\n"),
                format!("{above}\n./{file}\n"),
            ]
        };
        summary_exactly_when(failed, &texts)?;
    }

    /// ansible-playbook's recap is a failure exactly when a host counts a
    /// failed task or is unreachable, for any hosts and counts; its host
    /// lines without `PLAY RECAP` above are not this rule's.
    #[test]
    fn ansibles_recap(
        lines in proptest::collection::vec("[a-zA-Z0-9 .,/_-]{0,60}", 0..10),
        hosts in proptest::collection::vec(("[a-z][a-z0-9.-]{0,20}", proptest::collection::vec(0..3u32, 7)), 1..5),
        header in any::<bool>(),
    ) {
        let mut recap = String::new();
        let mut failed = false;
        for (host, n) in &hosts {
            failed |= n[2] > 0 || n[3] > 0;
            recap.push_str(&format!(
                "{host:<26} : ok={:<4} changed={:<4} unreachable={:<4} failed={:<4} skipped={:<4} rescued={:<4} ignored={:<4}\n",
                n[0], n[1], n[2], n[3], n[4], n[5], n[6],
            ));
        }
        let title = if header { "PLAY RECAP *********************************************************************\n" } else { "" };
        let text = format!("running\n{}\n\n{title}{recap}\n", lines.join("\n"));
        let d = Detector::default();
        if header && failed {
            prop_assert_eq!(d.explain(&text), Some("failure_summary"), "{:?}", text);
        } else {
            prop_assert_ne!(d.explain(&text), Some("failure_summary"), "{:?}", text);
        }
    }

    /// A closing line followed by a line of ordinary output (the program
    /// went on) is not this rule's.
    #[test]
    fn a_closing_line_then_output_is_not_a_summary(
        i in 0..FAILED.len(),
        last in "[a-z][a-z ]{0,30}[a-z]",
    ) {
        let text = format!("{}{last}\n", FAILED[i]);
        let d = Detector::default();
        prop_assert_ne!(d.explain(&text), Some("failure_summary"), "{:?}", text);
    }
}
