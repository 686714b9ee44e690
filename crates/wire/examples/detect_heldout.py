#!/usr/bin/env python3
"""Build held-out JSONL sets (corpus format) from *real* tool outputs produced
on this machine, to check the content detector beyond the corpus.

Two sets, written to the directory given as the only argument:

- `files.jsonl`: the first 800 characters of real text files (Rust sources,
  READMEs, changelogs, TOML, JSON, shell scripts) from the local cargo
  registry, as a generic read-file tool returns them. All benign: any hit is a
  false positive. This is the "file contents mention errors" trap at scale.
- `shell.jsonl`: real shell commands run in a scratch directory; the content
  is stdout+stderr exactly as a harness that does NOT frame the exit status
  would return it (LangChain ShellTool style), labeled by the real exit
  status. A second copy of each row uses Claude Code's framing (`Exit code N`
  first line on failure) and a third Codex's (`Exit code: N` / `Wall time`).

Usage: python3 detect_heldout.py OUT_DIR [N_FILES]
"""

import json
import os
import random
import subprocess
import sys
import tempfile
import time

ARGS = [a for a in sys.argv[1:]]
CCL = None
if "--ccl" in ARGS:
    i = ARGS.index("--ccl")
    CCL = ARGS[i + 1]
    del ARGS[i : i + 2]
OUT = ARGS[0]
N_FILES = int(ARGS[1]) if len(ARGS) > 1 else 3000
random.seed(7)


def row(source, provider, content, is_error):
    return {
        "source": source,
        "provider": provider,
        "content": content[:800],
        "is_error": is_error,
    }


def files_set():
    root = os.path.expanduser("~/.cargo/registry/src")
    exts = (".rs", ".md", ".toml", ".json", ".txt", ".sh", ".py", ".yml", ".yaml", ".c", ".h")
    paths = []
    for dirpath, _, names in os.walk(root):
        for n in names:
            if n.endswith(exts):
                paths.append(os.path.join(dirpath, n))
    random.shuffle(paths)
    rows = []
    for p in paths:
        if len(rows) >= N_FILES:
            break
        try:
            with open(p, encoding="utf-8") as f:
                text = f.read(800)
        except (UnicodeDecodeError, OSError):
            continue
        if not text.strip():
            continue
        crate = p[len(root):].split("/")[2]
        rows.append(row(f"local:registry/{crate}@0:{os.path.basename(p)}", "files", text, False))
    return rows


SETUP = """
mkdir -p src && printf 'fn main() {\\n    println!("hi");\\n}\\n' > src/main.rs
printf 'alpha\\nbeta error handling\\ngamma\\n' > notes.txt
printf 'import json\\nprint(json.loads("{"))\\n' > bad.py
printf 'print("ok")\\n' > good.py
printf '{"name": "x", "error": null}\\n' > data.json
git init -q . && git add . && git -c user.email=a@b -c user.name=t commit -qm "initial: add error handling notes"
"""

COMMANDS = [
    "ls",
    "ls -la src",
    "ls missing_dir",
    "cat notes.txt",
    "cat nope.txt",
    "cat data.json",
    "grep -rn error .",
    "grep -rn zzz_never .",
    "grep -c beta notes.txt",
    "git log --oneline",
    "git status",
    "git checkout no-such-branch",
    "git push",
    "git diff HEAD~5",
    "python3 good.py",
    "python3 bad.py",
    "python3 -c 'import nosuchmodule'",
    "python3 -c 'print(1/0)'",
    "python3 -c 'print(\"Error handling test: 0 errors\")'",
    "node -e 'console.log(\"done\")'",
    "node -e 'null.x'",
    "node -e 'require(\"fs\").readFileSync(\"/nope\")'",
    "nosuchcommand --help",
    "tree",
    "mkdir src",
    "rm nope.txt",
    "touch /proc/x",
    "echo hello",
    "echo 'cannot reproduce, works for me'",
    "wc -l notes.txt",
    "head -n 2 notes.txt",
    "find . -name '*.rs'",
    "find /nonexistent -name x",
    "sort notes.txt",
    "test -f nope.txt",
    "false",
    "true",
    "gcc -x c - -o /dev/null <<< 'int main(){return 0;}'",
    "gcc -x c - -o /dev/null <<< 'int main(){return x;}'",
    "python3 -m json.tool data.json",
    "python3 -m json.tool notes.txt",
    "sed -n 1p notes.txt",
    "diff notes.txt notes.txt",
    "diff notes.txt data.json",
    "cp nope.txt x.txt",
    "chmod 000 notes.txt && cat notes.txt; s=$?; chmod 644 notes.txt; exit $s",
    "curl -sS http://127.0.0.1:9/",
    "python3 -c 'import sys; sys.exit(3)'",
    "python3 -c 'import sys; print(\"failed: 0, passed: 12\")'",
    "python3 -c 'raise SystemExit(\"fatal: config missing\")'",
    "ls -la; exit 2",
    "echo 'Error: expected output of the demo'",
    "cargo --version",
    "cargo build --manifest-path nope/Cargo.toml",
    "tar -xf nope.tar",
    "unzip -l nope.zip",
    "timeout 0.1 sleep 1",
    "du -sh .",
    "env | grep -c PATH",
    "which python3",
    "which nosuchbinary",
]


def shell_set():
    rows = []
    with tempfile.TemporaryDirectory() as d:
        subprocess.run(["bash", "-c", SETUP], cwd=d, check=True, capture_output=True)
        for cmd in COMMANDS:
            t = time.time()
            p = subprocess.run(
                ["bash", "-c", cmd], cwd=d, capture_output=True, text=True, timeout=30
            )
            wall = time.time() - t
            out = (p.stdout + p.stderr).replace(d, "/work/scratch")
            failed = p.returncode != 0
            rows.append(row("local:shell-raw@0:" + cmd, "raw", out, failed))
            framed = f"Exit code {p.returncode}\n{out}" if failed else out
            rows.append(row("local:shell-claudecode@0:" + cmd, "claudecode", framed, failed))
            codex = f"Exit code: {p.returncode}\nWall time: {wall:.1f} seconds\nOutput:\n{out}"
            rows.append(row("local:shell-codex@0:" + cmd, "codex", codex, failed))
    return rows


HELP = (
    [f"{b} --help" for b in "ls cat grep sed awk find xargs sort uniq wc head tail diff patch tar gzip curl make gcc python3 node npm pip cargo rustc rustup git ssh cp mv mkdir chmod du df ps env date tr cut tee file which stat ln touch basename dirname realpath readlink xxd od base64 sha256sum md5sum apt-cache dpkg perl bash zip unzip less timeout nproc uname id whoami hostname".split()]
    + [f"git {c} -h" for c in "add commit log status diff rebase push pull merge checkout branch stash reset tag fetch remote clone init show blame bisect cherry-pick revert worktree config".split()]
    + [f"cargo {c} --help" for c in "build test run check clippy fmt doc new add update tree bench publish install metadata".split()]
    + [f"pip {c} --help" for c in "install list show freeze download check".split()]
    + [f"python3 -m {m} --help" for m in "json.tool venv http.server pydoc timeit unittest zipfile tarfile pdb cProfile".split()]
)


def help_set():
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for cmd in HELP:
            try:
                p = subprocess.run(
                    ["bash", "-c", cmd], cwd=d, capture_output=True, text=True,
                    timeout=10, stdin=subprocess.DEVNULL,
                )
            except subprocess.TimeoutExpired:
                continue
            out = p.stdout + p.stderr
            if p.returncode != 0 or not out.strip():
                continue
            rows.append(row("local:help@0:" + cmd, "help", out, False))
            codex = "Exit code: 0\nWall time: 0.1 seconds\nOutput:\n" + out
            rows.append(row("local:help-codex@0:" + cmd, "help-codex", codex, False))
    return rows


def ccl_set(root):
    def text_of(c):
        if isinstance(c, str):
            return c
        if isinstance(c, list):
            return "\n".join(
                p.get("text", "") for p in c if isinstance(p, dict) and p.get("type") == "text"
            )
        return None

    rows, seen = [], set()
    for dirpath, _, names in sorted(os.walk(root)):
        for n in sorted(names):
            if not n.endswith(".jsonl"):
                continue
            path = os.path.join(dirpath, n)
            for line in open(path, encoding="utf-8", errors="replace"):
                try:
                    msg = json.loads(line).get("message")
                except (ValueError, AttributeError):
                    continue
                if not isinstance(msg, dict) or not isinstance(msg.get("content"), list):
                    continue
                for b in msg["content"]:
                    if not (isinstance(b, dict) and b.get("type") == "tool_result"):
                        continue
                    t = text_of(b.get("content"))
                    key = (t, bool(b.get("is_error")))
                    if t is None or key in seen:
                        continue
                    seen.add(key)
                    rel = os.path.relpath(path, root)
                    rows.append(row("pypi:claude-code-log@1.7.0:" + rel, "anthropic", t, key[1]))
    return rows


def main():
    os.makedirs(OUT, exist_ok=True)
    sets = [("files.jsonl", files_set()), ("shell.jsonl", shell_set()), ("help.jsonl", help_set())]
    if CCL:
        sets.append(("ccl.jsonl", ccl_set(CCL)))
    for name, rows in sets:
        with open(os.path.join(OUT, name), "w") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
        print(name, len(rows), "rows,", sum(r["is_error"] for r in rows), "failures")


if __name__ == "__main__":
    main()
