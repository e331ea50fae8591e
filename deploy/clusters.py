"""The ARK Twitter word clusters, resolved from Maven Central at set-up time.

deploy/maven/ark-clusters/pom.xml names `edu.cmu.cs:ark-tweet-nlp:0.3.2`; Maven puts the
jar in ~/.m2 (as for the Kafka and Elasticsearch jars, see deploy/jvm.py) and the cluster
file `cmu/arktweetnlp/50mpaths2` (GPL-2.0, never committed) is extracted into
``<state dir>/ark-clusters/``, where the POS tagger reads it in training and in Triton
(nlp_models/pos/clusters.py; ``NLP_POS_CLUSTERS`` overrides the path). ``python -m
deploy.local prepare`` (run by deploy/setup.sh) and ``up triton`` call :func:`resolve`.
"""

from __future__ import annotations

import hashlib
import os
import zipfile
from pathlib import Path

from deploy.jvm import MAVEN_DIR, classpath
from deploy.process import DeployError
from services.settings import Settings

MEMBER = "cmu/arktweetnlp/50mpaths2"
MAVEN_POM = MAVEN_DIR / "ark-clusters" / "pom.xml"
#: sha256 of 50mpaths2 in ark-tweet-nlp-0.3.2.jar (checked after extraction)
SHA256 = "67bdd062869a58949a1d6a3def0fcadc9c835ad63ed27dfc7dde36b79c929169"


def cluster_path(settings: Settings) -> Path:
    explicit = os.environ.get("NLP_POS_CLUSTERS", "").strip()
    if explicit:
        return Path(explicit)
    return settings.state_dir / "ark-clusters" / MEMBER.rsplit("/", 1)[1]


#: where Maven keeps the jar by default; used as is when present (saves a Maven run per
#: fresh state dir, e.g. the tests' private Triton servers); its contents are checked anyway
LOCAL_JAR = (
    Path.home() / ".m2" / "repository" / "edu" / "cmu" / "cs" / "ark-tweet-nlp" / "0.3.2"
    / "ark-tweet-nlp-0.3.2.jar"
)


def resolve(settings: Settings) -> Path:
    """The extracted cluster file; resolves the jar with Maven and extracts it if needed."""
    target = cluster_path(settings)
    if target.is_file():
        return target
    if os.environ.get("NLP_POS_CLUSTERS", "").strip():
        raise DeployError(f"NLP_POS_CLUSTERS={target} does not exist; unset it to resolve "
                          "the ARK clusters from Maven Central into the state dir")
    if LOCAL_JAR.is_file():
        jars = [str(LOCAL_JAR)]
    else:
        cp = classpath("ark-clusters", settings.state_dir / "jars")
        jars = [j for j in cp.split(os.pathsep) if Path(j).name.startswith("ark-tweet-nlp")]
    if not jars:
        raise DeployError(f"Maven resolved no ark-tweet-nlp jar (classpath: {cp!r})")
    with zipfile.ZipFile(jars[0]) as jar:
        try:
            data = jar.read(MEMBER)
        except KeyError:
            raise DeployError(f"{jars[0]} has no {MEMBER}") from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != SHA256:
        raise DeployError(f"{MEMBER} in {jars[0]} has sha256 {digest}, expected {SHA256}")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, target)
    return target
