"""Start one Elasticsearch 7.10.2 node configured the way Elastic's image is: from the
environment.

The official image's contract, kept so docker-compose.yml runs either image unchanged:
every variable named like a setting (lower case with a dot, e.g. ``discovery.type``)
becomes that setting, ``ES_JAVA_OPTS`` goes to the JVM, data live in
/usr/share/elasticsearch/data. Inside is the OSS node the local stack embeds (Maven
Central jars, deploy/maven/elasticsearch), so there is no x-pack: ``xpack.*`` settings
that switch x-pack features off are skipped with a note, and switching one on (security
above all) is refused (exit 2) rather than run, e.g., an open node asked to be closed.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from pathlib import Path

HOME = Path("/usr/share/elasticsearch")
SETTING = re.compile(r"^[a-z0-9_]+(\.[a-z0-9_]+)+$")
DEFAULTS = {"network.host": "0.0.0.0", "transport.port": "9300"}


class NoXPack(ValueError):
    """An x-pack feature was switched on; this node does not have it."""


def settings(env: dict[str, str]) -> dict[str, str]:
    chosen = dict(DEFAULTS)
    for key, value in sorted(env.items()):
        if not SETTING.match(key):
            continue
        if key.startswith("xpack.") and key.endswith(".enabled") \
                and value.strip().lower() == "true":
            raise NoXPack(f"{key}=true: this image is the OSS node, which has no x-pack; "
                          "use Elastic's image (docker-compose.yml's default)")
        if key.startswith("xpack."):
            print(f"note: {key} skipped (this image has no x-pack)", file=sys.stderr)
            continue
        chosen[key] = value
    return chosen


def main() -> int:
    env = dict(os.environ)
    try:
        chosen = settings(env)
    except NoXPack as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    cluster = chosen.pop("cluster.name", "docker-cluster")
    http_port = int(chosen.pop("http.port", "9200"))
    conf = HOME / "config"
    conf.mkdir(parents=True, exist_ok=True)
    (conf / "elasticsearch.yml").write_text(
        "".join(f"{k}: {json.dumps(v)}\n" for k, v in chosen.items()))
    jvm = shlex.split(env.get("ES_JAVA_OPTS", "-Xms512m -Xmx512m"))
    jvm += shlex.split((HOME / "config" / "jvm.options").read_text())
    cmd = ["java", *jvm, "-cp", "/usr/share/elasticsearch/lib/*",
           "nlp.local.LocalElasticsearch", "-numOfNode", "1",
           "-baseHttpPort", str(http_port - 1), "-clusterName", cluster,
           "-basePath", str(HOME), "-confPath", str(conf), "-dataPath", str(HOME / "data"),
           "-logsPath", str(HOME / "logs")]
    os.execvp(cmd[0], cmd)


if __name__ == "__main__":
    sys.exit(main())
