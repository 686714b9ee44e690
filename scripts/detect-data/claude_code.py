#!/usr/bin/env python3
"""Labelled tool results from Claude Code session transcripts (JSONL), in
the corpus format of shared/corpus/tool_results.jsonl.

The label is the harness's own `is_error` flag on each `tool_result` block
(absent = false); the detector never sees it. Files are read from a git
repository at a pinned commit, so the set is rebuilt byte for byte:

    git clone https://github.com/OWNER/NAME /tmp/NAME
    python3 scripts/detect-data/claude_code.py --git /tmp/NAME --commit SHA \
        --source github:OWNER/NAME --match 'transcript.jsonl$' \
        > /work/data/detect/NAME.jsonl

Data from elsewhere stays out of the project: write it under
/work/data/detect/ (or anywhere outside the repository), never commit it.
"""

import argparse
import json
import re
import subprocess
import sys

MAX_CONTENT = 800


def git(repo, *args):
    return subprocess.run(
        ["git", "-C", repo, *args], check=True, capture_output=True
    ).stdout


def text_of(content):
    """A tool_result's content as text: a string, or its text blocks joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def rows(repo, commit, source, path):
    names = {}
    for line in git(repo, "show", f"{commit}:{path}").decode("utf-8", "replace").splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        message = entry.get("message") if isinstance(entry, dict) else None
        blocks = message.get("content") if isinstance(message, dict) else None
        if not isinstance(blocks, list):
            continue
        for b in blocks:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "tool_use":
                names[b.get("id")] = b.get("name")
            elif b.get("type") == "tool_result":
                text = text_of(b.get("content"))
                yield {
                    "source": f"{source}@{commit}:{path}",
                    "provider": "anthropic",
                    "tool_name": names.get(b.get("tool_use_id")),
                    "tool_use_id": b.get("tool_use_id"),
                    "content": text[:MAX_CONTENT],
                    "content_chars": len(text),
                    "truncated": len(text) > MAX_CONTENT,
                    "is_error": b.get("is_error") is True,
                    "label_basis": "is_error written by the Claude Code harness",
                }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--git", required=True, help="a clone of the source repository")
    ap.add_argument("--commit", required=True, help="the pinned commit")
    ap.add_argument("--source", required=True, help="github:OWNER/NAME")
    ap.add_argument("--match", required=True, help="regex the transcript paths match")
    a = ap.parse_args()
    paths = [
        p
        for p in git(a.git, "ls-tree", "-r", "--name-only", a.commit).decode().splitlines()
        if re.search(a.match, p)
    ]
    n = 0
    for path in sorted(paths):
        for row in rows(a.git, a.commit, a.source, path):
            print(json.dumps(row, ensure_ascii=False))
            n += 1
    print(f"{n} results from {len(paths)} files", file=sys.stderr)


if __name__ == "__main__":
    main()
