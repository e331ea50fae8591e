"""The refresh path on the real servers: a new POS tagger is published and rolled back
while posts and articles stream through the pipeline and clients call Triton directly.

Specification (issue 22): zero requests fail, zero posts or articles are lost or
dead-lettered, posts
sent after each switch are indexed with the version that then serves, a checkpoint trained
for a handful of steps is refused by the gate with both models' metrics in the output, and
a publish killed between copying and renaming leaves a repository Triton loads as before.

The test runs its own tritonserver on a copy of the model repository (hard links: publish
writes new directories and renames, it never writes into an existing file), so the shipped
repository is never touched; Kafka and Elasticsearch are the session's.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

from deploy.harness import PipelineRun, post_bytes
from deploy.testing import ElasticsearchInfo, KafkaInfo, TritonInfo, private_env, running
from services.pb import messages_pb2 as pb
from services.settings import REPO_ROOT, Settings

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(1200)]

DATA = REPO_ROOT / "tests" / "data"
GATE = [f"--gate-data={DATA / 'ritter_test_first40.conll'}:ptb",
        f"--gate-data={DATA / 'daily547_first60.conll'}:ark"]
TEXTS = [json.loads(line)["text"]
         for line in (DATA / "hashtag_en_sample.jsonl").read_text().splitlines()]
ARTICLES = [json.loads(line) for line in
            (REPO_ROOT / "deploy" / "sample_data" / "articles.jsonl").read_text().splitlines()]

# A tagger trained for a handful of steps: 4 batches of the two test samples, small sizes.
BAD_CONFIG = """
name = "pos_bad"
[model]
variant = "dcnn"
word_dim = 32
char_dim = 8
char_filters = 8
char_widths = [2, 3]
window = 1
context_hidden = 8
context_dim = 4
hidden = 16
hyper_hidden = 8
hyper_embed = 4
dropout = 0.1
[data]
train = { "ritter/train" = "ptb", "ark_oct27/train" = "ark" }
dev = { "ritter/train" = "ptb" }
[train]
epochs = 1
batch_size = 32
lr = 0.002
clip = 5.0
threads = 1
seed = 1
"""


@pytest.fixture(scope="module")
def refresh_triton(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TritonInfo]:
    """A private tritonserver on a hard-linked copy of the four models."""
    root = tmp_path_factory.mktemp("refresh")
    repo = root / "model_repository"
    for model in ("pos_tagger", "hashtag_generator", "headline_generator",
                  "constrained_headline_generator"):
        shutil.copytree(REPO_ROOT / "model_repository" / model, repo / model,
                        ignore=shutil.ignore_patterns("__pycache__"), copy_function=os.link)
    key = secrets.token_urlsafe(16)
    env = {**private_env(root / "state", repo), "NLP_TRITON_ADMIN_KEY": key}
    saved = os.environ.get("NLP_TRITON_ADMIN_KEY")
    os.environ["NLP_TRITON_ADMIN_KEY"] = key  # the server and every publish read it
    try:
        with running("triton", Settings.from_env({**os.environ, **env})) as info:
            yield info  # type: ignore[misc]
    finally:
        if saved is None:
            os.environ.pop("NLP_TRITON_ADMIN_KEY", None)
        else:
            os.environ["NLP_TRITON_ADMIN_KEY"] = saved


def training_cli(*args: str, check: bool = False,
                 env: dict[str, str] | None = None) -> tuple[int, dict, str]:
    """Run ``python -m training ARGS`` (``env`` added to this process's environment): (exit
    status, last stdout line as JSON, stderr)."""
    proc = subprocess.run([sys.executable, "-m", "training", *args], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, **(env or {})})
    assert proc.stdout.strip(), proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    if check:
        assert proc.returncode == 0, (result, proc.stderr[-3000:])
    return proc.returncode, result, proc.stderr


@dataclass
class Traffic:
    """Posts and articles into the pipeline and direct gRPC requests to Triton, until
    stopped."""

    run: PipelineRun
    grpc_url: str
    sent: list[tuple[str, float]] = field(default_factory=list)  # (post id, time sent)
    articles: list[str] = field(default_factory=list)  # ids sent
    versions: list[str] = field(default_factory=list)  # of direct requests
    errors: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def start(self) -> list[threading.Thread]:
        threads = [threading.Thread(target=target)
                   for target in (self._posts, self._articles, self._direct)]
        for t in threads:
            t.start()
        return threads

    def _posts(self) -> None:
        def items() -> Iterator[tuple[bytes, bytes]]:
            i = 0
            while not self.stop.is_set():
                post_id = f"{self.run.name}-{i}"
                self.sent.append((post_id, time.monotonic()))
                yield post_id.encode(), post_bytes(post_id, TEXTS[i % len(TEXTS)])
                i += 1
        self.run.produce(items(), rate=20)

    def _articles(self) -> None:
        def items() -> Iterator[tuple[bytes, bytes]]:
            i = 0
            while not self.stop.is_set():
                sample = ARTICLES[i % len(ARTICLES)]
                article = pb.Article(
                    id=f"{self.run.name}-a{i}", source=sample["source"], lang=sample["lang"],
                    title=sample["title"], body=sample["body"],
                    required_phrases=sample["required_phrases"])
                self.articles.append(article.id)
                yield article.id.encode(), article.SerializeToString()
                i += 1
        self.run.produce(items(), rate=0.5, topic=self.run.topics.articles_raw)

    def _direct(self) -> None:
        client = grpcclient.InferenceServerClient(self.grpc_url)
        arr = np.array([TEXTS[0].encode()], dtype=object).reshape(-1, 1)
        while not self.stop.is_set():
            inp = grpcclient.InferInput("TEXT", list(arr.shape), "BYTES")
            inp.set_data_from_numpy(arr)
            try:
                self.versions.append(client.infer("pos_tagger", [inp]).get_response()
                                     .model_version)
            except Exception as exc:  # every failure is a test failure
                self.errors.append(repr(exc))
            time.sleep(0.02)

    def sent_after(self, moment: float) -> list[str]:
        """Posts sent after ``moment`` (time.monotonic())."""
        return [post_id for post_id, at in self.sent if at > moment]


def test_publish_and_rollback_under_traffic_lose_nothing_and_switch_versions(
    kafka: KafkaInfo, elasticsearch: ElasticsearchInfo, refresh_triton: TritonInfo,
    tmp_path: Path,
) -> None:
    repo = Path(refresh_triton.model_repository)
    serving = max(int(p.name) for p in (repo / "pos_tagger").iterdir() if p.name.isdigit())
    old, new = str(serving), str(serving + 1)  # the shipped version and the one published here
    shipped = repo / "pos_tagger" / old / "pos_tagger.pt"
    triton = f"--triton={refresh_triton.http_url}"
    run = PipelineRun.create(Settings.from_env(), "refresh",
                             NLP_TRITON_GRPC_PORT=str(refresh_triton.grpc_port),
                             NLP_TRITON_HTTP_PORT=str(refresh_triton.http_port))
    traffic = Traffic(run, refresh_triton.grpc_url)
    worker = run.start_worker()
    threads = traffic.start()
    try:
        time.sleep(3)
        # a candidate as good as the serving tagger (its weights) passes the gate
        status, published, _ = training_cli(
            "publish", "pos_tagger", f"--checkpoint={shipped}", f"--repository={repo}",
            triton, *GATE, check=True)
        switched_up = time.monotonic()
        assert published["published"] and published["version"] == serving + 1, published
        assert published["previous_version"] == serving and published["gate"]["passed"]
        card = json.loads((repo / "pos_tagger" / new / "card.json").read_text())
        assert card["files"]["pos_tagger.pt"]["sha256"] == _sha256(shipped)
        time.sleep(5)
        rolling_back = time.monotonic()
        status, back, _ = training_cli("rollback", "pos_tagger", f"--repository={repo}", triton,
                                       check=True)
        switched_back = time.monotonic()
        assert back["version"] == serving and back["previous_version"] == serving + 1, back
        time.sleep(5)
    finally:
        traffic.stop.set()
        for t in threads:
            t.join()
    ids = [post_id for post_id, _ in traffic.sent]
    assert run.wait_indexed(ids, timeout=300), "not every post was indexed"
    assert run.wait_indexed(traffic.articles, timeout=300, pattern=run.article_index_pattern), \
        "not every article was indexed"
    outcome = run.outcome(ids)
    docs = run.sources(["pos_model"])
    article_letters = [x for topic in (run.topics.articles_raw_dlq,
                                       run.topics.articles_headlines_dlq)
                       for x in run.topic_records(topic)]
    run.cleanup()

    after_up = set(traffic.sent_after(switched_up)) - set(traffic.sent_after(rolling_back))
    after_back = traffic.sent_after(switched_back)
    print(json.dumps({"posts": len(ids), **outcome, "direct_requests": len(traffic.versions),
                      "direct_failed": len(traffic.errors),
                      "direct_by_version": {v: traffic.versions.count(v)
                                            for v in sorted(set(traffic.versions))},
                      "posts_sent_while_new_served": len(after_up),
                      "posts_sent_after_rollback": len(after_back),
                      "articles": len(traffic.articles),
                      "articles_dead_lettered": len(article_letters)}))
    assert not traffic.errors, traffic.errors[:3]
    assert {old, new} <= set(traffic.versions)
    assert outcome["lost"] == 0 and outcome["good_dead_lettered"] == 0, outcome
    assert outcome["duplicate_documents"] == 0, outcome
    assert traffic.articles and article_letters == []
    assert "failed (attempt" not in worker.log(), "the worker retried a request"
    assert after_up and after_back
    assert {docs[i]["pos_model"]["version"] for i in after_up} == {new}
    assert {docs[i]["pos_model"]["version"] for i in after_back} == {old}
    # two versions are kept on disk, so any older one was removed by the publish
    assert visible(repo / "pos_tagger") == [old, "config.pbtxt", f"retired-{new}"]


def test_a_checkpoint_trained_for_a_handful_of_steps_is_refused_with_its_metrics(
    refresh_triton: TritonInfo, tmp_path: Path,
) -> None:
    data = tmp_path / "data" / "pos"
    for rel, sample in (("ritter/train", "ritter_test_first40"),
                        ("ark_oct27/train", "daily547_first60")):
        (data / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(DATA / f"{sample}.conll", data / f"{rel}.conll")
    config = tmp_path / "pos_bad.toml"
    config.write_text(BAD_CONFIG)
    subprocess.run([sys.executable, "-m", "training", "train", "pos", f"--config={config}",
                    f"--out={tmp_path / 'runs'}"], cwd=REPO_ROOT, check=True, timeout=600,
                   capture_output=True, env={**os.environ, "NLP_DATA_DIR": str(tmp_path / "data")})
    bad = tmp_path / "runs" / "pos_bad" / "best.pt"
    repo = Path(refresh_triton.model_repository)
    before = visible(repo / "pos_tagger")

    status, result, _ = training_cli("publish", "pos_tagger", f"--checkpoint={bad}",
                                     f"--repository={repo}",
                                     f"--triton={refresh_triton.http_url}", *GATE)

    assert status == 3 and result["published"] is False, result
    assert "gate refused" in result["reason"]
    for scores in result["gate"]["sets"].values():
        assert scores["candidate"]["accuracy"] < scores["serving"]["accuracy"] - 0.2
    assert visible(repo / "pos_tagger") == before
    run_record = json.loads((bad.parent / "run.json").read_text())
    assert [d["path"] for d in run_record["data"]][0].endswith("ritter/train.conll")


def test_a_publish_killed_before_its_rename_leaves_the_served_repository_as_it_was(
    refresh_triton: TritonInfo,
) -> None:
    repo = Path(refresh_triton.model_repository)
    model_dir = repo / "pos_tagger"
    serving = max(int(p.name) for p in model_dir.iterdir() if p.name.isdigit())
    checkpoint = model_dir / str(serving) / "pos_tagger.pt"
    # The publish process SIGKILLs itself where the rename would happen: files copied,
    # card written, fsynced, not yet renamed.
    crash = ("import os, signal, sys; import training.repository as r; "
             "r.ModelDir.commit = lambda *a: os.kill(os.getpid(), signal.SIGKILL); "
             "from training.__main__ import main; main(sys.argv[1:])")
    proc = subprocess.run([sys.executable, "-c", crash, "publish", "pos_tagger",
                           f"--checkpoint={checkpoint}", f"--repository={repo}",
                           f"--triton={refresh_triton.http_url}", *GATE],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == -9, proc.stderr[-2000:]
    staged = [p for p in model_dir.iterdir() if p.name.startswith(".staging-")]
    assert staged and (staged[0] / "pos_tagger.pt").exists()

    # Triton loads the repository as it was: the staging directory is not a version
    headers = {"triton-admin-key": os.environ["NLP_TRITON_ADMIN_KEY"]}
    httpclient.InferenceServerClient(refresh_triton.http_url).load_model("pos_tagger",
                                                                         headers=headers)
    client = grpcclient.InferenceServerClient(refresh_triton.grpc_url)
    assert client.is_model_ready("pos_tagger", str(serving))

    # the next publish clears the leftovers and succeeds
    _, result, _ = training_cli("publish", "pos_tagger", f"--checkpoint={checkpoint}",
                                f"--repository={repo}", f"--triton={refresh_triton.http_url}",
                                *GATE, check=True)
    assert not [p for p in model_dir.iterdir() if p.name.startswith(".staging-")]
    assert client.is_model_ready("pos_tagger", str(result["version"]))


def test_publish_switches_the_configured_triton_gates_against_what_it_serves_and_rollback_returns_to_the_last_served(  # noqa: E501
    refresh_triton: TritonInfo,
) -> None:
    """The README's refresh paragraph, with no --triton flag: the configured Triton
    (NLP_TRITON_HOST/NLP_TRITON_HTTP_PORT) is the one switched and asked."""
    repo = Path(refresh_triton.model_repository)
    configured = {"NLP_TRITON_HOST": refresh_triton.host,
                  "NLP_TRITON_HTTP_PORT": str(refresh_triton.http_port)}
    control = httpclient.InferenceServerClient(refresh_triton.http_url)
    headers = {"triton-admin-key": os.environ["NLP_TRITON_ADMIN_KEY"]}

    def serving() -> list[str]:
        return sorted(str(row["version"]) for row in
                      control.get_model_repository_index(headers=headers)
                      if row["name"] == "pos_tagger" and row.get("state") == "READY")

    [start] = serving()
    weights = repo / "pos_tagger" / start / "pos_tagger.pt"
    common = ("pos_tagger", f"--repository={repo}")

    # --no-switch: a new version on disk, Triton still serves the old one, and says so
    _, staged, err = training_cli("publish", *common, f"--checkpoint={weights}", "--no-switch",
                                  *GATE, env=configured, check=True)
    unserved = staged["version"]
    assert staged["published"] and not staged["switched"] and serving() == [start]
    assert staged["reference"] == "triton" and "staged only" in err
    _, versions, _ = training_cli("inspect", "versions", f"--repository={repo}",
                                  env=configured, check=True)
    states = {row["version"]: row["state"] for row in versions["pos_tagger"]["versions"]}
    assert states[int(start)] == "serving" and states[unserved] == "never served"

    # no flags: gated against the version Triton serves (not the newer one on disk), switched
    _, published, _ = training_cli("publish", *common, f"--checkpoint={weights}", *GATE,
                                   env=configured, check=True)
    assert published["reference"] == "triton" and published["previous_version"] == int(start)
    assert published["gate"]["serving"].endswith(f"/{start}/pos_tagger.pt")
    assert published["switched"] and serving() == [str(published["version"])]

    # rollback: back to the last version that served, past the never-served one
    _, back, _ = training_cli("rollback", *common, env=configured, check=True)
    assert back["version"] == int(start) and back["switched"] and serving() == [start]
    assert back["retired"] == [unserved, published["version"]]


def visible(model_dir: Path) -> list[str]:
    """What Triton looks at in a model directory (not the lock or staging directories)."""
    return sorted(p.name for p in model_dir.iterdir() if not p.name.startswith("."))


def _sha256(path: Path) -> str:
    from training.provenance import sha256

    return sha256(path)


NEWSROOM = [json.loads(line) for line in
            (DATA / "newsroom_doj_sample.jsonl").read_text().splitlines()]


def newsroom_article(run: PipelineRun, i: int, row: dict, suffix: str = "") -> pb.Article:
    from datetime import UTC, datetime

    article = pb.Article(id=f"{run.name}-n{i}{suffix}", source="doj-press-office", lang="en",
                         title=row["headline"], body=row["article"])
    article.published_at.FromDatetime(datetime.fromisoformat(row["date"]).replace(tzinfo=UTC))
    return article


def test_a_newsroom_adapts_the_generator_from_its_indexed_articles_and_the_new_headlines_are_served(  # noqa: E501
    kafka: KafkaInfo, elasticsearch: ElasticsearchInfo, refresh_triton: TritonInfo,
    tmp_path: Path,
) -> None:
    """docs/refresh.md's "adapt to your newsroom" cycle, small: a newsroom's 160 articles
    with their editors' titles go through the pipeline; `adapt --from-index` fine-tunes the
    served English generator on them (its newest 50 held out); `publish` gates the result on
    those 50 and a generic set and switches Triton; articles sent afterwards get headlines
    of the new version, and some of them differ from the old version's."""
    repo = Path(refresh_triton.model_repository)
    serving = max(int(p.name) for p in (repo / "headline_generator").iterdir()
                  if p.name.isdigit())
    run = PipelineRun.create(Settings.from_env(), "adapt",
                             NLP_TRITON_GRPC_PORT=str(refresh_triton.grpc_port),
                             NLP_TRITON_HTTP_PORT=str(refresh_triton.http_port))
    run.start_worker()
    try:
        archive = [newsroom_article(run, i, row) for i, row in enumerate(NEWSROOM)]
        run.produce(((a.id.encode(), a.SerializeToString()) for a in archive),
                    topic=run.topics.articles_raw)
        assert run.wait_indexed([a.id for a in archive], timeout=600,
                                pattern=run.article_index_pattern), "archive not indexed"

        out = tmp_path / "adapted"
        _, adapted, _ = training_cli(
            "adapt", "headline", "--from-index", "--source=doj-press-office", "--lang=en",
            f"--out={out}", "--minutes=2", "--epochs=1", "--mix=0",
            env={"NLP_ARTICLE_INDEX_PREFIX": f"{run.name}-articles"}, check=True)
        assert adapted["pairs"] == 110 and adapted["checkpoint"] == str(out / "best.pt")
        held = [json.loads(line)["headline"] for line in (out / "holdout.jsonl").open()]
        assert held == [row["headline"] for row in NEWSROOM[-50:]]  # the newest 50

        # --force: two minutes of adapting may not beat the served model on 20 pairs; what
        # is checked is that the gate judged it on the newsroom's pairs and a generic set
        _, published, _ = training_cli(
            "publish", "headline_generator", f"--checkpoint={out / 'best.pt'}",
            f"--repository={repo}", f"--triton={refresh_triton.http_url}",
            f"--gate-data={DATA / 'headline_en_sample.jsonl'}:en", "--gate-size=20",
            "--force", check=True)
        gate = published["gate"]
        assert published["switched"] and published["version"] == serving + 1
        assert gate["adapted"]["newsroom_set"] == "newsroom holdout"
        assert {role for name, roles in gate["sets"].items() for role in roles
                if name.startswith("newsroom holdout[:20]")} >= {"candidate", "serving"}

        later = [newsroom_article(run, i, row, "-again")
                 for i, row in enumerate(NEWSROOM[-20:])]
        run.produce(((a.id.encode(), a.SerializeToString()) for a in later),
                    topic=run.topics.articles_raw)
        assert run.wait_indexed([a.id for a in later], timeout=300,
                                pattern=run.article_index_pattern), "later articles not indexed"
        docs = run.sources(["best_headline", "candidates"], run.article_index_pattern)
    finally:
        run.cleanup()
    before = [docs[f"{run.name}-n{140 + i}"] for i in range(20)]
    after = [docs[a.id] for a in later]
    assert {c["model"]["version"] for d in after for c in d["candidates"]
            if c["kind"] == "full"} == {str(serving + 1)}
    changed = sum(a["best_headline"] != b["best_headline"]
                  for a, b in zip(after, before, strict=True))
    print(json.dumps({"adapted": adapted, "changed_headlines": changed,
                      "examples": [[b["best_headline"], a["best_headline"]]
                                   for a, b in zip(after[:5], before[:5], strict=True)]}))
    assert changed > 0
