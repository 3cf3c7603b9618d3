"""Server-Sent Events, read by hand from a streaming response (the WHATWG event-stream format)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, List, Optional, TYPE_CHECKING

if TYPE_CHECKING:
    from ._types import RememberRun

# the events after which a run's stream ends (docs/INGESTION.md)
FINAL_EVENTS = ("succeeded", "failed", "cancelled")
# the events whose data is the run as GET /v1/gb/runs/{id} shows it
RUN_EVENTS = ("queued", "started") + FINAL_EVENTS


@dataclass
class ServerSentEvent:
    """One dispatched event: its type (``message`` when the stream names none), its data, its id."""

    event: str
    data: str
    id: Optional[str] = None
    retry: Optional[int] = None


class SseParser:
    """
    Feeds lines (without their line ending) and returns an event at each blank line that ends
    one. Comments (``: keep-alive``) and unknown fields are ignored; ``retry`` is kept for the
    next event and in ``self.retry``; ``last_event_id`` is what a reconnect sends.
    """

    def __init__(self) -> None:
        self.last_event_id: Optional[str] = None
        self.retry: Optional[int] = None
        self._event = ""
        self._data: List[str] = []

    def feed(self, line: str) -> Optional[ServerSentEvent]:
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        elif name == "id":
            if "\0" not in value:
                self.last_event_id = value
        elif name == "retry":
            if value.isdigit():
                self.retry = int(value)
        return None

    def _dispatch(self) -> Optional[ServerSentEvent]:
        event, data = self._event or "message", self._data
        self._event, self._data = "", []
        # a block without data dispatches nothing (it may still have set the id or retry)
        if not data:
            return None
        return ServerSentEvent(event=event, data="\n".join(data), id=self.last_event_id, retry=self.retry)


def split_lines(chunks: Iterable[bytes]) -> Iterator[str]:
    """The lines of a byte stream, whatever their ending (CRLF, LF or CR), decoded as UTF-8."""
    pending = b""
    for chunk in chunks:
        pending += chunk
        while True:
            cut = min((i for i in (pending.find(b"\r"), pending.find(b"\n")) if i != -1), default=-1)
            # a CR at the end may be the first half of a CRLF: wait for the next chunk
            if cut == -1 or (pending[cut:cut + 1] == b"\r" and cut == len(pending) - 1):
                break
            line, rest = pending[:cut], pending[cut + 1:]
            if pending[cut:cut + 1] == b"\r" and rest.startswith(b"\n"):
                rest = rest[1:]
            yield line.decode("utf-8", errors="replace")
            pending = rest
    # a last line without its ending is dropped: an event needs a blank line to be dispatched
    if pending.endswith(b"\r"):
        yield pending[:-1].decode("utf-8", errors="replace")


def parse_events(chunks: Iterable[bytes], parser: Optional[SseParser] = None) -> Iterator[ServerSentEvent]:
    """The events of a byte stream."""
    parser = parser or SseParser()
    for line in split_lines(chunks):
        event = parser.feed(line)
        if event is not None:
            yield event


@dataclass
class RunEvent:
    """
    A change of a remember run (GET /v1/gb/runs/{id}/events): ``event`` is ``queued``,
    ``started``, ``stage``, ``progress``, or last ``succeeded``, ``failed`` or ``cancelled``;
    ``data`` is its parsed JSON.
    """

    event: str
    data: Any
    id: Optional[str] = None

    @property
    def final(self) -> bool:
        """The run's last event: it succeeded, failed or was cancelled."""
        return self.event in FINAL_EVENTS

    @property
    def run(self) -> Optional["RememberRun"]:
        """The run as GET /v1/gb/runs/{id} shows it, for the events that carry it (not ``stage`` or ``progress``)."""
        if self.event not in RUN_EVENTS or not isinstance(self.data, dict):
            return None
        from ._types import RememberRun

        return RememberRun.from_json(self.data)

    @classmethod
    def of(cls, sse: ServerSentEvent) -> "RunEvent":
        try:
            data: Any = json.loads(sse.data)
        except ValueError:
            data = sse.data
        return cls(event=sse.event, data=data, id=sse.id)
