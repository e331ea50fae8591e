"""The headline API on a real server process against the real Triton.

Each fixture starts `python -m services.headline_api` as a subprocess (as in production)
with its own settings: plain; with an API key, a concurrency limit of 1 and a queue of 1;
with a deadline cap of half a second; calling the wrong Triton model; with TLS and mutual
TLS; and pointed at a port where no Triton listens. Checked: candidates and phrases, every
status the API promises, inputs that used to crash a model, that no status message carries
server internals, the admission queue and its retry hint (and the CLI honouring it),
deadlines (shortened, expired, capped), streaming order, concurrent requests, health,
metrics, refusal to start with an API key over plaintext, grpcurl through reflection, and
(slow) reaching Triton again within seconds after a two-minute Triton outage.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from deploy.stack import server as stack_server
from deploy.testing import TritonInfo, free_ports
from services.pb import headline_api_pb2 as api
from services.pb import headline_api_pb2_grpc as api_grpc
from services.settings import REPO_ROOT, Settings
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
                          NLP_HEADLINE_ALLOW_INSECURE_KEY="1", NLP_HEADLINE_MAX_CONCURRENT="1",
                          NLP_HEADLINE_QUEUE_SIZE="1", NLP_HEADLINE_QUEUE_WAIT="30")
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
        ({"required_phrases": [" ".join("w" * 49)]}, "phrase_too_long"),  # 97 chars, 49 tokens
        # each of these crashed a model (INTERNAL with its stack trace) before the edge check
        ({"article": "\u200b\u200b\u200b"}, "no visible characters"),
        ({"article": "\ufeff"}, "no visible characters"),
        ({"article": "\u2581\u2581"}, "no visible characters"),
        ({"article": "\ufffd"}, "no visible characters"),
        ({"required_phrases": ["\u200b"]}, "contains U+200B ZERO WIDTH SPACE"),
        ({"required_phrases": ["\x01"]}, "contains U+0001"),
        ({"required_phrases": ["\ufffd"]}, "contains U+FFFD"),
        # and these only answered garbage or an oversized message
        ({"article": "\u200e\u200f\u202a"}, "no visible characters"),
        ({"article": "\x00\x01\x02"}, "no visible characters"),
        ({"required_phrases": ["Toy\u200bota"]}, "contains U+200B"),
        ({"language": "x" * 100_000}, "not a BCP-47 tag"),
    ],
)
def test_invalid_requests_get_invalid_argument_with_a_reason(plain: Server, fields,
                                                            fragment) -> None:
    stub, channel = plain.stub()
    with channel, pytest.raises(grpc.RpcError) as info:
        stub.Suggest(api.SuggestRequest(**{"article": ARTICLE, **fields}), timeout=30)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert fragment in info.value.details()


@pytest.mark.parametrize(
    ("fields", "fragment"),
    [
        ({"language": "fr"}, "'fr' has no headline model"),
        ({"required_phrases": ["丰田汽车公司"]}, "unsupported_phrase"),
    ],
)
def test_what_the_served_models_cannot_take_is_failed_precondition(plain: Server, fields,
                                                                   fragment) -> None:
    """As the proto documents: a language without a model, a phrase the language's model
    cannot use."""
    stub, channel = plain.stub()
    with channel, pytest.raises(grpc.RpcError) as info:
        stub.Suggest(api.SuggestRequest(**{"article": ARTICLE, **fields}), timeout=30)
    assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert fragment in info.value.details()


ODD_BUT_VALID = {
    "emoji only": {"article": "😀🎉🔥" * 20},
    "emoji only, Chinese": {"article": "😀🎉🔥" * 20, "language": "zh"},
    "Arabic": {"article": "أعلنت شركة تويوتا يوم الثلاثاء استدعاء مليون سيارة " * 5},
    "Thai": {"article": "โตโยต้าประกาศเรียกคืนรถยนต์หนึ่งล้านคัน " * 5},
    "combining marks on letters": {"article": "Toyo\u0301ta recalls cars\u0308 " * 5},
    "phrase longer than the article": {
        "article": "Toyota recall.",
        "required_phrases": ["Toyota recall of 1.2 million vehicles in Japan and the US"]},
    "phrase absent from the article": {"article": ARTICLE, "required_phrases": ["Volkswagen"]},
    "emoji phrase": {"article": ARTICLE, "required_phrases": ["🚗"]},
    "largest article, one token": {"article": "x" * 100_000},
    "largest article, Chinese": {"article": "丰田汽车公司周二宣布召回汽车" * 7142},
    "largest article, emoji": {"article": "😀" * 100_000, "required_phrases": ["Toyota"]},
    "five longest phrases": {"article": ARTICLE,
                             "required_phrases": [f"{i} " + "Toyota " * 13 + "x"
                                                  for i in range(5)]},
}


@pytest.mark.parametrize("name", sorted(ODD_BUT_VALID))
def test_odd_inputs_get_an_answer_or_a_reason_never_an_internal_error(plain: Server,
                                                                      name: str) -> None:
    stub, channel = plain.stub()
    with channel:
        try:
            response = stub.Suggest(api.SuggestRequest(**ODD_BUT_VALID[name]), timeout=120)
        except grpc.RpcError as err:
            assert err.code() in (grpc.StatusCode.INVALID_ARGUMENT,
                                  grpc.StatusCode.FAILED_PRECONDITION), err.details()
        else:  # a model copying a 100,000-emoji token writes no usable headline: dropped
            assert all(len(c.text) <= 300 for c in response.candidates)
            assert response.candidates or "emoji" in name


def test_an_internal_error_names_the_request_id_and_nothing_from_inside(
        triton: TritonInfo, tmp_path) -> None:
    """The server pointed at the POS tagger instead of the headline model: Triton refuses
    the call with the model's and its inputs' names. The client gets the request id; the
    server log keeps what happened under that id."""
    server = start_server(triton, tmp_path, NLP_HEADLINE_MODEL="pos_tagger")
    try:
        stub, channel = server.stub()
        with channel, pytest.raises(grpc.RpcError) as info:
            stub.Suggest(api.SuggestRequest(article=ARTICLE), timeout=30,
                         metadata=[("x-request-id", "probe-42")])
    finally:
        stop_server(server)
    err = info.value
    assert err.code() == grpc.StatusCode.INTERNAL
    assert err.details() == "internal error (request id probe-42)"
    assert ("x-request-id", "probe-42") in err.trailing_metadata()
    failure = [line for line in server.log.read_text().splitlines() if "probe-42" in line]
    assert any("failed with INTERNAL" in line for line in failure)
    assert "pos_tagger" in server.log.read_text()


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


def test_a_request_beyond_the_limit_waits_in_the_queue_and_one_beyond_it_gets_a_retry_hint(
        guarded: Server) -> None:
    """Limit 1, queue 1: of four requests at once one is served, one waits for its slot and
    is served after it, two are refused at once with when to retry."""
    stub, channel = guarded.stub()
    request = api.SuggestRequest(article=ARTICLE, required_phrases=["Toyota", "recall"])

    def call(_) -> tuple[grpc.StatusCode, dict, str]:
        try:
            stub.Suggest(request, timeout=60, metadata=[("x-api-key", "s3cret")])
            return grpc.StatusCode.OK, {}, ""
        except grpc.RpcError as err:
            return err.code(), dict(err.trailing_metadata() or ()), err.details()

    with channel, ThreadPoolExecutor(4) as pool:
        results = list(pool.map(call, range(4)))
    codes = sorted(code.name for code, _, _ in results)
    assert codes == ["OK", "OK", "RESOURCE_EXHAUSTED", "RESOURCE_EXHAUSTED"]
    for code, trailer, details in results:
        if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
            hint = int(trailer["retry-after-ms"])
            assert 100 <= hint <= 10_000 and f"retry after {hint} ms" in details


def test_the_cli_retries_a_busy_server_after_its_hint(guarded: Server) -> None:
    """Slot and queue kept taken by long requests until the CLI reports its first refusal;
    it waits the hinted time (with jitter), retries once the load is gone, and gets its
    candidates. (The load is refilled rather than sent once: on an idle machine two long
    requests can finish before the CLI's interpreter has even started.)"""
    stub, channel = guarded.stub()
    long = api.SuggestRequest(article=ARTICLE * 3, required_phrases=["Toyota", "recall"],
                              num_candidates=5)
    key = [("x-api-key", "s3cret")]
    refused = threading.Event()

    def keep_busy() -> None:
        while not refused.is_set():
            try:
                stub.Suggest(long, timeout=60, metadata=key)
            except grpc.RpcError:
                pass  # refused while the CLI holds the slot: try again

    # three callers for one slot and one queue place: the third, refused and retrying at
    # once, fills the moment a finished caller leaves before it sends again
    with channel, ThreadPoolExecutor(3) as pool:
        busy = [pool.submit(keep_busy) for _ in range(3)]
        time.sleep(0.3)
        cli = subprocess.Popen(
            [sys.executable, "-m", "services.headline_api.client", "--text", ARTICLE, "-n", "1",
             "--address", guarded.address, "--api-key", "s3cret", "--timeout", "60",
             "--json"], cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)
        assert cli.stderr is not None
        errors = []
        for line in cli.stderr:
            errors.append(line)
            if "RESOURCE_EXHAUSTED; retry 1/5 in" in line:
                refused.set()
        refused.set()
        out, _ = cli.communicate(timeout=90)
        for f in busy:
            f.result()
    stderr = "".join(errors)
    assert cli.returncode == 0, stderr
    assert "RESOURCE_EXHAUSTED; retry 1/5 in" in stderr and "(server hint)" in stderr
    assert json.loads(out)["candidates"]


@pytest.fixture(scope="module")
def capped(triton: TritonInfo, tmp_path_factory) -> Iterator[Server]:
    server = start_server(triton, tmp_path_factory.mktemp("api"),
                          NLP_HEADLINE_MAX_TIMEOUT="0.05", NLP_HEADLINE_TIMEOUT="0.05")
    yield server
    stop_server(server)


def test_a_client_deadline_beyond_the_cap_is_cut_to_it(capped: Server) -> None:
    """An hour's deadline on a server capped at 0.05 s: the 20 candidates of a long article
    take longer (a cap of 0.5 s was once beaten on an idle machine), so the call ends at the
    cap, saying so."""
    stub, channel = capped.stub()
    request = api.SuggestRequest(article=ARTICLE * 4, required_phrases=["Toyota", "recall",
                                                                         "brake pedals"],
                                 num_candidates=5)
    began = time.monotonic()
    with channel, pytest.raises(grpc.RpcError) as info:
        stub.Suggest(request, timeout=3600)
    assert info.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert "limit of 0.05 s per request" in info.value.details()
    assert time.monotonic() - began < 5


def test_an_api_key_without_tls_refuses_to_start(triton: TritonInfo, tmp_path) -> None:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("NLP_HEADLINE_")}
    environment.update(NLP_HEADLINE_API_KEY="s3cret", NLP_HEADLINE_METRICS_PORT="0",
                       NLP_TRITON_GRPC_PORT=str(triton.grpc_port))
    (port,) = free_ports(1)
    proc = subprocess.run([sys.executable, "-m", "services.headline_api", "--port", str(port)],
                          cwd=REPO_ROOT, env=environment, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 1
    assert "NLP_HEADLINE_API_KEY is set but TLS is off" in proc.stderr
    assert "Traceback" not in proc.stderr


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


def issue(tmp: Path, name: str, ca: tuple[Path, Path] | None = None) -> tuple[Path, Path]:
    """(key, certificate) for 127.0.0.1: self-signed when `ca` is None, else signed by it."""
    key, cert = tmp / f"{name}.key", tmp / f"{name}.pem"
    subject = ["-subj", f"/CN={name}", "-addext", "subjectAltName=IP:127.0.0.1"]
    if ca is None:
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                        *subject, "-keyout", str(key), "-out", str(cert)], check=True,
                       capture_output=True)
        return key, cert
    csr = tmp / f"{name}.csr"
    subprocess.run(["openssl", "req", "-newkey", "rsa:2048", "-nodes", *subject,
                    "-keyout", str(key), "-out", str(csr)], check=True, capture_output=True)
    subprocess.run(["openssl", "x509", "-req", "-in", str(csr), "-CA", str(ca[1]), "-CAkey",
                    str(ca[0]), "-CAcreateserial", "-days", "1", "-copy_extensions", "copy",
                    "-out", str(cert)], check=True, capture_output=True)
    return key, cert


def test_mutual_tls_serves_only_clients_with_a_certificate_from_the_client_ca(
        triton: TritonInfo, tmp_path) -> None:
    ca = issue(tmp_path, "ca")
    server_key, server_cert = issue(tmp_path, "server", ca)
    client_key, client_cert = issue(tmp_path, "client", ca)
    stranger_key, stranger_cert = issue(tmp_path, "stranger")  # not signed by the CA
    server = start_server(triton, tmp_path, NLP_HEADLINE_TLS_CERT=str(server_cert),
                          NLP_HEADLINE_TLS_KEY=str(server_key),
                          NLP_HEADLINE_TLS_CLIENT_CA=str(ca[1]))
    request = api.SuggestRequest(article=ARTICLE, num_candidates=1)

    def credentials(key: Path | None = None, cert: Path | None = None):
        return grpc.ssl_channel_credentials(
            ca[1].read_bytes(), private_key=key.read_bytes() if key else None,
            certificate_chain=cert.read_bytes() if cert else None)

    try:
        stub, channel = server.stub(credentials(client_key, client_cert))
        with channel:
            assert stub.Suggest(request, timeout=60).candidates
        for creds in (credentials(), credentials(stranger_key, stranger_cert)):
            stub, channel = server.stub(creds)
            with channel:
                assert code_of(lambda s=stub: s.Suggest(request, timeout=10)) == \
                    grpc.StatusCode.UNAVAILABLE
        cli = subprocess.run(
            [sys.executable, "-m", "services.headline_api.client", "--text", ARTICLE, "-n", "1",
             "--address", server.address, "--tls-ca", str(ca[1]), "--tls-cert",
             str(client_cert), "--tls-key", str(client_key), "--json"],
            cwd=REPO_ROOT, capture_output=True, text=True, timeout=90)
        assert cli.returncode == 0, cli.stderr
    finally:
        stop_server(server)


@pytest.mark.slow
@pytest.mark.disruptive
def test_after_a_triton_restart_the_api_reaches_it_again_within_seconds(
        triton: TritonInfo, tmp_path) -> None:
    """Triton down for two minutes, then back: gRPC's default reconnect backoff has grown
    towards its 120-s cap by then, and measured 30 s before the API reached Triton again;
    the Triton clients' channel options cap the backoff at 1 s. Triton is restarted for
    real, as whoever started it (so the session stops it at the end if it started it)."""
    server = start_server(triton, tmp_path)
    srv = stack_server("triton", Settings.from_env())
    record = srv.record()
    owner = record.owner if record is not None else "fixture"
    request = api.SuggestRequest(article=ARTICLE, num_candidates=1)
    try:
        stub, channel = server.stub()
        with channel:
            assert stub.Suggest(request, timeout=30).candidates
            srv.stop()
            outage_ends = time.monotonic() + 120
            while time.monotonic() < outage_ends:
                assert code_of(lambda: stub.Suggest(request, timeout=10)) == \
                    grpc.StatusCode.UNAVAILABLE
                time.sleep(0.5)
            srv.start(timeout=300, owner=owner)
            ready = time.monotonic()
            while True:
                try:
                    stub.Suggest(request, timeout=30)
                    break
                except grpc.RpcError:
                    assert time.monotonic() - ready < 60, "not reconnected after 60 s"
                    time.sleep(0.1)
        assert time.monotonic() - ready < 3
    finally:
        stop_server(server)
        srv.start(timeout=300, owner=owner)
