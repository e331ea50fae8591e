"""The headline API on a real server process against the real Triton.

Each fixture starts `python -m services.headline_api` as a subprocess (as in production)
with its own settings: plain, with an API key and a concurrency limit of 1, with TLS, and
pointed at a port where no Triton listens. Checked: candidates and phrases, every status
the API promises, deadlines (shortened and expired, with the work freed), streaming order,
concurrent requests, health, metrics, and a call from grpcurl through reflection.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from deploy.settings import REPO_ROOT
from deploy.testing import TritonInfo, free_ports
from services.pb import headline_api_pb2 as api
from services.pb import headline_api_pb2_grpc as api_grpc
from training.headline.metrics import contains_phrase

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

ARTICLE = ("Toyota Motor Corp said on Tuesday it would recall about 1.2 million vehicles in "
           "Japan and the United States to fix faulty brake pedals, the largest recall in the "
           "company's history. The carmaker said no accidents had been reported. " * 8)
SERVICE = "nlp_pipeline.headline.v1.HeadlineService"


@dataclass
class Server:
    proc: subprocess.Popen
    port: int
    metrics_port: int
    log: Path

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stub(self, credentials: grpc.ChannelCredentials | None = None):
        channel = (grpc.secure_channel(self.address, credentials) if credentials
                   else grpc.insecure_channel(self.address))
        return api_grpc.HeadlineServiceStub(channel), channel


def start_server(triton: TritonInfo, tmp: Path, triton_port: int | None = None,
                 **env: str) -> Server:
    port, metrics_port = free_ports(2)
    log = tmp / f"api-{port}.log"
    environment = {k: v for k, v in os.environ.items() if not k.startswith("NLP_HEADLINE_")}
    environment.update(NLP_TRITON_GRPC_PORT=str(triton_port or triton.grpc_port),
                       NLP_HEADLINE_METRICS_PORT=str(metrics_port), **env)
    proc = subprocess.Popen([sys.executable, "-m", "services.headline_api", "--port", str(port)],
                            cwd=REPO_ROOT, env=environment, stdout=log.open("wb"),
                            stderr=subprocess.STDOUT)
    server = Server(proc, port, metrics_port, log)
    deadline = time.monotonic() + 60
    while '"event": "started"' not in log.read_text(errors="replace"):
        if proc.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"headline API did not start:\n{log.read_text()[-3000:]}")
        time.sleep(0.2)
    return server


def stop_server(server: Server) -> None:
    server.proc.terminate()
    try:
        server.proc.wait(20)
    except subprocess.TimeoutExpired:
        server.proc.kill()


@pytest.fixture(scope="module")
def plain(triton: TritonInfo, tmp_path_factory) -> Iterator[Server]:
    server = start_server(triton, tmp_path_factory.mktemp("api"))
    yield server
    stop_server(server)


@pytest.fixture(scope="module")
def guarded(triton: TritonInfo, tmp_path_factory) -> Iterator[Server]:
    server = start_server(triton, tmp_path_factory.mktemp("api"), NLP_HEADLINE_API_KEY="s3cret",
                          NLP_HEADLINE_MAX_CONCURRENT="1")
    yield server
    stop_server(server)


def code_of(call) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as info:
        call()
    return info.value.code()


def test_suggestions_contain_full_and_constrained_candidates(plain: Server) -> None:
    stub, channel = plain.stub()
    with channel:
        response, call = stub.Suggest.with_call(api.SuggestRequest(
            article=ARTICLE, required_phrases=["Toyota", "brake pedals"], num_candidates=2),
            timeout=30)
    kinds = [(c.kind, c.phrase) for c in response.candidates]
    assert kinds[:2] == [(api.FULL, "")] * 2  # full first, then per phrase in request order
    assert [p for k, p in kinds if k == api.CONSTRAINED] == ["Toyota"] * 2 + ["brake pedals"] * 2
    for c in response.candidates:
        assert c.text.strip() and c.model.version
        if c.kind == api.CONSTRAINED:
            assert contains_phrase(c.text, c.phrase, "en") and c.order == "tok-b"
    assert response.language == "en" and not response.truncated
    assert ("x-request-id", response.request_id) in call.trailing_metadata()


def test_up_to_five_candidates_per_generator_can_be_asked_for(plain: Server) -> None:
    stub, channel = plain.stub()
    with channel:
        response = stub.Suggest(api.SuggestRequest(article=ARTICLE, required_phrases=["Toyota"],
                                                   num_candidates=5), timeout=60)
    kinds = [c.kind for c in response.candidates]
    assert (kinds.count(api.FULL), kinds.count(api.CONSTRAINED)) == (5, 5)
    assert len({c.text for c in response.candidates if c.kind == api.FULL}) == 5


@pytest.mark.parametrize(
    ("fields", "fragment"),
    [
        ({"article": ""}, "article is empty"),
        ({"article": "x" * 100_001}, "limit is 100000"),
        ({"required_phrases": [f"p{i}" for i in range(6)]}, "at most 5"),
        ({"required_phrases": ["z" * 101]}, "limit is 100"),
        ({"language": "fr"}, "not supported"),
        ({"required_phrases": ["丰田汽车公司"]}, "unsupported_phrase"),
        ({"required_phrases": [" ".join("w" * 49)]}, "phrase_too_long"),  # 97 chars, 49 tokens
    ],
)
def test_invalid_requests_get_invalid_argument_with_a_reason(plain: Server, fields,
                                                            fragment) -> None:
    stub, channel = plain.stub()
    with channel, pytest.raises(grpc.RpcError) as info:
        stub.Suggest(api.SuggestRequest(**{"article": ARTICLE, **fields}), timeout=30)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert fragment in info.value.details()


def test_an_expired_deadline_returns_deadline_exceeded_and_frees_the_work(
        guarded: Server) -> None:
    """The guarded server admits one request at a time: if the expired request still held
    its slot, the next one would get RESOURCE_EXHAUSTED."""
    stub, channel = guarded.stub()
    key = [("x-api-key", "s3cret")]
    with channel:
        assert code_of(lambda: stub.Suggest(api.SuggestRequest(article=ARTICLE), timeout=0.05,
                                            metadata=key)) == grpc.StatusCode.DEADLINE_EXCEEDED
        time.sleep(0.5)
        response = stub.Suggest(api.SuggestRequest(article=ARTICLE), timeout=30, metadata=key)
    assert response.candidates


def test_api_key_is_required_when_configured(guarded: Server) -> None:
    stub, channel = guarded.stub()
    with channel:
        request = api.SuggestRequest(article=ARTICLE)
        assert code_of(lambda: stub.Suggest(request, timeout=10)) == \
            grpc.StatusCode.UNAUTHENTICATED
        assert code_of(lambda: stub.Suggest(request, timeout=10,
                                            metadata=[("x-api-key", "wrong")])) == \
            grpc.StatusCode.UNAUTHENTICATED


def test_requests_beyond_the_concurrency_limit_are_resource_exhausted(guarded: Server) -> None:
    stub, channel = guarded.stub()
    request = api.SuggestRequest(article=ARTICLE, required_phrases=["Toyota", "recall"])

    def call(_):
        try:
            stub.Suggest(request, timeout=60, metadata=[("x-api-key", "s3cret")])
            return grpc.StatusCode.OK
        except grpc.RpcError as err:
            return err.code()

    with channel, ThreadPoolExecutor(4) as pool:
        codes = list(pool.map(call, range(4)))
    assert grpc.StatusCode.OK in codes and grpc.StatusCode.RESOURCE_EXHAUSTED in codes
    assert set(codes) <= {grpc.StatusCode.OK, grpc.StatusCode.RESOURCE_EXHAUSTED}


def test_triton_down_gives_unavailable(triton: TritonInfo, tmp_path) -> None:
    (nothing,) = free_ports(1)
    server = start_server(triton, tmp_path, triton_port=nothing)
    try:
        stub, channel = server.stub()
        with channel:
            assert code_of(lambda: stub.Suggest(api.SuggestRequest(article=ARTICLE),
                                                timeout=20)) == grpc.StatusCode.UNAVAILABLE
            health = health_pb2_grpc.HealthStub(channel)
            time.sleep(2.5)
            status = health.Check(health_pb2.HealthCheckRequest(service=SERVICE), timeout=5)
            assert status.status == health_pb2.HealthCheckResponse.NOT_SERVING
    finally:
        stop_server(server)


def test_streaming_sends_each_generators_candidates_as_it_finishes(plain: Server) -> None:
    stub, channel = plain.stub()
    request = api.SuggestRequest(article=ARTICLE, required_phrases=["Toyota", "recall"],
                                 num_candidates=2)
    with channel:
        streamed = list(stub.SuggestStream(request, timeout=60))
        unary = stub.Suggest(request, timeout=60).candidates
    groups = [(c.kind, c.phrase) for c in streamed]
    runs = [g for i, g in enumerate(groups) if i == 0 or groups[i - 1] != g]
    assert len(runs) == len(set(runs)) == 3  # each generator's candidates arrive together
    assert sorted((c.kind, c.phrase, c.text) for c in streamed) == sorted(
        (c.kind, c.phrase, c.text) for c in unary)


def test_concurrent_requests_are_all_served(plain: Server) -> None:
    stub, channel = plain.stub()
    with channel, ThreadPoolExecutor(4) as pool:
        responses = list(pool.map(
            lambda i: stub.Suggest(api.SuggestRequest(article=ARTICLE, num_candidates=1),
                                   timeout=120), range(4)))
    assert all(len(r.candidates) == 1 for r in responses)
    assert len({r.request_id for r in responses}) == 4


def test_health_and_metrics(plain: Server) -> None:
    stub, channel = plain.stub()
    with channel:
        health = health_pb2_grpc.HealthStub(channel)
        for service in ("", SERVICE):
            reply = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
        stub.Suggest(api.SuggestRequest(article=ARTICLE), timeout=60)
    with urllib.request.urlopen(f"http://127.0.0.1:{plain.metrics_port}/metrics") as resp:
        text = resp.read().decode()
    assert 'headline_api_requests_total{code="OK",method="Suggest"}' in text
    assert "headline_api_request_seconds_bucket" in text
    assert '"request_id"' in plain.log.read_text()  # one JSON log line per request


GRPCURL = shutil.which("grpcurl") or str(REPO_ROOT / ".venv" / "bin" / "grpcurl")


@pytest.mark.skipif(not Path(GRPCURL).exists(), reason="grpcurl not built (deploy/setup.sh)")
def test_grpcurl_calls_the_api_through_reflection(plain: Server) -> None:
    listed = subprocess.run([GRPCURL, "-plaintext", plain.address, "list"], capture_output=True,
                            text=True, timeout=30, check=True).stdout
    assert SERVICE in listed.split()
    body = json.dumps({"article": ARTICLE, "required_phrases": ["Toyota"], "num_candidates": 1})
    out = subprocess.run([GRPCURL, "-plaintext", "-max-time", "60", "-d", body, plain.address,
                          f"{SERVICE}/Suggest"], capture_output=True, text=True, timeout=90,
                         check=True).stdout
    reply = json.loads(out)
    assert {c["kind"] for c in reply["candidates"]} == {"FULL", "CONSTRAINED"}
    assert "Toyota" in [c for c in reply["candidates"] if c["kind"] == "CONSTRAINED"][0]["text"]


def test_tls_serves_secure_clients_only(triton: TritonInfo, tmp_path) -> None:
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    server = start_server(triton, tmp_path, NLP_HEADLINE_TLS_CERT=str(cert),
                          NLP_HEADLINE_TLS_KEY=str(key))
    try:
        stub, channel = server.stub(grpc.ssl_channel_credentials(cert.read_bytes()))
        with channel:
            assert stub.Suggest(api.SuggestRequest(article=ARTICLE, num_candidates=1),
                                timeout=60).candidates
        plain_stub, plain_channel = server.stub()
        with plain_channel:
            assert code_of(lambda: plain_stub.Suggest(api.SuggestRequest(article=ARTICLE),
                                                      timeout=10)) == grpc.StatusCode.UNAVAILABLE
    finally:
        stop_server(server)
