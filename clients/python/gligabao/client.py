"""The synchronous client: one method per endpoint, typed with the generated classes of _types.py."""

from __future__ import annotations

import os
import time
from typing import Any, Dict, Generator, Literal, Mapping, Optional, Union, cast, overload

from . import _http
from ._sse import RunEvent, SseParser, parse_events
from ._types import (
    API_VERSION,
    OPERATIONS,
    CancelRunRequest,
    ContextRequest,
    ContextResponse,
    Datasets,
    DatasetSchema,
    DatasetSchemaView,
    DeletedDataset,
    EntityCandidates,
    EntityParams,
    EntityStory,
    ExportParams,
    FactResponse,
    FactView,
    ForgetArtifactResponse,
    ForgetDatasetParams,
    ForgetImageResponse,
    ForgetUserResponse,
    GraphExport,
    Health,
    HardDeletedDataset,
    ImageParams,
    ImageRememberResponse,
    InvalidateFactRequest,
    MergeEntitiesRequest,
    MergeEntitiesResponse,
    QueryRequest,
    QueryResponse,
    Ready,
    RememberBatchQueued,
    RememberBatchRequest,
    RememberBatchResult,
    RememberQueued,
    RememberRequest,
    RememberResponse,
    RememberRun,
    ReopenFactRequest,
    RunsParams,
    RunsResponse,
    ScopeParams,
    SearchRequest,
    SearchResponse,
    Sessions,
    UserParams,
)
from .errors import AmbiguousEntityError, GligabaoConnectionError

DEFAULT_URL = "http://127.0.0.1:8080"

Id = Union[int, float, str]
"an id as the server gives it (JSON numbers are floats to the document, ints in practice)"


class Gligabao:
    """
    A client of a gligabao server. ``base_url`` defaults to ``$GLIGABAO_URL``, else
    http://127.0.0.1:8080; ``token`` (sent as ``Authorization: Bearer``) to ``$GLIGABAO_TOKEN``.
    ``timeout`` is in seconds, per socket operation: a remember that waits for its run can take
    as long as the model does.

    Each method takes its request as a generated class, a dict of its JSON, or keyword arguments
    (``client.search(user_id="alice", query="Bob")``). It answers the generated class of the
    response, or raises ``GligabaoError`` (the server refused: ``status`` and ``error``),
    ``GligabaoConnectionError`` (no answer), or ``TypeError`` for a field the request does not have.
    """

    def __init__(
        self,
        base_url: Optional[str] = None,
        token: Optional[str] = None,
        *,
        timeout: Optional[float] = 300.0,
    ) -> None:
        self.base_url = (base_url or os.environ.get("GLIGABAO_URL") or DEFAULT_URL).rstrip("/")
        self._transport = _http.Transport(
            self.base_url,
            token if token is not None else os.environ.get("GLIGABAO_TOKEN") or None,
            timeout,
            f"gligabao-python/{API_VERSION}",
        )

    def _call(
        self,
        name: str,
        path: Optional[Mapping[str, Any]] = None,
        value: Any = None,
        fields: Optional[Mapping[str, Any]] = None,
    ) -> Any:
        """One endpoint of OPERATIONS: the value (and fields) as its body, else as its query parameters."""
        operation = OPERATIONS[name]
        fields = fields or {}
        query: Optional[Dict[str, Any]] = None
        body: Any = None
        if operation.body is not None:
            params_fields, body_fields = _http.split_fields(operation.params, fields)
            body = _http.coerce(operation.body, value, body_fields).to_json()
            if operation.params is not None:
                query = _http.coerce(operation.params, None, params_fields).to_json()
        elif operation.params is not None:
            query = _http.coerce(operation.params, value, fields).to_json()
        elif value is not None or fields:
            raise TypeError(f"{name} takes no request fields")
        url, answer = self._transport.exchange(
            operation.method, _http.path_of(operation.path, path or {}), query, body
        )
        status, parsed = _http.parse_answer(operation, operation.method, url, answer)
        if isinstance(parsed, EntityCandidates) and status == 300:
            raise AmbiguousEntityError(parsed, answer.json(), operation.method, url)
        return parsed

    # -- remember ---------------------------------------------------------------------------

    @overload
    def remember(self, request: None = None, /, *, wait: Literal[False], **fields: Any) -> RememberQueued: ...
    @overload
    def remember(self, request: None = None, /, *, image: str, **fields: Any) -> ImageRememberResponse: ...
    @overload
    def remember(self, request: None = None, /, *, user_id: str, **fields: Any) -> RememberResponse: ...
    @overload
    def remember(
        self, request: RememberRequest, /
    ) -> Union[RememberResponse, ImageRememberResponse, RememberQueued]: ...

    def remember(
        self, request: Optional[RememberRequest] = None, /, **fields: Any
    ) -> Union[RememberResponse, ImageRememberResponse, RememberQueued]:
        """
        POST /v1/gb/remember: a text (or an image, or messages) to remember. Waits for the run and
        answers its response (``ImageRememberResponse`` for an image); with ``wait=False``, answers
        ``RememberQueued`` as soon as the run is queued (follow it with ``run_events``).
        """
        return cast(Any, self._call("remember", None, request, fields))

    @overload
    def remember_batch(self, request: None = None, /, *, wait: Literal[True], **fields: Any) -> RememberBatchResult: ...
    @overload
    def remember_batch(self, request: None = None, /, *, user_id: str, **fields: Any) -> RememberBatchQueued: ...
    @overload
    def remember_batch(self, request: RememberBatchRequest, /) -> Union[RememberBatchQueued, RememberBatchResult]: ...

    def remember_batch(
        self, request: Optional[RememberBatchRequest] = None, /, **fields: Any
    ) -> Union[RememberBatchQueued, RememberBatchResult]:
        """POST /v1/gb/remember/batch: queues one run per item (``RememberBatchQueued``); ``wait=True`` waits for them all."""
        return cast(Any, self._call("remember_batch", None, request, fields))

    def run(self, id: Id) -> RememberRun:
        """GET /v1/gb/runs/{id}: a remember run with its stages, and its ``response`` once it succeeded."""
        return self._call("run", {"id": id})

    def cancel_run(self, id: Id, request: Optional[CancelRunRequest] = None, /, **fields: Any) -> RememberRun:
        """POST /v1/gb/runs/{id}/cancel: takes a queued run off the queue (a started one is a 409)."""
        return self._call("cancel_run", {"id": id}, request, fields)

    def runs(self, params: Optional[RunsParams] = None, /, **fields: Any) -> RunsResponse:
        """GET /v1/gb/runs: a user's runs, newest first (page with ``before_id``)."""
        return self._call("runs", None, params, fields)

    def run_events(
        self, id: Id, *, last_event_id: Optional[str] = None, reconnects: int = 5
    ) -> Generator[RunEvent, None, None]:
        """
        GET /v1/gb/runs/{id}/events: the run's changes as they happen (``queued``, ``started``,
        ``stage``, ``progress``), ending with its last event (``succeeded``, ``failed`` or
        ``cancelled``), after which the iterator stops. A stream that breaks before the end is
        opened again (up to ``reconnects`` times) after the server's ``retry`` delay, from the
        last event received. A run that had already ended when the stream opened gives one
        event: its final state, from GET /v1/gb/runs/{id}.
        """
        operation = OPERATIONS["run_events"]
        path = _http.path_of(operation.path, {"id": id})
        parser = SseParser()
        parser.last_event_id = last_event_id
        attempts = 0
        while True:
            headers = {"Accept": "text/event-stream"}
            if parser.last_event_id is not None:
                headers["Last-Event-ID"] = parser.last_event_id
            url, response = self._transport.open("GET", path, headers=headers)
            status = _http.status_of(response)
            if status == 204:
                response.close()
                run = self.run(id)
                yield RunEvent(event=run.status, data=run.to_json())
                return
            if status != 200:
                with response:
                    answer = _http.Answer(status, response.headers, response.read())
                raise _http.refusal("GET", url, answer)
            try:
                with response:
                    for sse in parse_events(iter(response.readline, b""), parser):
                        event = RunEvent.of(sse)
                        yield event
                        if event.final:
                            return
            except _http.NETWORK_ERRORS:
                pass
            attempts += 1
            if attempts > reconnects:
                raise GligabaoConnectionError(f"GET {url}: the stream ended {attempts} times before the run did", url)
            time.sleep((parser.retry if parser.retry is not None else 3000) / 1000)

    def wait_for_run(self, id: Id, *, reconnects: int = 5) -> RememberRun:
        """Waits for a run to end (through its events) and answers it as ``run`` shows it."""
        final = None
        for event in self.run_events(id, reconnects=reconnects):
            final = event.run
        return final if final is not None else self.run(id)

    # -- read -------------------------------------------------------------------------------

    def search(self, request: Optional[SearchRequest] = None, /, **fields: Any) -> SearchResponse:
        """POST /v1/gb/search: ranked facts, entities and chunks for a text (no model call)."""
        return self._call("search", None, request, fields)

    def query(self, request: Optional[QueryRequest] = None, /, **fields: Any) -> QueryResponse:
        """POST /v1/gb/query: an answer from the stored facts, citing them (a model call)."""
        return self._call("query", None, request, fields)

    def context(self, request: Optional[ContextRequest] = None, /, **fields: Any) -> ContextResponse:
        """POST /v1/gb/context: a block of facts and entities for a prompt, cut to ``max_tokens``."""
        return self._call("context", None, request, fields)

    def export(self, params: Optional[ExportParams] = None, /, **fields: Any) -> GraphExport:
        """GET /v1/gb/graph: a dataset's graph as JSON (``export_graphml`` for GraphML)."""
        return self._call("export", None, params, fields)

    def export_graphml(self, params: Optional[ExportParams] = None, /, **fields: Any) -> str:
        """GET /v1/gb/graph?format=graphml: a dataset's graph as GraphML text, for Gephi or yEd."""
        value = _http.coerce(ExportParams, params, fields)
        value.format = "graphml"
        raw = self._call("export", None, value)
        return raw.decode("utf-8") if isinstance(raw, bytes) else raw

    def entity(self, params: Optional[EntityParams] = None, /, **fields: Any) -> EntityStory:
        """
        GET /v1/gb/entities: an entity's story, by ``id`` or by ``name`` (whole words, case and
        accents ignored). A name that means several entities raises ``AmbiguousEntityError``
        (the server's 300) with the ``candidates``, best first: ask again with one's ``id``.
        """
        return self._call("entity", None, params, fields)

    def fact(self, id: Id, params: Optional[ScopeParams] = None, /, **fields: Any) -> FactView:
        """GET /v1/gb/facts/{id}: a fact with the texts that stated it and what closed it."""
        return self._call("fact", {"id": id}, params, fields)

    def datasets(self, params: Optional[UserParams] = None, /, **fields: Any) -> Datasets:
        """GET /v1/gb/datasets: a user's datasets with counts."""
        return self._call("datasets", None, params, fields)

    def sessions(self, params: Optional[ScopeParams] = None, /, **fields: Any) -> Sessions:
        """GET /v1/gb/sessions: a dataset's sessions with counts."""
        return self._call("sessions", None, params, fields)

    def dataset_schema(self, name: str, params: Optional[UserParams] = None, /, **fields: Any) -> DatasetSchemaView:
        """GET /v1/gb/datasets/{name}/schema: a dataset's entity and edge types and instructions."""
        return self._call("dataset_schema", {"name": name}, params, fields)

    def set_dataset_schema(
        self, name: str, schema: Optional[DatasetSchema] = None, /, **fields: Any
    ) -> DatasetSchemaView:
        """PUT /v1/gb/datasets/{name}/schema: ``user_id`` and the schema's fields (or a ``DatasetSchema``)."""
        return self._call("set_dataset_schema", {"name": name}, schema, fields)

    def image(self, id: Id, params: Optional[ImageParams] = None, /, **fields: Any) -> bytes:
        """GET /v1/gb/images/{id}: a remembered image's bytes."""
        return self._call("image", {"id": id}, params, fields)

    # -- forget -----------------------------------------------------------------------------

    def forget_artifact(
        self, id: Id, params: Optional[ScopeParams] = None, /, **fields: Any
    ) -> ForgetArtifactResponse:
        """DELETE /v1/gb/artifacts/{id}: an artifact, what was derived from it, and what it caused."""
        return self._call("forget_artifact", {"id": id}, params, fields)

    def forget_image(self, id: Id, params: Optional[ScopeParams] = None, /, **fields: Any) -> ForgetImageResponse:
        """DELETE /v1/gb/images/{id}: an image, its extractions and its stored file."""
        return self._call("forget_image", {"id": id}, params, fields)

    def forget_dataset(
        self, name: str, params: Optional[ForgetDatasetParams] = None, /, **fields: Any
    ) -> Union[DeletedDataset, HardDeletedDataset]:
        """DELETE /v1/gb/datasets/{name}: a soft delete, or with ``hard=True`` everything of the name for good."""
        return self._call("forget_dataset", {"name": name}, params, fields)

    def forget_user(self, user_id: str) -> ForgetUserResponse:
        """DELETE /v1/gb/users/{user_id}: every dataset, run, vector and image file of a user."""
        return self._call("forget_user", {"user_id": user_id})

    # -- corrections ------------------------------------------------------------------------

    def correct_delete_fact(
        self, id: Id, params: Optional[ScopeParams] = None, /, **fields: Any
    ) -> ForgetArtifactResponse:
        """DELETE /v1/gb/facts/{id}: a fact; what it closed is reopened."""
        return self._call("correct_delete_fact", {"id": id}, params, fields)

    def correct_delete_entity(
        self, id: Id, params: Optional[ScopeParams] = None, /, **fields: Any
    ) -> ForgetArtifactResponse:
        """DELETE /v1/gb/entities/{id}: an entity with every fact that touches it."""
        return self._call("correct_delete_entity", {"id": id}, params, fields)

    def correct_invalidate_fact(
        self, id: Id, request: Optional[InvalidateFactRequest] = None, /, **fields: Any
    ) -> FactResponse:
        """POST /v1/gb/facts/{id}/invalidate: closes a live fact by hand (``invalid_at``, default now)."""
        return self._call("correct_invalidate_fact", {"id": id}, request, fields)

    def correct_reopen_fact(
        self, id: Id, request: Optional[ReopenFactRequest] = None, /, **fields: Any
    ) -> FactResponse:
        """POST /v1/gb/facts/{id}/reopen: undoes a closing by hand."""
        return self._call("correct_reopen_fact", {"id": id}, request, fields)

    def correct_merge_entities(
        self, request: Optional[MergeEntitiesRequest] = None, /, **fields: Any
    ) -> MergeEntitiesResponse:
        """POST /v1/gb/entities/merge: moves the facts of ``from_`` (the JSON ``from``) to ``into`` (not undoable)."""
        return self._call("correct_merge_entities", None, request, fields)

    # -- the server -------------------------------------------------------------------------

    def health(self) -> Health:
        """GET /healthz: ``status`` is ``ok`` while the process answers."""
        return self._call("health")

    def ready(self) -> Ready:
        """GET /readyz: the database, its migrations and the vector store; a 503 ``GligabaoError`` says what is not."""
        return self._call("ready")
