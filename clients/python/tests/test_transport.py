"""The client over HTTP against a small scripted server: reconnecting an event stream, errors, headers."""

import json
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Dict, List, Tuple

from gligabao import Gligabao, GligabaoConnectionError, GligabaoError

RUN = {
    "id": 5, "pipeline": "text", "user_id": "alice", "dataset": "main", "dataset_id": 1, "artifact_id": 2,
    "status": "succeeded", "error": None, "params": {}, "queued_at": "t", "started_at": "t", "finished_at": "t",
    "duration_ms": 3, "attempts": 1, "stages": {},
}

Reply = Tuple[int, Dict[str, str], bytes]


class Scripted:
    """A server on 127.0.0.1 answering each request with the next reply; it records the requests."""

    def __init__(self, replies: List[Callable[[], Reply]]) -> None:
        self.replies = list(replies)
        self.requests: List[Tuple[str, str, Dict[str, str]]] = []
        scripted = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                scripted.requests.append(("GET", self.path, {k.lower(): v for k, v in self.headers.items()}))
                status, headers, body = scripted.replies.pop(0)()
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def sse(text: str) -> Callable[[], Reply]:
    # no length: the stream ends when the connection closes (HTTP/1.0)
    return lambda: (200, {"Content-Type": "text/event-stream"}, text.encode("utf-8"))


def json_reply(status: int, value: object) -> Callable[[], Reply]:
    return lambda: (status, {"Content-Type": "application/json"}, json.dumps(value).encode("utf-8"))


class RunEventsTest(unittest.TestCase):
    def test_a_broken_stream_is_opened_again_after_the_last_event(self):
        server = Scripted([
            sse('retry: 1\n\nid: 1.0.0.0\nevent: started\ndata: {"id": 5, "status": "started"}\n\n'),
            sse('id: 1.1.1.0\nevent: stage\ndata: {"stage": "store", "status": "started"}\n\n'
                f"id: 1.2.0.0\nevent: succeeded\ndata: {json.dumps(RUN)}\n\n"),
        ])
        try:
            events = list(Gligabao(server.url, token="t0k").run_events(5))
        finally:
            server.close()
        self.assertEqual([e.event for e in events], ["started", "stage", "succeeded"])
        self.assertEqual(events[-1].run.artifact_id, 2)
        first, second = server.requests
        self.assertEqual(first[1], "/v1/gb/runs/5/events")
        self.assertNotIn("last-event-id", first[2])
        self.assertEqual(second[2]["last-event-id"], "1.0.0.0")
        self.assertEqual(second[2]["authorization"], "Bearer t0k")
        self.assertEqual(second[2]["accept"], "text/event-stream")

    def test_a_run_already_ended_gives_its_final_state(self):
        server = Scripted([lambda: (204, {}, b""), json_reply(200, RUN)])
        try:
            events = list(Gligabao(server.url).run_events(5))
        finally:
            server.close()
        self.assertEqual([(e.event, e.final) for e in events], [("succeeded", True)])
        self.assertEqual(server.requests[1][1], "/v1/gb/runs/5")

    def test_a_stream_that_never_ends_the_run_gives_up(self):
        server = Scripted([sse("retry: 1\n\n"), sse("retry: 1\n\n")])
        try:
            with self.assertRaisesRegex(GligabaoConnectionError, "ended 2 times before the run did"):
                list(Gligabao(server.url).run_events(5, reconnects=1))
        finally:
            server.close()

    def test_a_refusal_of_the_stream_is_an_error(self):
        server = Scripted([json_reply(404, {"error": "no remember run with id 5"})])
        try:
            with self.assertRaises(GligabaoError) as caught:
                list(Gligabao(server.url).run_events(5))
        finally:
            server.close()
        self.assertEqual((caught.exception.status, caught.exception.error), (404, "no remember run with id 5"))


class ErrorsTest(unittest.TestCase):
    def test_an_answer_that_is_not_json_keeps_its_text(self):
        server = Scripted([lambda: (502, {"Content-Type": "text/html"}, b"<html>bad gateway</html>")])
        try:
            with self.assertRaises(GligabaoError) as caught:
                Gligabao(server.url).datasets(user_id="alice")
        finally:
            server.close()
        self.assertEqual(caught.exception.status, 502)
        self.assertEqual(caught.exception.error, "<html>bad gateway</html>")
        self.assertEqual(server.requests[0][1], "/v1/gb/datasets?user_id=alice")

    def test_no_server_is_a_connection_error_not_a_refusal(self):
        server = Scripted([])
        url = server.url
        server.close()
        with self.assertRaises(GligabaoConnectionError) as caught:
            Gligabao(url, timeout=5).datasets(user_id="alice")
        self.assertNotIsInstance(caught.exception, GligabaoError)
        self.assertIsNotNone(caught.exception.__cause__)
