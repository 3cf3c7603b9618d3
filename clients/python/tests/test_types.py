"""The generated classes read and write JSON as the server sends and takes it, without a server."""

import inspect
import unittest

import gligabao
from gligabao import (
    AsyncGligabao,
    DeletedDataset,
    Edge,
    Entity,
    Filters,
    Gligabao,
    HardDeletedDataset,
    ImageRememberResponse,
    MergeEntitiesRequest,
    Message,
    RememberRequest,
    RememberResponse,
    SearchRequest,
)
from gligabao._http import coerce, path_of, query_value
from gligabao._types import OPERATIONS

ENTITY = {"id": 1, "name": "Alice Novak", "type": "person", "description": "a person"}
EDGE = {
    "id": 4, "source": "Alice Novak", "source_id": 1, "target": "Acme", "target_id": 2, "relation": "works at",
    "description": "Alice Novak works at Acme since 2020", "valid_at": None, "created_at": "2025-01-01T00:00:00Z",
}
TEXT_RESPONSE = {
    "remember_run_id": 9, "artifact_id": 3, "kind": "knowledge", "valid_at": "2025-01-01T00:00:00Z",
    "created_at": "2025-01-01T00:00:01Z", "entities": [ENTITY], "edges": [EDGE], "invalidated_edges": [],
}


class ParseTest(unittest.TestCase):
    def test_nested_objects_become_their_classes(self):
        parsed = RememberResponse.from_json(TEXT_RESPONSE)
        self.assertIsInstance(parsed.entities[0], Entity)
        self.assertIsInstance(parsed.edges[0], Edge)
        self.assertEqual(parsed.edges[0].relation, "works at")
        # required and null: None; absent and optional: None
        self.assertIsNone(parsed.edges[0].valid_at)
        self.assertIsNone(parsed.session_id)

    def test_fields_a_newer_server_adds_are_kept_aside(self):
        parsed = RememberResponse.from_json({**TEXT_RESPONSE, "entities": [{**ENTITY, "rank": 2}], "new": [1]})
        self.assertEqual(parsed.extra_fields, {"new": [1]})
        self.assertEqual(parsed.entities[0].extra_fields, {"rank": 2})
        # and written back as they came
        self.assertEqual(parsed.to_json()["new"], [1])

    def test_a_missing_required_field_is_named(self):
        broken = dict(TEXT_RESPONSE)
        del broken["edges"]
        with self.assertRaisesRegex(ValueError, "RememberResponse: the field 'edges' is missing"):
            RememberResponse.from_json(broken)

    def test_a_union_answer_is_read_into_the_class_it_fits(self):
        codec = OPERATIONS["remember"].responses[200]
        self.assertIsInstance(codec.parse(TEXT_RESPONSE), RememberResponse)
        image = {
            "remember_run_id": 2, "pipeline": "image", "image_artifact_id": 5, "extraction_id": 1, "path": "1/a.png",
            "media_type": "image/png", "bytes": 10, "sha256": "ab", "theme": "Photo", "title": "A", "text": "x",
            "text_blocks": [], "model": "m", "provider": "anthropic", "reasoning": "none", "input_tokens": 1,
            "output_tokens": 1, "cost_usd": 0, "cached": False, "valid_at": "t", "created_at": "t",
        }
        self.assertIsInstance(codec.parse(image), ImageRememberResponse)
        forget = OPERATIONS["forget_dataset"].responses[200]
        soft = {"dataset": "main", "id": 1, "deleted_at": "t"}
        self.assertIsInstance(forget.parse(soft), DeletedDataset)
        counts = {"datasets": 1, "artifacts": 1, "entities": 1, "facts": 1, "vectors": 1, "images": 0, "runs": 1}
        hard = {"user_id": "alice", "dataset": "main", "dataset_ids": [1], "deleted": counts}
        self.assertIsInstance(forget.parse(hard), HardDeletedDataset)


class RequestTest(unittest.TestCase):
    def test_optional_fields_left_as_none_are_not_sent(self):
        self.assertEqual(RememberRequest(user_id="alice", text="Hi.").to_json(), {"user_id": "alice", "text": "Hi."})

    def test_nested_requests_are_written_as_json(self):
        request = RememberRequest(
            user_id="alice",
            messages=[Message(role="user", content="I moved to Paris.")],
            metadata={"source": "crm", "priority": 2},
        )
        self.assertEqual(
            request.to_json(),
            {
                "user_id": "alice",
                "messages": [{"role": "user", "content": "I moved to Paris."}],
                "metadata": {"source": "crm", "priority": 2},
            },
        )
        search = SearchRequest(user_id="alice", query="Paris", filters=Filters(relations=["lives in"]))
        self.assertEqual(search.to_json()["filters"], {"relations": ["lives in"]})

    def test_a_python_keyword_is_an_attribute_with_an_underscore(self):
        merge = MergeEntitiesRequest(user_id="a", into=1, from_=[2, 3])
        self.assertEqual(merge.to_json(), {"user_id": "a", "into": 1, "from": [2, 3]})
        self.assertEqual(MergeEntitiesRequest.from_json({"user_id": "a", "into": 1, "from": [2]}).from_, [2])

    def test_keywords_a_request_does_not_have_are_refused_before_sending(self):
        with self.assertRaisesRegex(TypeError, "limti"):
            coerce(SearchRequest, None, {"user_id": "alice", "query": "x", "limti": 5})
        with self.assertRaisesRegex(TypeError, "query"):
            coerce(SearchRequest, None, {"user_id": "alice"})
        with self.assertRaisesRegex(TypeError, "not both"):
            coerce(SearchRequest, SearchRequest(user_id="a", query="b"), {"limit": 1})
        self.assertEqual(coerce(SearchRequest, {"user_id": "a", "query": "b"}, {}), SearchRequest(user_id="a", query="b"))

    def test_query_and_path_values(self):
        self.assertEqual(query_value(True), "true")
        self.assertEqual(query_value(3.0), "3")
        self.assertEqual(query_value({"relations": ["knows"]}), '{"relations": ["knows"]}')
        self.assertEqual(path_of("/v1/gb/datasets/{name}/schema", {"name": "a/b c"}), "/v1/gb/datasets/a%2Fb%20c/schema")


class ClientShapeTest(unittest.TestCase):
    def test_the_async_client_has_every_method_with_the_same_parameters(self):
        for name, method in inspect.getmembers(Gligabao, inspect.isfunction):
            if name.startswith("_"):
                continue
            mirror = getattr(AsyncGligabao, name, None)
            self.assertIsNotNone(mirror, name)
            self.assertEqual(
                list(inspect.signature(mirror).parameters.values()),
                list(inspect.signature(method).parameters.values()),
                name,
            )

    def test_every_operation_has_its_method(self):
        for name in OPERATIONS:
            self.assertTrue(callable(getattr(Gligabao, name, None)), name)

    def test_the_package_version_is_the_servers(self):
        self.assertEqual(gligabao.__version__, gligabao.API_VERSION)
