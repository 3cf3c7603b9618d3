"""
gligabao: a client of the gligabao memory server. Remember texts, search and query what they
said, build a context block for a prompt, forget and correct.

    from gligabao import Gligabao
    client = Gligabao("http://127.0.0.1:8080", token="...")
    client.remember(user_id="alice", text="Alice moved to Paris in 2025.")

The request and response classes are generated from the server's OpenAPI document (_types.py).
"""

from ._sse import RunEvent
from ._types import *  # noqa: F401,F403
from ._types import API_VERSION
from ._types import __all__ as _types_all
from .aio import AsyncGligabao
from .client import Gligabao
from .errors import AmbiguousEntityError, GligabaoConnectionError, GligabaoError

__version__ = API_VERSION

__all__ = [
    "Gligabao",
    "AsyncGligabao",
    "GligabaoError",
    "GligabaoConnectionError",
    "AmbiguousEntityError",
    "RunEvent",
    "__version__",
    *_types_all,
]
