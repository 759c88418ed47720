"""deploy/Dockerfile, .dockerignore, requirements.lock and the healthcheck, checked offline
(no Docker engine runs here): the Dockerfile is parsed into stages and instructions."""

from __future__ import annotations

import fnmatch
import http.server
import re
import shlex
import subprocess
import sys
import threading
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = ROOT / "deploy" / "Dockerfile"
LOCK = ROOT / "requirements.lock"


@dataclass
class Stage:
    base: str
    name: str
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def all(self, keyword: str) -> list[str]:
        return [args for kw, args in self.instructions if kw == keyword]


def parse_dockerfile(text: str) -> tuple[dict[str, str], list[Stage]]:
    """(global ARGs, stages) with line continuations joined and comments dropped."""
    logical: list[str] = []
    current = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not current and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        logical.append(current + line)
        current = ""
    args: dict[str, str] = {}
    stages: list[Stage] = []
    for line in logical:
        keyword, _, rest = line.partition(" ")
        keyword = keyword.upper()
        rest = rest.strip()
        if keyword == "FROM":
            words = rest.split()
            base = words[0]
            for name, value in args.items():
                base = base.replace("${" + name + "}", value)
            name = words[2] if len(words) >= 3 and words[1].upper() == "AS" else str(len(stages))
            stages.append(Stage(base, name))
        elif not stages:
            if keyword == "ARG":
                name, _, value = rest.partition("=")
                args[name] = value
        else:
            stages[-1].instructions.append((keyword, rest))
    return args, stages


@pytest.fixture(scope="module")
def stages() -> list[Stage]:
    return parse_dockerfile(DOCKERFILE.read_text())[1]


def test_multi_stage_build_and_a_small_runtime(stages: list[Stage]) -> None:
    assert len(stages) >= 2
    build, runtime = stages[0], stages[-1]
    assert runtime.name == "runtime" and build.name == "build"
    # a slim base for both (the same Python, so the copied virtualenv's interpreter link holds)
    assert build.base == runtime.base and re.fullmatch(r"python:3\.11[\w.-]*-slim[\w.-]*",
                                                       runtime.base)
    # the runtime stage installs nothing: it copies the virtualenv built in the first stage
    runs = " ".join(runtime.all("RUN"))
    assert "pip install" not in runs and "apt-get" not in runs
    assert any("--from=build" in c and "/opt/venv" in c for c in runtime.all("COPY"))
    # build tools never reach the runtime: pip and setuptools are removed from the virtualenv
    assert "pip uninstall -y setuptools pip" in " ".join(build.all("RUN"))


def test_dependencies_come_only_from_the_lock_with_hashes(stages: list[Stage]) -> None:
    installs = [r for r in " && ".join(stages[0].all("RUN")).split("&&") if "pip install" in r]
    locked = [r for r in installs if "-r requirements.lock" in r]
    assert locked and all("--require-hashes" in r for r in locked)
    # fitcheck itself: no dependency resolution, no unpinned build environment
    own = [r for r in installs if r not in locked]
    assert own and all("--no-deps" in r and "--no-build-isolation" in r for r in own)


def test_runs_as_a_non_root_user_with_a_healthcheck_that_needs_no_curl(
        stages: list[Stage]) -> None:
    runtime = stages[-1]
    users = runtime.all("USER")
    assert users, "the runtime stage must switch user"
    user = users[-1].split(":")[0]
    assert user not in ("root", "0") and int(user) >= 1000
    keywords = [kw for kw, _ in runtime.instructions]
    assert keywords.index("USER") < keywords.index("ENTRYPOINT")
    health = runtime.all("HEALTHCHECK")
    assert len(health) == 1
    assert "curl" not in health[0] and "wget" not in health[0]
    assert "healthcheck.py" in health[0]
    assert "CMD" in health[0] and "--interval" in health[0]
    env = " ".join(runtime.all("ENV"))
    assert "FITCHECK_HOST=0.0.0.0" in env and "PYTHONDONTWRITEBYTECODE=1" in env
    assert runtime.all("ENTRYPOINT") == ['["fitcheck"]'] and runtime.all("CMD") == ['["serve"]']
    assert runtime.all("EXPOSE") == ["8000"]


def _dockerignore_allows(path: str) -> bool:
    """Docker's rule: the last matching pattern wins; ``!`` re-includes."""
    allowed = True
    for raw in (ROOT / ".dockerignore").read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        pattern = line[1:] if negate else line
        pattern = pattern.rstrip("/")
        parts = path.split("/")
        prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
        if pattern.startswith("**/"):
            hit = any(fnmatch.fnmatch(p, pattern[3:]) for p in parts)
        else:
            hit = any(fnmatch.fnmatch(p, pattern) for p in prefixes)
        if hit:
            allowed = negate
    return allowed


def test_every_copied_path_exists_and_is_in_the_build_context(stages: list[Stage]) -> None:
    copied: list[str] = []
    for stage in stages:
        for args in stage.all("COPY"):
            words = [w for w in shlex.split(args) if not w.startswith("--")]
            if "--from=" in args:
                continue
            copied.extend(words[:-1])
    assert {"requirements.lock", "pyproject.toml", "service"} <= set(copied)
    for source in copied:
        assert (ROOT / source).exists(), f"{source} is not in the repository"
        assert _dockerignore_allows(source), f".dockerignore keeps {source} out of the context"
    for excluded in (".git/config", "tests/test_cli.py", "bench/planner_speed.py", ".env",
                     "service/__pycache__/app.cpython-311.pyc"):
        assert not _dockerignore_allows(excluded), excluded


def _locked() -> dict[str, tuple[str, list[str]]]:
    """name -> (version, hashes) of requirements.lock."""
    found: dict[str, tuple[str, list[str]]] = {}
    name = ""
    for line in LOCK.read_text().splitlines():
        if re.match(r"^[A-Za-z0-9]", line):
            spec = line.split(";")[0].split("\\")[0].strip()
            pinned, _, version = spec.partition("==")
            assert version, f"not pinned: {line}"
            name = str(canonicalize_name(pinned.split("[")[0]))
            found[name] = (version.strip(), [])
        elif "--hash=sha256:" in line and name:
            found[name][1].append(line.split("--hash=sha256:")[1].split()[0])
    return found


def test_the_lock_pins_every_runtime_dependency_with_hashes() -> None:
    locked = _locked()
    assert locked
    for name, (version, hashes) in locked.items():
        assert hashes and all(re.fullmatch(r"[0-9a-f]{64}", h) for h in hashes), name
        assert re.fullmatch(r"[0-9][0-9A-Za-z.+!-]*", version), (name, version)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = list(project["dependencies"]) + list(project.get("optional-dependencies", {})
                                                  .get("bot", []))
    wanted += ["setuptools>=68"]  # builds fitcheck's wheel in the image
    for text in wanted:
        requirement = Requirement(text)
        if requirement.marker and not requirement.marker.evaluate({"python_version": "3.11"}):
            continue
        name = str(canonicalize_name(requirement.name))
        assert name in locked, f"{text} is in pyproject.toml but not in requirements.lock " \
            "(run sh deploy/lock.sh)"
        assert SpecifierSet(str(requirement.specifier)).contains(locked[name][0]), \
            f"requirements.lock has {name}=={locked[name][0]}, pyproject.toml wants {text}"


class _Ok(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200 if self.path == "/healthz" else 503)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def http_port() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Ok)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def _healthcheck(*args: str, env: dict[str, str] | None = None) -> int:
    return subprocess.run([sys.executable, str(ROOT / "deploy" / "healthcheck.py"), *args],
                          capture_output=True, timeout=20, env=env, check=False).returncode


def test_the_healthcheck_script_answers_by_exit_code(http_port: int) -> None:
    assert _healthcheck(f"http://127.0.0.1:{http_port}/healthz") == 0
    assert _healthcheck(f"http://127.0.0.1:{http_port}/down") == 1
    assert _healthcheck(env={"FITCHECK_PORT": str(http_port), "PATH": ""}) == 0
    with http.server.HTTPServer(("127.0.0.1", 0), _Ok) as closed:
        port = closed.server_address[1]
    assert _healthcheck(f"http://127.0.0.1:{port}/healthz") == 1
