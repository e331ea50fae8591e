"""Every command the README's "Everyday commands" and "Troubleshooting" and
deploy/README.md's shell blocks show runs without a traceback or a non-zero exit, on the
running stack. Commands are read from the documents at test time, so a command added to
them later is tested too.

A command that only reads (``status``, ``logs``, searches, ``dlq inspect``) runs as
written, with its optional ``[...]`` parts left out and ``<a|b>`` read as ``a``; one that
would change state or start a server (``up``, ``down``, the worker, the producer, the
headline API) runs with ``--help`` added, which proves it parses and imports.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

import pytest

from deploy.testing import ElasticsearchInfo, KafkaInfo, TritonInfo
from services.settings import REPO_ROOT

pytestmark = pytest.mark.integration

#: (module, first argument) of the commands that only read; "*": any first argument.
READ_ONLY = {("deploy.local", "status"), ("deploy.local", "logs"), ("services.search", "*"),
             ("services.dlq", "inspect")}
#: Modules the docs name that this test does not run (the test suite itself).
NOT_RUN = {"pytest"}


def section(text: str, heading: str) -> str:
    """The text under ``## heading`` up to the next heading of the same level."""
    found = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert found, f"no section {heading!r}"
    return found.group(1)


def fenced(text: str) -> list[str]:
    """Lines of the ```bash blocks."""
    return [line for block in re.findall(r"```bash\n(.*?)```", text, re.S)
            for line in block.splitlines()]


def inline(text: str) -> list[str]:
    return re.findall(r"`([^`]*python -m [^`]*)`", text)


def documented() -> list[str]:
    readme = (REPO_ROOT / "README.md").read_text()
    deploy = (REPO_ROOT / "deploy" / "README.md").read_text()
    lines = (fenced(section(readme, "Everyday commands"))
             + inline(section(readme, "Troubleshooting")) + fenced(deploy))
    commands = []
    for line in lines:
        line = re.sub(r"\s#\s.*$", "", line).strip()
        for part in line.split("&&"):
            part = part.strip()
            match = re.match(r"^(?:\.venv/bin/)?python -m (\S.*)$", part)
            if match and match.group(1).split()[0] not in NOT_RUN:
                commands.append(match.group(1))
    return list(dict.fromkeys(commands))


def runnable(command: str) -> list[str]:
    """The argv this test runs for a documented ``python -m`` command."""
    command = re.sub(r"\s*\[[^\]]*\]", "", command)
    command = re.sub(r"<([^|>]+)(?:\|[^>]*)?>", r"\1", command)
    args = shlex.split(command)
    module, first = args[0], (args[1] if len(args) > 1 else "")
    if ((module, first) not in READ_ONLY and (module, "*") not in READ_ONLY
            and "--help" not in args):
        args.append("--help")
    return [sys.executable, "-m", *args]


COMMANDS = documented()


def test_the_documents_show_commands_this_test_can_find() -> None:
    assert len(COMMANDS) >= 15, COMMANDS
    assert "deploy.local status" in COMMANDS


@pytest.mark.parametrize("command", COMMANDS)
def test_a_documented_command_runs_without_a_traceback(
        command: str, kafka: KafkaInfo, elasticsearch: ElasticsearchInfo,
        triton: TritonInfo) -> None:
    argv = runnable(command)
    done = subprocess.run(argv, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    output = done.stdout + done.stderr
    shown = " ".join(argv[2:])
    assert "Traceback" not in output, f"python -m {shown}:\n{output[-4000:]}"
    assert done.returncode == 0, f"python -m {shown} exited {done.returncode}:\n{output[-4000:]}"


def test_status_names_the_version_each_model_serves(triton: TritonInfo) -> None:
    done = subprocess.run([sys.executable, "-m", "deploy.local", "status"], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    for model in ("pos_tagger", "hashtag_generator", "headline_generator",
                  "constrained_headline_generator"):
        assert re.search(rf"^\s+{model}\s+serving \d+", done.stdout, re.M), done.stdout


def test_placeholders_become_runnable_arguments() -> None:
    assert runnable("deploy.local logs <kafka|elasticsearch|triton> -n 100")[2:] == [
        "deploy.local", "logs", "kafka", "-n", "100"]
    assert runnable("services.dlq inspect posts.raw.dlq [--since 2h] [--code X]")[2:] == [
        "services.dlq", "inspect", "posts.raw.dlq"]
    assert runnable("deploy.local up kafka es")[-1] == "--help"
