"""
The client against a running gligabao server: GLIGABAO_URL and GLIGABAO_TOKEN (the token of
GLIGABAO_TEST_USER, default alice). test/clients/python.test.ts starts one with the fake model,
which reads sentences like "Alice Novak works at Acme in 2020." as facts; GLIGABAO_TEST_GATE is
its gate, which holds a text with "hold:<key>" until POST <gate>/<key>. Skipped without a server.
"""

import asyncio
import os
import time
import unittest
import urllib.request
import uuid

from gligabao import (
    AmbiguousEntityError,
    AsyncGligabao,
    EntityStory,
    FactView,
    GraphExport,
    Gligabao,
    GligabaoError,
    RememberBatchItem,
    RememberBatchQueued,
    RememberBatchResult,
    RememberQueued,
    RememberResponse,
    RememberRun,
    ScoredFact,
    SearchRequest,
)

URL = os.environ.get("GLIGABAO_URL")
USER = os.environ.get("GLIGABAO_TEST_USER", "alice")
GATE = os.environ.get("GLIGABAO_TEST_GATE")

TEXT = "Alice Novak works at Acme in 2020. Alice Smith lives in Paris. Bob Stone knows Alice Novak."


def fresh(name: str) -> str:
    """A dataset of its own for a test."""
    return f"py-{name}-{uuid.uuid4().hex[:8]}"


def wait_for_end(client: Gligabao, run_id: float) -> RememberRun:
    for _ in range(600):
        run = client.run(run_id)
        if run.status in ("succeeded", "failed", "cancelled"):
            return run
        time.sleep(0.1)
    raise AssertionError(f"run {run_id} did not end")


@unittest.skipUnless(URL, "GLIGABAO_URL is not set: no server to call")
class ServerTest(unittest.TestCase):
    client: Gligabao
    dataset: str
    first: RememberResponse

    @classmethod
    def setUpClass(cls) -> None:
        cls.client = Gligabao()
        cls.dataset = fresh("main")
        remembered = cls.client.remember(user_id=USER, dataset=cls.dataset, text=TEXT)
        assert isinstance(remembered, RememberResponse), remembered
        cls.first = remembered

    def fact_id(self, relation: str) -> float:
        return next(e.id for e in self.first.edges if e.relation == relation)

    # -- remember ---------------------------------------------------------------------------

    def test_remember_waits_for_the_run_and_answers_what_was_stored(self):
        self.assertEqual(
            sorted((e.source, e.relation, e.target) for e in self.first.edges),
            [("Alice Novak", "works_at", "Acme"), ("Alice Smith", "lives_in", "Paris"), ("Bob Stone", "knows", "Alice Novak")],
        )
        works = next(e for e in self.first.edges if e.relation == "works_at")
        self.assertTrue(works.valid_at.startswith("2020-01-01"))

    def test_remember_without_waiting_queues_a_run_to_follow(self):
        queued = self.client.remember(user_id=USER, dataset=fresh("queued"), text="Carl Ray founded Initech.", wait=False)
        self.assertIsInstance(queued, RememberQueued)
        self.assertEqual(queued.status, "queued")
        run = wait_for_end(self.client, queued.remember_run_id)
        self.assertEqual(run.status, "succeeded")
        self.assertIsInstance(run.response, RememberResponse)
        self.assertEqual([e.relation for e in run.response.edges], ["founded"])

    def test_run_events_follow_a_run_to_its_end(self):
        key = uuid.uuid4().hex[:12]
        held = f"Dana Lee works at Globex. hold:{key}" if GATE else "Dana Lee works at Globex."
        queued = self.client.remember(user_id=USER, dataset=fresh("events"), text=held, wait=False)
        events = self.client.run_events(queued.remember_run_id)
        first = next(events)
        if GATE:
            # the model holds the run's extraction: the stream opened on a run that had not ended
            self.assertIn(first.event, ("queued", "started"))
            urllib.request.urlopen(urllib.request.Request(f"{GATE}/{key}", data=b"{}", method="POST"), timeout=30).close()
        rest = list(events)
        seen = [first] + rest
        last = seen[-1]
        self.assertEqual(last.event, "succeeded")
        self.assertTrue(last.final)
        self.assertEqual([e.relation for e in last.run.response.edges], ["works_at"])
        self.assertEqual([e for e in seen if e.final], [last])
        if GATE:
            stages = {e.data["stage"] for e in seen if e.event == "stage"}
            self.assertIn("extract_graph", stages)
            self.assertIn("store", stages)

    def test_remember_batch_queues_one_run_an_item_or_waits_for_them(self):
        dataset = fresh("batch")
        queued = self.client.remember_batch(
            user_id=USER,
            dataset=dataset,
            items=[RememberBatchItem(text="Eve Park knows Finn Hale."), {"text": "Finn Hale visited Rome."}],
        )
        self.assertIsInstance(queued, RememberBatchQueued)
        self.assertEqual(len(queued.runs), 2)
        done = self.client.remember_batch(user_id=USER, dataset=dataset, items=[{"text": "Gus Mohr lives in Oslo."}], wait=True)
        self.assertIsInstance(done, RememberBatchResult)
        self.assertIsInstance(done.items[0], RememberResponse)
        for run in queued.runs:
            self.assertEqual(self.client.wait_for_run(run.remember_run_id).status, "succeeded")

    # -- read -------------------------------------------------------------------------------

    def test_search(self):
        found = self.client.search(user_id=USER, dataset=self.dataset, query="Acme")
        self.assertIsInstance(found.facts[0], ScoredFact)
        self.assertEqual(found.facts[0].description, "Alice Novak works at Acme since 2020")
        self.assertIn("Acme", [e.name for e in found.entities])

    def test_query_answers_citing_the_facts(self):
        answered = self.client.query(user_id=USER, dataset=self.dataset, query="Where does Alice Novak work?")
        self.assertIn(self.fact_id("works_at"), answered.citations)
        self.assertIn("Acme", answered.answer)

    def test_context(self):
        block = self.client.context(user_id=USER, dataset=self.dataset, query="Alice Novak", max_tokens=200)
        self.assertTrue(block.context.startswith("# Facts"))
        self.assertIn("Alice Novak works at Acme", block.context)
        self.assertLessEqual(block.tokens, 200)
        self.assertIn("Alice Novak", [e.name for e in block.entities])

    def test_entity_by_a_name_that_means_several(self):
        with self.assertRaises(AmbiguousEntityError) as caught:
            self.client.entity(user_id=USER, dataset=self.dataset, name="alice")
        error = caught.exception
        self.assertEqual(error.status, 300)
        names = sorted(c.name for c in error.candidates.candidates)
        self.assertEqual(names, ["Alice Novak", "Alice Smith"])
        story = self.client.entity(user_id=USER, dataset=self.dataset, id=error.candidates.candidates[0].id)
        self.assertIsInstance(story, EntityStory)
        self.assertEqual(story.entity.name, error.candidates.candidates[0].name)

    def test_entity_by_name(self):
        story = self.client.entity(user_id=USER, dataset=self.dataset, name="Bob Stone")
        self.assertEqual([f.relation for f in story.facts], ["knows"])
        self.assertEqual([n.name for n in story.neighbours], ["Alice Novak"])

    def test_fact(self):
        view = self.client.fact(self.fact_id("works_at"), user_id=USER, dataset=self.dataset)
        self.assertIsInstance(view, FactView)
        self.assertEqual(view.created_by.id, self.first.artifact_id)
        self.assertEqual(view.closed_by, [])

    def test_export(self):
        graph = self.client.export(user_id=USER, dataset=self.dataset)
        self.assertIsInstance(graph, GraphExport)
        self.assertEqual(len(graph.edges), 3)
        self.assertEqual(graph.artifacts[0].text, TEXT)
        graphml = self.client.export_graphml(user_id=USER, dataset=self.dataset)
        self.assertTrue(graphml.startswith("<?xml"), graphml[:80])
        self.assertIn("Alice Novak", graphml)

    def test_datasets(self):
        listed = self.client.datasets(user_id=USER)
        mine = next(d for d in listed.datasets if d.name == self.dataset)
        self.assertEqual((mine.artifacts, mine.edges), (1, 3))

    # -- forget and correct -----------------------------------------------------------------

    def test_forget_an_artifact(self):
        dataset = fresh("forget")
        remembered = self.client.remember(user_id=USER, dataset=dataset, text="Hana Ito lives in Kyoto.")
        forgotten = self.client.forget_artifact(remembered.artifact_id, user_id=USER, dataset=dataset)
        self.assertEqual((forgotten.deleted.artifacts, forgotten.deleted.facts), (1, 1))
        self.assertEqual(self.client.search(user_id=USER, dataset=dataset, query="Kyoto").facts, [])

    def test_close_a_fact_by_hand_and_reopen_it(self):
        dataset = fresh("correct")
        remembered = self.client.remember(user_id=USER, dataset=dataset, text="Ivo Bell works at Umbrella in 2019.")
        fact_id = remembered.edges[0].id
        closed = self.client.correct_invalidate_fact(fact_id, user_id=USER, dataset=dataset, invalid_at="2024-06-01T00:00:00Z")
        self.assertTrue(closed.fact.invalid_at.startswith("2024-06-01"))
        reopened = self.client.correct_reopen_fact(fact_id, user_id=USER, dataset=dataset)
        self.assertIsNone(reopened.fact.invalid_at)

    def test_the_server_is_alive_and_ready(self):
        self.assertEqual(self.client.health().status, "ok")
        ready = self.client.ready()
        self.assertEqual((ready.status, ready.database.dialect, ready.llm.configured), ("ready", "sqlite", True))

    # -- errors -----------------------------------------------------------------------------

    def test_a_bad_request_is_an_error_with_the_servers_text(self):
        with self.assertRaises(GligabaoError) as caught:
            self.client.search(user_id=USER, query="Acme", limit=1000)
        self.assertEqual(caught.exception.status, 400)
        self.assertEqual(caught.exception.error, "limit must be an integer from 1 to 100")
        self.assertEqual(caught.exception.body, {"error": caught.exception.error})

    def test_a_field_the_request_does_not_have_is_the_servers_400_when_sent_raw(self):
        request = SearchRequest(user_id=USER, query="Acme", extra_fields={"limti": 5})
        with self.assertRaises(GligabaoError) as caught:
            self.client.search(request)
        self.assertEqual(caught.exception.status, 400)
        self.assertIn("limti", caught.exception.error)

    def test_a_wrong_token_is_a_401(self):
        with self.assertRaises(GligabaoError) as caught:
            Gligabao(token="not-the-token-of-anyone-at-all").datasets(user_id=USER)
        self.assertEqual(caught.exception.status, 401)
        self.assertTrue(caught.exception.error)

    # -- async ------------------------------------------------------------------------------

    def test_the_async_client(self):
        async def main():
            client = AsyncGligabao()
            found, queued = await asyncio.gather(
                client.search(user_id=USER, dataset=self.dataset, query="Paris"),
                client.remember(user_id=USER, dataset=fresh("async"), text="Jo Kim visited Lima.", wait=False),
            )
            events = [event async for event in client.run_events(queued.remember_run_id)]
            return found, events

        found, events = asyncio.run(main())
        self.assertEqual(found.facts[0].description, "Alice Smith lives in Paris")
        self.assertEqual(events[-1].event, "succeeded")
        self.assertEqual([e.relation for e in events[-1].run.response.edges], ["visited"])
