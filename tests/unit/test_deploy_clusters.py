"""deploy/clusters.py: the ARK cluster file is extracted from the Maven-resolved jar."""

import hashlib
import zipfile

import pytest

from deploy import clusters
from deploy.process import DeployError
from services.settings import Settings

DATA = b"0010\tlol\t100\n11100\tcool\t80\n"


@pytest.fixture()
def fake_jar(tmp_path, monkeypatch):
    jar = tmp_path / "m2" / "ark-tweet-nlp-0.3.2.jar"
    jar.parent.mkdir()
    with zipfile.ZipFile(jar, "w") as z:
        z.writestr(clusters.MEMBER, DATA)
    calls = []

    def classpath(component, cache_dir):
        calls.append((component, cache_dir))
        return f"/elsewhere/other.jar:{jar}"

    monkeypatch.setattr(clusters, "classpath", classpath)
    monkeypatch.setattr(clusters, "LOCAL_JAR", tmp_path / "no-m2" / "ark.jar")
    monkeypatch.delenv("NLP_POS_CLUSTERS", raising=False)
    return calls


def test_the_cluster_file_is_extracted_into_the_state_dir_once(tmp_path, fake_jar, monkeypatch):
    monkeypatch.setattr(clusters, "SHA256", hashlib.sha256(DATA).hexdigest())
    settings = Settings.from_env({"NLP_STATE_DIR": str(tmp_path / "state")})
    path = clusters.resolve(settings)
    assert path == tmp_path / "state" / "ark-clusters" / "50mpaths2"
    assert path.read_bytes() == DATA
    assert fake_jar == [("ark-clusters", tmp_path / "state" / "jars")]
    assert clusters.resolve(settings) == path and len(fake_jar) == 1  # no second Maven run


def test_a_jar_with_other_contents_is_refused(tmp_path, fake_jar):
    settings = Settings.from_env({"NLP_STATE_DIR": str(tmp_path / "state")})
    with pytest.raises(DeployError, match="sha256"):
        clusters.resolve(settings)  # the pinned digest is that of the real 50mpaths2
    assert not (tmp_path / "state" / "ark-clusters" / "50mpaths2").exists()


def test_a_missing_explicit_path_is_an_error_not_a_silent_fallback(tmp_path, monkeypatch):
    monkeypatch.setenv("NLP_POS_CLUSTERS", str(tmp_path / "missing"))
    settings = Settings.from_env({"NLP_STATE_DIR": str(tmp_path / "state")})
    with pytest.raises(DeployError, match="NLP_POS_CLUSTERS"):
        clusters.resolve(settings)


def test_the_pom_names_the_ark_jar_from_maven_central():
    pom = (clusters.MAVEN_POM).read_text()
    assert "<groupId>edu.cmu.cs</groupId>" in pom
    assert "<artifactId>ark-tweet-nlp</artifactId>" in pom and "<version>0.3.2</version>" in pom
