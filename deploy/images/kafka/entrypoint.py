"""Start one Kafka broker configured the way the apache/kafka image is: from the environment.

The official image's contract, kept so docker-compose.yml runs either image unchanged:
every ``KAFKA_X_Y`` variable becomes the property ``x.y`` (``__`` stands for ``_``, ``___``
for ``-``), ``CLUSTER_ID`` formats the storage on first start, ``KAFKA_HEAP_OPTS`` and
``KAFKA_OPTS`` go to the JVM. Only the broker's own jars (Maven Central, resolved at build
time into /opt/kafka/libs) and Debian's JRE are inside.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

LIBS = "/opt/kafka/libs/*"
CONFIG = Path("/opt/kafka/config")
#: KAFKA_* variables that configure the JVM, not the broker
JVM_VARIABLES = {"KAFKA_HEAP_OPTS", "KAFKA_OPTS", "KAFKA_JVM_PERFORMANCE_OPTS",
                 "KAFKA_LOG4J_OPTS", "KAFKA_VERSION"}


def property_name(variable: str) -> str:
    """``KAFKA_LOG_DIRS`` -> ``log.dirs``; ``KAFKA_A__B`` -> ``a_b``; ``KAFKA_A___B`` -> ``a-b``."""
    name = variable.removeprefix("KAFKA_").lower()
    return name.replace("___", "-").replace("__", "\0").replace("_", ".").replace("\0", "_")


def broker_properties(env: dict[str, str]) -> dict[str, str]:
    return {property_name(k): v for k, v in sorted(env.items())
            if k.startswith("KAFKA_") and k not in JVM_VARIABLES}


def java(env: dict[str, str], main: str, *args: str) -> list[str]:
    flags = shlex.split(env.get("KAFKA_HEAP_OPTS", "-Xms128m -Xmx256m"))
    flags += shlex.split(env.get("KAFKA_JVM_PERFORMANCE_OPTS", "-XX:+UseG1GC"))
    flags += shlex.split(env.get("KAFKA_OPTS", ""))
    flags.append(f"-Dlog4j.configuration=file:{CONFIG / 'log4j.properties'}")
    return ["java", *flags, "-cp", LIBS, main, *args]


def main() -> int:
    env = dict(os.environ)
    props = broker_properties(env)
    if "log.dirs" not in props:
        props["log.dirs"] = "/var/lib/kafka/data"
    server = CONFIG / "server.properties"
    server.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    if not (Path(props["log.dirs"].split(",")[0]) / "meta.properties").exists():
        if "CLUSTER_ID" not in env:
            print("CLUSTER_ID is required to format the storage (kafka-storage random-uuid)",
                  file=sys.stderr)
            return 2
        subprocess.run(java(env, "kafka.tools.StorageTool", "format", "--ignore-formatted",
                            "-t", env["CLUSTER_ID"], "-c", str(server)), check=True)
    cmd = java(env, "kafka.Kafka", str(server))
    os.execvp(cmd[0], cmd)


if __name__ == "__main__":
    sys.exit(main())
