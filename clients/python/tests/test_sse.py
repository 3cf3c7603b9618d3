"""The event-stream parser, without a server."""

import unittest

from gligabao import RememberRun, RunEvent
from gligabao._sse import SseParser, parse_events, split_lines


def events_of(*chunks: bytes):
    return list(parse_events(chunks))


class SplitLinesTest(unittest.TestCase):
    def test_every_line_ending(self):
        self.assertEqual(list(split_lines([b"a\r\nb\nc\rd\n"])), ["a", "b", "c", "d"])

    def test_a_crlf_split_between_chunks_is_one_ending(self):
        self.assertEqual(list(split_lines([b"a\r", b"\nb\n"])), ["a", "b"])

    def test_a_character_split_between_chunks(self):
        text = "Zoë\n".encode("utf-8")
        self.assertEqual(list(split_lines([text[:3], text[3:]])), ["Zoë"])

    def test_an_unterminated_last_line_is_dropped(self):
        self.assertEqual(list(split_lines([b"a\nb"])), ["a"])


class ParserTest(unittest.TestCase):
    def test_the_runs_stream(self):
        stream = (
            b"retry: 3000\n\n"
            b"id: 1.0.0.0\nevent: started\ndata: {\"id\": 7, \"status\": \"started\"}\n\n"
            b": keep-alive\n\n"
            b"id: 1.1.1.0\nevent: stage\ndata: {\"stage\": \"extract_graph\", \"status\": \"started\"}\n\n"
        )
        events = events_of(stream)
        self.assertEqual([(e.event, e.id) for e in events], [("started", "1.0.0.0"), ("stage", "1.1.1.0")])
        self.assertEqual(events[0].data, '{"id": 7, "status": "started"}')
        self.assertEqual(events[1].retry, 3000)

    def test_data_lines_join_with_newlines_and_one_space_is_dropped(self):
        events = events_of(b"data:first\ndata:  second\ndata\n\n")
        self.assertEqual(events[0].data, "first\n second\n")
        self.assertEqual(events[0].event, "message")

    def test_a_block_without_data_dispatches_nothing_but_keeps_its_id(self):
        parser = SseParser()
        events = list(parse_events([b"id: 5\nevent: x\n\ndata: y\n\n"], parser))
        self.assertEqual([(e.event, e.data, e.id) for e in events], [("message", "y", "5")])
        self.assertEqual(parser.last_event_id, "5")

    def test_an_id_with_nul_and_a_bad_retry_are_ignored(self):
        parser = SseParser()
        list(parse_events([b"id: 1\n\nid: a\x00b\nretry: soon\ndata: z\n\n"], parser))
        self.assertEqual(parser.last_event_id, "1")
        self.assertIsNone(parser.retry)

    def test_an_event_cut_before_its_blank_line_is_not_dispatched(self):
        self.assertEqual(events_of(b"data: whole\n\ndata: cut\n"), events_of(b"data: whole\n\n"))


class RunEventTest(unittest.TestCase):
    RUN = {
        "id": 7, "pipeline": "text", "user_id": "alice", "dataset": "main", "dataset_id": 1,
        "artifact_id": 3, "status": "succeeded", "error": None, "params": {}, "queued_at": "2025-01-01T00:00:00Z",
        "started_at": None, "finished_at": None, "duration_ms": 12, "attempts": 1, "stages": {},
    }

    def test_a_final_event_carries_the_run(self):
        event = RunEvent.of(next(parse_events([b"event: succeeded\ndata: " + repr(self.RUN).encode() + b"\n\n"])))
        # not JSON (Python's repr): kept as text
        self.assertEqual(event.data[:6], "{'id':")
        event = RunEvent(event="succeeded", data=self.RUN)
        self.assertTrue(event.final)
        self.assertIsInstance(event.run, RememberRun)
        self.assertEqual(event.run.status, "succeeded")

    def test_a_stage_event_is_not_a_run(self):
        event = RunEvent(event="stage", data={"stage": "store", "status": "started"})
        self.assertFalse(event.final)
        self.assertIsNone(event.run)
