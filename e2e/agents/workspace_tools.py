"""The tools the Python framework drivers give their agents: plain functions
on the workspace (E2E_WORKSPACE) that really fail, by raising, or succeed.
Each driver wraps them as its framework expects; the docstrings and type
hints are what the frameworks declare to the model."""

import os
import subprocess
from pathlib import Path

CWD = Path(os.environ.get("E2E_WORKSPACE", "."))


def read_file(path: str) -> str:
    """Read a text file."""
    return (CWD / path).read_text()


def run_shell(command: str) -> str:
    """Run a shell command; fails when it exits non-zero."""
    done = subprocess.run(command, shell=True, cwd=CWD, capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise RuntimeError(f"exit status {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def edit_file(path: str, old: str, new: str) -> str:
    """Replace text in a file."""
    file = CWD / path
    text = file.read_text()
    if old not in text:
        raise ValueError(f"edit_file: {old!r} not found in {path}")
    file.write_text(text.replace(old, new, 1))
    return "edited"


def explode() -> str:
    """A tool with a bug: it always throws an AttributeError."""
    config = None
    return config.value


TOOLS = [read_file, run_shell, edit_file, explode]

# Bedrock, for the drivers that run on it.
BEDROCK_MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"


def bedrock_client(gateway: str):
    """boto3's `bedrock-runtime` at the gateway's Bedrock route, signing with
    a key of the client's own: the gateway signs each request again with
    its credentials."""
    import boto3
    return boto3.client("bedrock-runtime", endpoint_url=f"{gateway}/bedrock", region_name="us-east-1",
                        aws_access_key_id="AKIDFRAMEWORKCLIENT", aws_secret_access_key="the-gateway-signs-again")
