"""Find a Java runtime and resolve a server's jars with Maven, cached in the state dir.

The poms under deploy/maven/ are the single source of the Java dependencies. Maven writes
a classpath (jar paths in ~/.m2) once; later ``up`` calls read the cached file and re-run
Maven only if the pom changed or a jar vanished from the local repository.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

from deploy.process import DeployError
from services.settings import REPO_ROOT

MAVEN_DIR = REPO_ROOT / "deploy" / "maven"


def java_major(java: str) -> int | None:
    """The major version of a ``java`` executable (17 for 17.0.15), or None."""
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30).stderr
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out)
    if not match:
        return None
    major = int(match.group(1))
    return int(match.group(2)) if major == 1 and match.group(2) else major


def find_java(min_major: int = 17) -> str:
    """Path of a java >= ``min_major``: $JAVA_HOME/bin/java first, then PATH."""
    candidates = []
    if os.environ.get("JAVA_HOME"):
        candidates.append(str(Path(os.environ["JAVA_HOME"]) / "bin" / "java"))
    on_path = shutil.which("java")
    if on_path:
        candidates.append(on_path)
    for java in candidates:
        major = java_major(java)
        if major is not None and major >= min_major:
            return java
    raise DeployError(
        f"Java {min_major}+ not found (install OpenJDK 17: "
        "apt-get install -y openjdk-17-jre-headless, or set JAVA_HOME)"
    )


def _find_mvn() -> str:
    mvn = shutil.which("mvn")
    if not mvn:
        raise DeployError("Maven not found (install it: apt-get install -y maven)")
    return mvn


def classpath(component: str, cache_dir: Path) -> str:
    """The runtime classpath of deploy/maven/<component>/pom.xml, resolved once and cached."""
    pom = MAVEN_DIR / component / "pom.xml"
    digest = hashlib.sha256(pom.read_bytes()).hexdigest()[:16]
    cache = cache_dir / f"{component}-{digest}.classpath"
    if cache.exists():
        cp = cache.read_text().strip()
        if cp and all(Path(jar).exists() for jar in cp.split(os.pathsep)):
            return cp
    return _resolve(pom, cache)


def _resolve(pom: Path, cache: Path) -> str:
    cache.parent.mkdir(parents=True, exist_ok=True)
    print(f"  resolving jars with Maven ({pom.relative_to(REPO_ROOT)}); first time takes a minute")
    cmd = [
        _find_mvn(),
        "-q",
        "-B",
        "-f",
        str(pom),
        "dependency:build-classpath",
        f"-Dmdep.outputFile={cache}",
        "-Dmdep.includeScope=runtime",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0 or not cache.exists():
        out = "\n".join((proc.stdout + proc.stderr).splitlines()[-30:])
        raise DeployError(
            f"Maven could not resolve {pom.relative_to(REPO_ROOT)} (needs Maven Central access "
            f"or a filled ~/.m2):\n{out}"
        )
    return cache.read_text().strip()


def find_javac(java: str) -> str:
    """The ``javac`` next to ``java`` (same JDK), else the one on PATH."""
    sibling = Path(java).resolve().parent / "javac"
    javac = str(sibling) if sibling.exists() else shutil.which("javac")
    if not javac:
        raise DeployError(
            "javac not found: the Elasticsearch launcher is compiled on first start "
            "(install a JDK: apt-get install -y openjdk-17-jdk-headless)"
        )
    return javac


def compile_sources(component: str, java: str, cp: str, cache_dir: Path) -> Path:
    """Compile deploy/maven/<component>/src/**/*.java against ``cp`` once; return the class dir.

    The output dir is keyed by a hash of the sources and classpath, so an edit recompiles.
    """
    sources = sorted((MAVEN_DIR / component / "src").rglob("*.java"))
    digest = hashlib.sha256(cp.encode())
    for src in sources:
        digest.update(src.read_bytes())
    out = cache_dir / f"{component}-classes-{digest.hexdigest()[:16]}"
    if (out / ".done").exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    cmd = [find_javac(java), "-nowarn", "-d", str(out), "-cp", cp, *map(str, sources)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise DeployError(f"compiling {component} launcher failed:\n{proc.stdout}{proc.stderr}")
    (out / ".done").touch()
    return out
