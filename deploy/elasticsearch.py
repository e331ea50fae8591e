"""Elasticsearch 7.10.2, one node, embedded via org.codelibs:elasticsearch-cluster-runner.

The runner builds a ``Node`` from the jars on the classpath (OSS modules such as
analysis-common, mapper-extras, painless come in as Maven dependencies), reads
``elasticsearch.yml`` from ``-confPath`` and puts node ``i`` on HTTP port
``-baseHttpPort + i``. It skips the bootstrap checks of the official launcher, which is
what lets it run as an unprivileged local process. There is no x-pack, so no security,
ML or geoip downloads to switch off. Our small main class
(deploy/maven/elasticsearch/src/nlp/local/LocalElasticsearch.java, compiled on first use)
replaces the runner's, whose free-port probing refuses HTTP ports above 9299.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request

from deploy import jvm
from deploy.base import Port, Server
from services.settings import ELASTICSEARCH_VERSION

LOG4J2 = """\
status = error
appender.console.type = Console
appender.console.name = console
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d{ISO8601}][%-5p][%-25c{1.}] %m%n
rootLogger.level = info
rootLogger.appenderRef.console.ref = console
logger.deprecation.name = org.elasticsearch.deprecation
logger.deprecation.level = error
"""


class Elasticsearch(Server):
    """Single-node cluster on 127.0.0.1 with data under the state dir."""

    name = "elasticsearch"

    def ports(self) -> list[Port]:
        s = self.settings
        return [
            Port("http", s.es_port, "NLP_ES_PORT"),
            Port("transport", s.es_transport_port, "NLP_ES_TRANSPORT_PORT"),
        ]

    def config(self) -> dict[str, object]:
        """elasticsearch.yml; http.port and cluster.name are passed on the command line."""
        s = self.settings
        return {
            "network.host": s.host,
            "transport.port": s.es_transport_port,
            "discovery.type": "single-node",
            # a developer disk that is 90% full must not turn indices read-only
            "cluster.routing.allocation.disk.threshold_enabled": False,
        }

    def install(self) -> None:
        self.java = jvm.find_java(17)
        jars = self.settings.state_dir / "jars"
        deps = jvm.classpath("elasticsearch", jars)
        launcher = jvm.compile_sources("elasticsearch", self.java, deps, jars)
        self.classpath = os.pathsep.join([str(launcher), deps])

    def prepare(self) -> None:
        self.install()
        conf = self.home / "config"
        conf.mkdir(parents=True, exist_ok=True)
        (self.home / "tmp").mkdir(exist_ok=True)
        yml = "".join(f"{k}: {json.dumps(v)}\n" for k, v in self.config().items())
        (conf / "elasticsearch.yml").write_text(yml)
        (conf / "log4j2.properties").write_text(LOG4J2)

    def _jvm_flags(self) -> list[str]:
        heap = self.settings.es_heap
        return [
            f"-Xms{heap}",
            f"-Xmx{heap}",  # ES wants min == max
            "-XX:+UseG1GC",
            "-XX:G1ReservePercent=25",
            "-XX:InitiatingHeapOccupancyPercent=30",
            "-XX:ParallelGCThreads=2",
            "-XX:ConcGCThreads=1",
            "-XX:MaxDirectMemorySize=256m",
            "-XX:ReservedCodeCacheSize=64m",
            "-XX:-OmitStackTraceInFastThrow",
            # the official launcher's flags that the Python client and Java 9+ rely on
            "-Des.distribution.flavor=default",
            "-Des.distribution.type=tar",
            "-Djava.locale.providers=SPI,COMPAT",
            "-Dfile.encoding=UTF-8",
            "-Des.networkaddress.cache.ttl=60",
            "-Des.networkaddress.cache.negative.ttl=10",
            "-Djna.nosys=true",
            "-Dio.netty.noUnsafe=true",
            "-Dio.netty.noKeySetOptimization=true",
            "-Dio.netty.recycler.maxCapacityPerThread=0",
            "-Dio.netty.allocator.numDirectArenas=0",
            "-Dlog4j.shutdownHookEnabled=false",
            "-Dlog4j2.disable.jmx=true",
            "-Dlog4j2.formatMsgNoLookups=true",
            f"-Djava.io.tmpdir={self.home / 'tmp'}",
        ]

    def command(self) -> list[str]:
        s = self.settings
        return [
            self.java,
            *self._jvm_flags(),
            "-cp",
            self.classpath,
            "nlp.local.LocalElasticsearch",
            "-numOfNode",
            "1",
            "-baseHttpPort",
            str(s.es_port - 1),  # node 1 listens on base + 1
            "-clusterName",
            s.es_cluster_name,
            "-basePath",
            str(self.home),
            "-confPath",
            str(self.home / "config"),
            "-dataPath",
            str(self.home / "data"),
            "-logsPath",
            str(self.home / "logs"),
        ]

    def healthy(self) -> bool:
        """Our cluster (by name) answers on our port with status yellow or green."""
        try:
            root = self._get("/")
            health = self._get("/_cluster/health")
        except (OSError, ValueError):
            return False
        return (
            root.get("cluster_name") == self.settings.es_cluster_name
            and root.get("version", {}).get("number") == ELASTICSEARCH_VERSION
            and health.get("status") in ("yellow", "green")
        )

    def _get(self, path: str) -> dict:
        base = f"http://{self.settings.host}:{self.settings.es_port}"
        with urllib.request.urlopen(base + path, timeout=3) as resp:
            return json.loads(resp.read())

    def endpoints(self) -> dict[str, str]:
        return {
            "http": f"http://{self.settings.host}:{self.settings.es_port}",
            "transport": f"{self.settings.host}:{self.settings.es_transport_port}",
        }
