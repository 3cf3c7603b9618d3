"""
The asynchronous client. It costs nothing beyond the standard library: each call runs the
synchronous client's on a thread (``asyncio.to_thread``, Python 3.9+), so a call holds a thread
of the default executor while it waits for the server, as any blocking I/O does under asyncio.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any, AsyncIterator, Callable, Literal, Optional, TypeVar, Union, overload

from ._sse import RunEvent
from ._types import (
    CancelRunRequest,
    ContextRequest,
    ContextResponse,
    DatasetSchema,
    DatasetSchemaView,
    Datasets,
    DeletedDataset,
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
from .client import Gligabao, Id

R = TypeVar("R")


class AsyncGligabao:
    """
    The methods of ``Gligabao``, to await; ``run_events`` is an async iterator. Takes the same
    arguments; ``sync`` is the synchronous client it runs on threads.
    """

    def __init__(
        self,
        base_url: Optional[str] = None,
        token: Optional[str] = None,
        *,
        timeout: Optional[float] = 300.0,
    ) -> None:
        self.sync = Gligabao(base_url, token, timeout=timeout)
        self.base_url = self.sync.base_url

    async def _thread(self, method: Callable[..., R], /, *args: Any, **kwargs: Any) -> R:
        return await asyncio.to_thread(functools.partial(method, *args, **kwargs))

    @overload
    async def remember(self, request: None = None, /, *, wait: Literal[False], **fields: Any) -> RememberQueued: ...
    @overload
    async def remember(self, request: None = None, /, *, image: str, **fields: Any) -> ImageRememberResponse: ...
    @overload
    async def remember(self, request: None = None, /, *, user_id: str, **fields: Any) -> RememberResponse: ...
    @overload
    async def remember(
        self, request: RememberRequest, /
    ) -> Union[RememberResponse, ImageRememberResponse, RememberQueued]: ...

    async def remember(
        self, request: Optional[RememberRequest] = None, /, **fields: Any
    ) -> Union[RememberResponse, ImageRememberResponse, RememberQueued]:
        return await self._thread(self.sync.remember, request, **fields)

    @overload
    async def remember_batch(
        self, request: None = None, /, *, wait: Literal[True], **fields: Any
    ) -> RememberBatchResult: ...
    @overload
    async def remember_batch(self, request: None = None, /, *, user_id: str, **fields: Any) -> RememberBatchQueued: ...
    @overload
    async def remember_batch(
        self, request: RememberBatchRequest, /
    ) -> Union[RememberBatchQueued, RememberBatchResult]: ...

    async def remember_batch(
        self, request: Optional[RememberBatchRequest] = None, /, **fields: Any
    ) -> Union[RememberBatchQueued, RememberBatchResult]:
        return await self._thread(self.sync.remember_batch, request, **fields)

    async def run(self, id: Id) -> RememberRun:
        return await self._thread(self.sync.run, id)

    async def cancel_run(self, id: Id, request: Optional[CancelRunRequest] = None, /, **fields: Any) -> RememberRun:
        return await self._thread(self.sync.cancel_run, id, request, **fields)

    async def runs(self, params: Optional[RunsParams] = None, /, **fields: Any) -> RunsResponse:
        return await self._thread(self.sync.runs, params, **fields)

    async def wait_for_run(self, id: Id, *, reconnects: int = 5) -> RememberRun:
        return await self._thread(self.sync.wait_for_run, id, reconnects=reconnects)

    async def search(self, request: Optional[SearchRequest] = None, /, **fields: Any) -> SearchResponse:
        return await self._thread(self.sync.search, request, **fields)

    async def query(self, request: Optional[QueryRequest] = None, /, **fields: Any) -> QueryResponse:
        return await self._thread(self.sync.query, request, **fields)

    async def context(self, request: Optional[ContextRequest] = None, /, **fields: Any) -> ContextResponse:
        return await self._thread(self.sync.context, request, **fields)

    async def export(self, params: Optional[ExportParams] = None, /, **fields: Any) -> GraphExport:
        return await self._thread(self.sync.export, params, **fields)

    async def export_graphml(self, params: Optional[ExportParams] = None, /, **fields: Any) -> str:
        return await self._thread(self.sync.export_graphml, params, **fields)

    async def entity(self, params: Optional[EntityParams] = None, /, **fields: Any) -> EntityStory:
        return await self._thread(self.sync.entity, params, **fields)

    async def fact(self, id: Id, params: Optional[ScopeParams] = None, /, **fields: Any) -> FactView:
        return await self._thread(self.sync.fact, id, params, **fields)

    async def datasets(self, params: Optional[UserParams] = None, /, **fields: Any) -> Datasets:
        return await self._thread(self.sync.datasets, params, **fields)

    async def sessions(self, params: Optional[ScopeParams] = None, /, **fields: Any) -> Sessions:
        return await self._thread(self.sync.sessions, params, **fields)

    async def dataset_schema(
        self, name: str, params: Optional[UserParams] = None, /, **fields: Any
    ) -> DatasetSchemaView:
        return await self._thread(self.sync.dataset_schema, name, params, **fields)

    async def set_dataset_schema(
        self, name: str, schema: Optional[DatasetSchema] = None, /, **fields: Any
    ) -> DatasetSchemaView:
        return await self._thread(self.sync.set_dataset_schema, name, schema, **fields)

    async def image(self, id: Id, params: Optional[ImageParams] = None, /, **fields: Any) -> bytes:
        return await self._thread(self.sync.image, id, params, **fields)

    async def forget_artifact(
        self, id: Id, params: Optional[ScopeParams] = None, /, **fields: Any
    ) -> ForgetArtifactResponse:
        return await self._thread(self.sync.forget_artifact, id, params, **fields)

    async def forget_image(
        self, id: Id, params: Optional[ScopeParams] = None, /, **fields: Any
    ) -> ForgetImageResponse:
        return await self._thread(self.sync.forget_image, id, params, **fields)

    async def forget_dataset(
        self, name: str, params: Optional[ForgetDatasetParams] = None, /, **fields: Any
    ) -> Union[DeletedDataset, HardDeletedDataset]:
        return await self._thread(self.sync.forget_dataset, name, params, **fields)

    async def forget_user(self, user_id: str) -> ForgetUserResponse:
        return await self._thread(self.sync.forget_user, user_id)

    async def correct_delete_fact(
        self, id: Id, params: Optional[ScopeParams] = None, /, **fields: Any
    ) -> ForgetArtifactResponse:
        return await self._thread(self.sync.correct_delete_fact, id, params, **fields)

    async def correct_delete_entity(
        self, id: Id, params: Optional[ScopeParams] = None, /, **fields: Any
    ) -> ForgetArtifactResponse:
        return await self._thread(self.sync.correct_delete_entity, id, params, **fields)

    async def correct_invalidate_fact(
        self, id: Id, request: Optional[InvalidateFactRequest] = None, /, **fields: Any
    ) -> FactResponse:
        return await self._thread(self.sync.correct_invalidate_fact, id, request, **fields)

    async def correct_reopen_fact(
        self, id: Id, request: Optional[ReopenFactRequest] = None, /, **fields: Any
    ) -> FactResponse:
        return await self._thread(self.sync.correct_reopen_fact, id, request, **fields)

    async def correct_merge_entities(
        self, request: Optional[MergeEntitiesRequest] = None, /, **fields: Any
    ) -> MergeEntitiesResponse:
        return await self._thread(self.sync.correct_merge_entities, request, **fields)

    async def health(self) -> Health:
        return await self._thread(self.sync.health)

    async def ready(self) -> Ready:
        return await self._thread(self.sync.ready)

    async def run_events(
        self, id: Id, *, last_event_id: Optional[str] = None, reconnects: int = 5
    ) -> AsyncIterator[RunEvent]:
        """The run's events as ``Gligabao.run_events`` gives them; each one read on a thread."""
        events = self.sync.run_events(id, last_event_id=last_event_id, reconnects=reconnects)
        try:
            while True:
                event = await asyncio.to_thread(next, events, None)
                if event is None:
                    return
                yield event
        finally:
            # closes the stream when the caller stops early
            await asyncio.to_thread(events.close)
