"""One HTTP exchange with the server over urllib: the request built, the answer read or refused."""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, Mapping, Optional, Tuple, Type, TypeVar

from ._wire import Operation, Wire
from .errors import GligabaoConnectionError, GligabaoError

W = TypeVar("W", bound=Wire)

# the errors of a connection that broke, was refused or timed out
NETWORK_ERRORS = (urllib.error.URLError, http.client.HTTPException, OSError)


def coerce(cls: Type[W], value: Any, fields: Mapping[str, Any]) -> W:
    """A request object from an instance of ``cls``, a dict of its JSON, or keyword arguments."""
    if value is not None and fields:
        raise TypeError(f"give a {cls.__name__} or keyword arguments, not both")
    if value is None:
        # a missing or unknown keyword is a TypeError naming it, before anything is sent
        return cls(**fields)
    if isinstance(value, cls):
        return value
    if isinstance(value, dict):
        return cls.from_json(value)
    raise TypeError(f"expected a {cls.__name__}, got {type(value).__name__}")


def split_fields(params: Optional[Type[Wire]], fields: Mapping[str, Any]) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """The keywords of a call with both query parameters and a body: the parameters' fields, and the rest."""
    known = {f.attr for f in params.__wire__} if params is not None else set()
    return (
        {k: v for k, v in fields.items() if k in known},
        {k: v for k, v in fields.items() if k not in known},
    )


def query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def path_of(template: str, args: Mapping[str, Any]) -> str:
    """The path with its parameters filled in, each one URL-encoded (a dataset name may hold a slash)."""
    return template.format(**{k: urllib.parse.quote(query_value(v), safe="") for k, v in args.items()})


class Answer:
    """A response read whole: status, headers, and the body as bytes."""

    def __init__(self, status: int, headers: Mapping[str, str], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    @property
    def is_json(self) -> bool:
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        return ctype == "application/json" or ctype.endswith("+json")

    def json(self) -> Any:
        return json.loads(self.body.decode("utf-8")) if self.body else None


class Transport:
    """Sends requests with the base URL, the bearer token and the timeout of one client."""

    def __init__(self, base_url: str, token: Optional[str], timeout: Optional[float], user_agent: str) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.user_agent = user_agent

    def open(
        self,
        method: str,
        path: str,
        query: Optional[Mapping[str, Any]] = None,
        body: Any = None,
        headers: Optional[Mapping[str, str]] = None,
    ) -> Tuple[str, Any]:
        """The URL and the open response (urllib's HTTPError for a status of 300 and above)."""
        url = self.base_url + path
        if query:
            url += "?" + urllib.parse.urlencode({k: query_value(v) for k, v in query.items()})
        sent = {"User-Agent": self.user_agent}
        if self.token:
            sent["Authorization"] = f"Bearer {self.token}"
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            sent["Content-Type"] = "application/json"
        sent.update(headers or {})
        request = urllib.request.Request(url, data=data, method=method, headers=sent)
        try:
            return url, urllib.request.urlopen(request, timeout=self.timeout)
        except urllib.error.HTTPError as error:
            # an error status is an answer, with a body to read
            return url, error
        except NETWORK_ERRORS as error:
            raise GligabaoConnectionError(f"{method} {url}: {reason_of(error)}", url, error) from error

    def exchange(
        self,
        method: str,
        path: str,
        query: Optional[Mapping[str, Any]] = None,
        body: Any = None,
    ) -> Tuple[str, Answer]:
        url, response = self.open(method, path, query, body)
        try:
            with response:
                payload = response.read()
        except NETWORK_ERRORS as error:
            raise GligabaoConnectionError(f"{method} {url}: {reason_of(error)}", url, error) from error
        return url, Answer(status_of(response), response.headers, payload)


def status_of(response: Any) -> int:
    return int(getattr(response, "status", None) or response.code)


def reason_of(error: BaseException) -> str:
    reason = getattr(error, "reason", None)
    return str(reason if reason is not None else error) or type(error).__name__


def refusal(method: str, url: str, answer: Answer) -> GligabaoError:
    """The error of an answer that is not a success: the server's ``{"error"}`` text, or its body."""
    text = answer.body.decode("utf-8", errors="replace")
    body: Any = text
    error = text.strip() or http.client.responses.get(answer.status, "error")
    if answer.is_json:
        try:
            body = answer.json()
        except ValueError:
            pass
        if isinstance(body, dict) and isinstance(body.get("error"), str):
            error = body["error"]
    return GligabaoError(answer.status, error, body, method, url)


def parse_answer(operation: Operation, method: str, url: str, answer: Answer) -> Tuple[int, Any]:
    """The answer read into the class the document gives its status, or the error it is."""
    codec = operation.responses.get(answer.status)
    if codec is None or answer.status >= 400:
        raise refusal(method, url, answer)
    if answer.status == 204 or not answer.body:
        return answer.status, None
    if not answer.is_json:
        return answer.status, answer.body
    return answer.status, codec.parse(answer.json())
