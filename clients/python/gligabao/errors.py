"""What the client raises: the server's refusals, a name that means several entities, an unreachable server."""

from __future__ import annotations

from typing import Any, Optional, TYPE_CHECKING

if TYPE_CHECKING:
    from ._types import EntityCandidates


class GligabaoError(Exception):
    """
    The server answered with an error status: ``status`` is the HTTP status, ``error`` the
    server's ``{"error": "..."}`` text (naming the field of a bad request), ``body`` the whole
    answer as parsed JSON (or as text when it was not JSON).
    """

    def __init__(self, status: int, error: str, body: Any = None, method: str = "", url: str = "") -> None:
        super().__init__(f"{status}: {error}")
        self.status = status
        self.error = error
        self.body = body
        self.method = method
        self.url = url


class AmbiguousEntityError(GligabaoError):
    """
    ``entity(name=...)`` named more than one entity: the server answered 300 Multiple Choices.
    ``candidates`` lists them, best first; ask again with ``entity(id=candidate.id)``.
    """

    def __init__(self, candidates: "EntityCandidates", body: Any = None, method: str = "", url: str = "") -> None:
        names = ", ".join(f"{c.name} ({c.type}, id {c.id:g})" for c in candidates.candidates)
        super().__init__(300, f"{candidates.name!r} names more than one entity: {names}", body, method, url)
        self.candidates = candidates


class GligabaoConnectionError(Exception):
    """
    No answer from the server: it could not be reached, the connection broke, or it timed out.
    The underlying error (``urllib.error.URLError``, ``OSError``, ``TimeoutError``) is its ``__cause__``.
    """

    def __init__(self, message: str, url: str = "", reason: Optional[BaseException] = None) -> None:
        super().__init__(message)
        self.url = url
        self.reason = reason
