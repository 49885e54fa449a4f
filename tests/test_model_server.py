"""Summaries and embeddings from a model server over the OpenAI-compatible API.

Real servers on 127.0.0.1, started here and stopped here:

- ``python -m llama_cpp.server`` (llama-cpp-python's own server) with the bundled GGUF,
  once for this module: days summarized and embedded through it, one day in flight
  against four, and what the summaries record of it;
- a small stub HTTP server that answers as a script says, for each fault: 500s then an
  answer, a 429 with Retry-After, an answer slower than the timeout, a body that is no
  JSON, a reply cut short, a reply that breaks the schema, and no server at all.
"""

from __future__ import annotations

import http.server
import json
import logging
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import pytest
from helpers import NOW, drop, kenang, md, table

from flows.config import edit_config, load_settings
from flows.models import probe
from flows.models.openai_api import OpenAIModel, Server
from flows.pipeline import nightly
from transforms.errors import ModelUnavailable
from transforms.frontmatter import parse_summary
from transforms.summarize import LlmSummarizer

pytestmark = pytest.mark.usefixtures("prefect_api")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- llama-cpp-python's server with the bundled model -------------------------------------------


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    from flows.models.llm import bundled_model_path

    path = str(bundled_model_path())
    port = free_port()
    folder = tmp_path_factory.mktemp("llama-server")
    config = folder / "server.json"
    config.write_text(
        json.dumps(
            {
                "host": "127.0.0.1",
                "port": port,
                "models": [
                    {
                        "model": path,
                        "model_alias": "smollm2",
                        "n_ctx": 4096,
                        "n_threads": 1,
                        "seed": 42,
                        "verbose": False,
                    },
                    {
                        "model": path,
                        "model_alias": "smollm2-embed",
                        "embedding": True,
                        "n_threads": 1,
                        "verbose": False,
                    },
                ],
            }
        )
    )
    log = open(folder / "server.log", "wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--config_file", str(config)], stdout=log, stderr=subprocess.STDOUT
    )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{base}/models", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"llama_cpp.server did not start: {(folder / 'server.log').read_text()[-2000:]}")
            time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def use_server(home, base: str, *, concurrency: int = 1, embed: bool = True) -> None:
    def change(data):
        data["summarizer"]["backend"] = "openai"
        data["summarizer"].update(
            base_url=base,
            model="smollm2",
            structured_output="json_object",
            concurrency=concurrency,
            timeout_s=120,
            n_ctx=4096,
        )
        if embed:
            data["embedder"]["backend"] = "openai"
            data["embedder"].update(base_url=base, model="smollm2-embed", batch_size=8)

    edit_config(home.paths.home, change)


def two_days(home) -> None:
    drop(
        home,
        "2026-07-18-0900.md",
        md(
            "2026-07-18",
            "0900",
            ("user", "The Proxmox backup to the NAS failed again."),
            ("assistant", "The NFS mount was read-only; remount it and rerun vzdump."),
        ),
    )
    drop(
        home,
        "2026-07-19-2000.md",
        md(
            "2026-07-19",
            "2000",
            ("user", "Tolong cek snapshot ZFS di TrueNAS."),
            ("assistant", "Snapshot ZFS terakhir dibuat jam 02.00, semuanya aman."),
        ),
    )


def summaries(home) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(home.paths.archive.rglob("*.summary.md"))}


@pytest.mark.model
def test_days_are_summarized_and_embedded_through_a_real_server_and_say_what_wrote_them(home, llama_server):
    use_server(home, llama_server)
    two_days(home)
    res = nightly(now=NOW, home=str(home.paths.home))
    assert res["summarize"]["summarized"] == 2 and res["summarize"]["failed"] == 0
    assert res["summarize"]["backend"] == "openai"
    assert res["index"]["indexed"] == 2 and res["index"]["embedded"] > 0
    for text in summaries(home).values():
        gen = parse_summary(text).generator
        assert gen.backend == "openai" and gen.model == f"smollm2@{llama_server}"
        assert "token" not in gen.model and len(gen.model_sha256) == 64
    rows = table(home, "daily_summaries")
    assert {r["model"] for r in rows} == {f"smollm2@{llama_server}"}
    chunks = table(home, "memory_chunks")
    assert chunks and {c["embedder_id"] for c in chunks} == {"openai/smollm2-embed/q=''/p=''"}
    assert {len(c["embedding"]) for c in chunks} == {576}
    out = kenang("recall", "backup NAS", "--mode", "vector", "--home", str(home.paths.home), "--json")
    assert out.exit_code == 0 and json.loads(out.stdout)["results"]  # hits, by the vector arm alone
    # the embedding server goes away: recall still answers, by keyword, and says why
    dead = f"http://127.0.0.1:{free_port()}/v1"
    edit_config(home.paths.home, lambda data: data["embedder"].update(base_url=dead, timeout_s=2))
    out = kenang("recall", "backup NAS", "--home", str(home.paths.home), "--json")
    assert out.exit_code == 0 and json.loads(out.stdout)["results"] and "keyword only" in out.stderr


@pytest.mark.model
def test_four_days_in_flight_summarize_every_day_as_one_at_a_time_does(tmp_path, llama_server):
    from flows.config import init_home
    from flows.store import mount

    written = []
    for n in (1, 4):
        settings, _ = init_home(
            tmp_path / f"home{n}", {"summarizer": {"backend": "extractive"}, "embedder": {"backend": "none"}}
        )
        mount.claim(settings)  # as `kenang init` does
        use_server(settings, llama_server, concurrency=n, embed=False)
        for d in range(14, 18):
            day = f"2026-07-{d}"
            drop(
                settings,
                f"{day}-1000.md",
                md(
                    day,
                    "1000",
                    ("user", f"Day {d}: the Jellyfin container restarted."),
                    ("assistant", "Its healthcheck timed out; raise the interval."),
                ),
            )
        res = nightly(now=NOW, home=str(settings.paths.home))
        assert res["summarize"]["summarized"] == 4 and res["summarize"]["failed"] == 0
        written.append({name: parse_summary(text) for name, text in summaries(settings).items()})
    # The same days, each written once and valid, by the same model. (The words may differ: the server keeps its
    # KV cache between requests, so the same prompt after another one is not always decoded to the same bytes.)
    assert written[0].keys() == written[1].keys() and len(written[0]) == 4
    for one, four in zip(written[0].values(), written[1].values(), strict=False):
        assert one.date == four.date and one.session_lines == four.session_lines
        assert one.generator.model == four.generator.model == f"smollm2@{llama_server}"


@pytest.mark.model
def test_models_test_reports_latency_schema_and_fallbacks(home, llama_server):
    use_server(home, llama_server, embed=True)
    out = kenang("models", "test", "--home", str(home.paths.home), "--json")
    assert out.exit_code == 0, out.stdout
    data = json.loads(out.stdout)
    sm, em = data["summarizer"], data["embedder"]
    assert sm["backend"] == "openai" and sm["model"] == f"smollm2@{llama_server}" and sm["seconds"] > 0
    assert isinstance(sm["schema_honoured_first_try"], bool) and isinstance(sm["fallback_fields"], list)
    assert sm["completion_tokens"] > 0 and sm["tokens_per_second"] > 0
    assert sm["tokens_counted_by"] == "the server (/extras/tokenize/count)"  # llama_cpp.server's own tokenizer
    assert em["dim"] == 576 and len(em["cosine_query_to_passages"]) == 2


@pytest.mark.model
def test_a_server_that_refuses_json_schema_gets_json_object_and_kenang_says_so_once(home, llama_server, caplog):
    caplog.set_level(logging.INFO, logger="kenang")
    use_server(home, llama_server, embed=False)
    edit_config(home.paths.home, lambda data: data["summarizer"].update(structured_output="json_schema"))
    two_days(home)
    res = nightly(now=NOW, home=str(home.paths.home))
    # llama_cpp.server answers a json_schema response_format with an error naming it; json_object it takes
    assert res["summarize"]["summarized"] == 2 and res["summarize"]["failed"] == 0
    said = [r.getMessage() for r in caplog.records if "refused structured_output json_schema" in r.getMessage()]
    assert len(said) == 1  # once a run, not once a day
    assert "summarizer.structured_output: json_object" in said[0]
    out = kenang("models", "test", "--only", "summarizer", "--home", str(home.paths.home))
    assert out.exit_code == 0 and (
        "structured output: json_object (the server refused json_schema: set summarizer.structured_output: "
        "json_object)" in out.stdout
    )


# --- a stub server for the faults ----------------------------------------------------------------

GOOD = {
    "importance": 3,
    "mood": "productive",
    "people": [],
    "projects": [],
    "technologies": ["Proxmox", "ZFS"],
    "tags": ["backup"],
    "summary": "The Proxmox backup to the NAS failed on a read-only NFS mount. It was "
    "remounted and the backup ran again.",
}


def completion(content: str) -> bytes:
    return json.dumps(
        {
            "id": "x",
            "object": "chat.completion",
            "model": "stub",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 40, "total_tokens": 140},
        }
    ).encode()


class Stub:
    """An HTTP server on 127.0.0.1 that answers each completion with the next step of a script.

    ``api``: ``GET /v1/models`` answers as an OpenAI-compatible API does (a server that is
    up); without it, it answers 501 (a server that is not an API, or is broken).
    ``fail_if``: any request whose body holds this text gets a 500 (completions) or a 400
    (embeddings), whatever the script says: one day the server fails on.
    ``refuse``: the ``response_format`` types a completion gets a 400 for, naming it (a server that
    takes no structured output).
    """

    def __init__(
        self, script: list[str], *, api: bool = True, fail_if: str | None = None, refuse: tuple[str, ...] = ()
    ) -> None:
        self.script = list(script)
        self.seen: list[dict] = []
        self.done = threading.Event()  # set when the stub stops: a "slow" answer never comes
        self.auth: list[str | None] = []
        self.embedded: list[str] = []
        stub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                if api and self.path.endswith("/models"):
                    self._reply(json.dumps({"object": "list", "data": [{"id": "stub"}]}).encode())
                else:
                    self.send_response(501)
                    self.send_header("Content-Length", "0")
                    self.end_headers()

            def do_POST(self):
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                body = json.loads(raw)
                failing = fail_if is not None and fail_if in raw.decode()
                if self.path.endswith("/embeddings"):
                    if failing:
                        self.send_response(400)
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    stub.embedded += body["input"]
                    vectors = [[1.0, float(len(t) % 7), float(t.count("a")), 0.5] for t in body["input"]]
                    self._reply(
                        json.dumps({"data": [{"index": i, "embedding": v} for i, v in enumerate(vectors)]}).encode()
                    )
                    return
                if not self.path.endswith("/chat/completions"):  # no tokenizer here: kenang estimates
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                stub.seen.append(body)
                stub.auth.append(self.headers.get("Authorization"))
                kind = (body.get("response_format") or {}).get("type")
                if kind in refuse:
                    data = json.dumps({"error": {"message": f"response_format {kind} is not supported"}}).encode()
                    self.send_response(400)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                step = "500" if failing else stub.script.pop(0) if stub.script else "ok"
                if step == "500":
                    self.send_response(500)
                    self.end_headers()
                    self.wfile.write(b"internal error")
                elif step == "429":
                    self.send_response(429)
                    self.send_header("Retry-After", "3")
                    self.end_headers()
                elif step == "slow":  # no answer within the client's timeout: it gives up and retries
                    stub.done.wait(60)
                elif step == "html":
                    self._reply(b"<html><body>Please log in</body></html>", "text/html")
                elif step == "cut":
                    data = completion(json.dumps(GOOD))
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data[: len(data) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                elif step == "bad-schema":
                    self._reply(
                        completion(
                            json.dumps({"importance": "very", "mood": "ecstatic", "people": "Rina", "summary": 42})
                        )
                    )
                else:
                    self._reply(completion(json.dumps(GOOD)))

            def _reply(self, data: bytes, kind: str = "application/json") -> None:
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Stub:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.done.set()
        self.server.shutdown()
        self.server.server_close()


def summarize_probe(home, url: str, timeout_s: float = 10.0):
    model = OpenAIModel(Server(url, "stub", None, timeout_s), n_ctx=4096, structured_output="json_schema", seed=42)
    return LlmSummarizer(model, backend="openai").summarize(probe.probe_day(home))


@pytest.mark.parametrize(
    "script, requests",
    [(["500", "500"], 3), (["429"], 2), (["slow"], 2), (["cut"], 2)],
    ids=["500s-then-an-answer", "429-retry-after", "slower-than-the-timeout", "reply-cut-short"],
)
def test_transient_faults_are_retried_and_the_day_is_summarized_as_if_nothing_happened(home, script, requests, clock):
    with Stub(script) as stub:
        out = summarize_probe(home, stub.url, timeout_s=1.5)
    assert len(stub.seen) == requests
    assert out.first_try_valid and out.doc.generator.fallback_fields == ()
    assert out.doc.summary.startswith("The Proxmox backup") and out.doc.importance == 3
    assert stub.seen[0]["response_format"]["type"] == "json_schema"
    assert stub.seen[0]["response_format"]["json_schema"]["schema"]["additionalProperties"] is False
    if script == ["429"]:
        assert clock.slept == [3.0]  # it waited as Retry-After asked (3 s), not its own 1 s
    else:
        assert clock.slept == [1.0, 2.0][: requests - 1]  # the doubling back-off


def test_a_200_that_is_no_api_answer_is_retried_then_fails_the_day_while_the_server_answers(home):
    from transforms.summarize import SummarizeError

    with Stub(["html"] * 4) as stub:
        with pytest.raises(SummarizeError, match="failed on this request"):
            summarize_probe(home, stub.url)
    assert len(stub.seen) == 4  # the first attempt and three retries; no summary is made of a login page


def test_a_login_page_in_front_of_the_server_makes_it_unavailable(home):
    with Stub(["html"] * 4, api=False) as stub:
        with pytest.raises(ModelUnavailable, match="no API answer"):
            summarize_probe(home, stub.url)


def test_a_reply_that_breaks_the_schema_keeps_nothing_it_broke(home):
    with Stub(["bad-schema", "bad-schema"]) as stub:
        out = summarize_probe(home, stub.url)
    assert len(stub.seen) == 2 and not out.first_try_valid
    fell_back = set(out.doc.generator.fallback_fields)
    assert {"importance", "mood", "people", "summary"} <= fell_back
    assert out.doc.mood != "ecstatic" and 1 <= out.doc.importance <= 10 and "Rina" not in out.doc.people


def test_a_server_that_stays_down_is_unavailable_after_its_retries(home, clock):
    with Stub(["500"] * 10, api=False) as stub:
        with pytest.raises(ModelUnavailable, match="HTTP 500"):
            summarize_probe(home, stub.url)
    assert len(stub.seen) == 4  # the first attempt and three retries
    assert clock.slept == [1.0, 2.0, 4.0]  # a doubling back-off between them


def test_a_day_the_server_always_fails_on_fails_alone_and_the_older_days_are_summarized(home):
    with Stub([], fail_if="ZFS") as stub:
        edit_config(
            home.paths.home, lambda data: data["summarizer"].update(backend="openai", base_url=stub.url, model="stub")
        )
        two_days(home)
        res = nightly(now=NOW, home=str(home.paths.home))
    sm = res["summarize"]
    assert sm["summarized"] == 1 and sm["failed"] == 1 and sm["unavailable"] is None and sm["waiting"] == 0
    assert "failed on this request" in sm["failures"][0]["reason"] and sm["failures"][0]["date"] == "2026-07-19"


def test_an_embedding_the_server_refuses_fails_its_day_alone(home):
    with Stub([], fail_if="ZFS") as stub:
        edit_config(
            home.paths.home,
            lambda data: data["embedder"].update(backend="openai", base_url=stub.url, model="stub-embed"),
        )
        two_days(home)
        res = nightly(now=NOW, home=str(home.paths.home))
    ix = res["index"]
    assert ix["indexed"] == 1 and ix["failed"] == 1 and ix["unavailable"] is None
    assert "refused" in ix["failures"][0]["reason"]
    assert {c["embedder_id"] for c in table(home, "memory_chunks")} == {"openai/stub-embed/q=''/p=''"}


def test_with_no_server_the_night_archives_and_loads_and_its_days_wait_with_the_reason(home):
    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there

    def change(data):
        data["summarizer"].update(backend="openai", base_url=url, model="stub", timeout_s=2)

    edit_config(home.paths.home, change)
    two_days(home)
    res = nightly(now=NOW, home=str(home.paths.home))
    assert res["archive"]["placed"] == 2 and res["load"]["loaded"] == 2
    sm = res["summarize"]
    assert sm["summarized"] == 0 and sm["failed"] == 0 and sm["waiting"] == 2 and "cannot reach" in sm["unavailable"]
    from flows.cli.report import user_rows

    assert sum(r["waiting"] for r in user_rows(res)) == 2  # the Prefect users table says so too
    assert summaries(home) == {}
    status = kenang("status", "--home", str(home.paths.home))
    assert "MODEL SERVER UNAVAILABLE" in status.stdout and "cannot reach" in status.stdout
    report = kenang("run", "--home", str(home.paths.home), "--now", NOW.isoformat())
    assert "MODEL SERVER UNAVAILABLE" in report.stdout
    # the server is back: the next night summarizes the days that waited
    with Stub([]) as stub:
        edit_config(home.paths.home, lambda data: data["summarizer"].update(base_url=stub.url))
        res = nightly(now=NOW, home=str(home.paths.home))
    assert res["summarize"]["summarized"] == 2 and res["summarize"]["unavailable"] is None
    assert len(summaries(home)) == 2


def test_the_api_key_comes_from_the_environment_and_credentials_never_show(home, monkeypatch):
    from flows.models.llm import make_summarizer

    monkeypatch.setenv("KENANG_TEST_KEY", "sk-test-0123456789abcdef")
    with Stub([]) as stub:
        edit_config(
            home.paths.home,
            lambda data: data["summarizer"].update(
                backend="openai", base_url=stub.url, model="stub", api_key_env="KENANG_TEST_KEY"
            ),
        )
        make_summarizer(load_settings(home.paths.home)).summarize(probe.probe_day(home))
        # a URL with a user and password (a proxy's basic auth): used, never shown
        with_user = stub.url.replace("http://", "http://gading:secret@")
        edit_config(home.paths.home, lambda data: data["summarizer"].update(base_url=with_user, api_key_env=None))
        out = make_summarizer(load_settings(home.paths.home)).summarize(probe.probe_day(home))
    assert stub.auth == ["Bearer sk-test-0123456789abcdef", "Basic Z2FkaW5nOnNlY3JldA=="]
    assert out.doc.generator.model == f"stub@{stub.url}"  # no user, no password
    assert "sk-test" not in home.paths.config_file.read_text()
    edit_config(home.paths.home, lambda data: data["summarizer"].update(api_key_env="KENANG_TEST_KEY"))
    monkeypatch.delenv("KENANG_TEST_KEY")
    with pytest.raises(ModelUnavailable, match="KENANG_TEST_KEY"):  # its days wait; the night goes on
        make_summarizer(load_settings(home.paths.home))
    two_days(home)
    res = nightly(now=NOW, home=str(home.paths.home))
    assert res["load"]["loaded"] == 2 and res["summarize"]["waiting"] == 2
    assert "KENANG_TEST_KEY" in res["summarize"]["unavailable"]


def test_a_server_that_refuses_json_schema_alone_summarizes_every_day_with_json_object(home, caplog):
    caplog.set_level(logging.INFO, logger="kenang")
    with Stub([], refuse=("json_schema",)) as stub:
        edit_config(
            home.paths.home, lambda data: data["summarizer"].update(backend="openai", base_url=stub.url, model="stub")
        )
        two_days(home)
        res = nightly(now=NOW, home=str(home.paths.home))
    assert res["summarize"]["summarized"] == 2 and res["summarize"]["failed"] == 0
    sent = [b["response_format"]["type"] for b in stub.seen]
    assert sent[:2] == ["json_schema", "json_object"] and set(sent[2:]) == {"json_object"}  # asked once, not daily
    said = [r.getMessage() for r in caplog.records if "refused structured_output json_schema" in r.getMessage()]
    assert len(said) == 1 and "summarizer.structured_output: json_object" in said[0]


def test_a_day_the_server_refuses_in_every_form_fails_with_its_cause_and_the_key_to_change_uncut(home):
    with Stub([], refuse=("json_schema", "json_object")) as stub:
        edit_config(
            home.paths.home, lambda data: data["summarizer"].update(backend="openai", base_url=stub.url, model="stub")
        )
        two_days(home)
        res = nightly(now=NOW, home=str(home.paths.home))
    sm = res["summarize"]
    assert sm["summarized"] == 0 and sm["failed"] == 2
    reason = sm["failures"][0]["reason"]
    assert reason.startswith("the model server refused structured_output json_schema, and json_object too (HTTP 400")
    assert "set summarizer.structured_output: none in kenang.yaml" in reason
    assert "ModelRefused" not in reason and "is not supported" in reason  # the server's words come last
    status = kenang("status", "--home", str(home.paths.home))
    assert "set summarizer.structured_output: none in kenang.yaml; it said:" in status.stdout  # not cut for the table
    # the key changed as the reason says: the next night summarizes the days
    with Stub([], refuse=("json_schema", "json_object")) as stub:
        edit_config(
            home.paths.home,
            lambda data: data["summarizer"].update(base_url=stub.url, structured_output="none"),
        )
        res = nightly(now=NOW, home=str(home.paths.home))
    assert res["summarize"]["summarized"] == 2 and "response_format" not in stub.seen[0]


@pytest.mark.model
def test_kenang_doctor_finds_the_summarizer_and_the_embedder_on_a_real_server(home, llama_server, monkeypatch):
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    use_server(home, llama_server)
    out = kenang("doctor", "--home", str(home.paths.home), "--json")
    assert out.exit_code == 0, out.stdout
    checks = {c["name"]: c for c in json.loads(out.stdout)["checks"]}
    assert (
        checks["summarizer"]["status"] == "ok"
        and f"{llama_server} answers and serves smollm2" in (checks["summarizer"]["what"])
    )
    assert checks["embedder"]["status"] == "ok" and "smollm2-embed" in checks["embedder"]["what"]


def test_kenang_doctor_warns_when_the_server_does_not_list_the_configured_model(home, monkeypatch):
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    with Stub([]) as stub:
        edit_config(
            home.paths.home, lambda data: data["summarizer"].update(backend="openai", base_url=stub.url, model="qwen")
        )
        out = kenang("doctor", "--home", str(home.paths.home))
    assert out.exit_code == 0  # a warning, not a failure: the server may still take the id
    line = next(x for x in out.stdout.splitlines() if x[6:].startswith("summarizer "))
    assert line.startswith("warn") and "does not list qwen (it lists stub)" in line and "check summarizer.model" in line
