"""How the generated classes of _types.py read and write JSON.

Each generated dataclass lists its JSON fields in ``__wire__`` (set at the end of _types.py,
once every class exists). Reading is tolerant: a field the class does not know is kept in
``extra_fields``, since a newer server may add fields. Writing leaves out the optional fields
that are None, so the server applies its defaults.
"""

from __future__ import annotations

from typing import Any, ClassVar, Dict, Optional, Tuple, Type, TypeVar

T = TypeVar("T", bound="Wire")


class Codec:
    """Reads a JSON value into Python and writes it back. The base reads and writes as is."""

    def parse(self, value: Any) -> Any:
        return value

    def dump(self, value: Any) -> Any:
        return dump_any(value)


ANY = Codec()


def dump_any(value: Any) -> Any:
    """A value as JSON: dataclasses of _types.py through their to_json, containers item by item."""
    if isinstance(value, Wire):
        return value.to_json()
    if isinstance(value, (list, tuple)):
        return [dump_any(v) for v in value]
    if isinstance(value, dict):
        return {str(k): dump_any(v) for k, v in value.items()}
    return value


class Obj(Codec):
    """A JSON object read into one generated class."""

    def __init__(self, cls: Type[Wire]) -> None:
        self.cls = cls

    def parse(self, value: Any) -> Any:
        return None if value is None else self.cls.from_json(value)


class ListOf(Codec):
    def __init__(self, item: Codec) -> None:
        self.item = item

    def parse(self, value: Any) -> Any:
        if not isinstance(value, list):
            return value
        return [self.item.parse(v) for v in value]


class DictOf(Codec):
    def __init__(self, item: Codec) -> None:
        self.item = item

    def parse(self, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        return {k: self.item.parse(v) for k, v in value.items()}


class OneOf(Codec):
    """
    One of several classes (e.g. a text's or an image's remember response): the class whose
    required fields are all present, the one requiring most first. Anything but an object
    (a member of the union that is not a class) is kept as it is.
    """

    def __init__(self, *classes: Type[Wire]) -> None:
        self.classes = sorted(classes, key=lambda c: -len(c.required_keys()))

    def parse(self, value: Any) -> Any:
        if not isinstance(value, dict) or not self.classes:
            return value
        for cls in self.classes:
            if all(key in value for key in cls.required_keys()):
                return cls.from_json(value)
        # none fits: the most demanding one names what is missing
        return self.classes[0].from_json(value)


class Field:
    """A JSON field of a generated class: its key, its attribute (``from`` is ``from_``), its codec."""

    __slots__ = ("key", "attr", "codec", "required")

    def __init__(self, key: str, codec: Codec = ANY, required: bool = False, attr: Optional[str] = None) -> None:
        self.key = key
        self.attr = attr or key
        self.codec = codec
        self.required = required


class Wire:
    """The base of every generated class: from_json and to_json by the class's ``__wire__``."""

    __wire__: ClassVar[Tuple[Field, ...]] = ()
    extra_fields: Dict[str, Any]

    @classmethod
    def required_keys(cls) -> Tuple[str, ...]:
        return tuple(f.key for f in cls.__wire__ if f.required)

    @classmethod
    def from_json(cls: Type[T], data: Any) -> T:
        """Reads the parsed JSON of one object; unknown fields go to ``extra_fields``."""
        if isinstance(data, cls):
            return data
        if not isinstance(data, dict):
            raise ValueError(f"{cls.__name__}: expected a JSON object, got {type(data).__name__}")
        values: Dict[str, Any] = {}
        for f in cls.__wire__:
            if f.key in data:
                values[f.attr] = f.codec.parse(data[f.key])
            elif f.required:
                raise ValueError(f"{cls.__name__}: the field {f.key!r} is missing")
        known = {f.key for f in cls.__wire__}
        values["extra_fields"] = {k: v for k, v in data.items() if k not in known}
        return cls(**values)

    def to_json(self) -> Dict[str, Any]:
        """The JSON object: optional fields that are None are left out; ``extra_fields`` are sent as they are."""
        out: Dict[str, Any] = {}
        for f in self.__wire__:
            value = getattr(self, f.attr)
            if value is None and not f.required:
                continue
            out[f.key] = f.codec.dump(value)
        for key, value in (self.extra_fields or {}).items():
            out.setdefault(key, dump_any(value))
        return out


class Operation:
    """An endpoint as the served document describes it, for the client's calls."""

    __slots__ = ("method", "path", "params", "body", "responses")

    def __init__(
        self,
        method: str,
        path: str,
        params: Optional[Type[Wire]] = None,
        body: Optional[Type[Wire]] = None,
        responses: Optional[Dict[int, Codec]] = None,
    ) -> None:
        self.method = method
        self.path = path
        self.params = params
        self.body = body
        self.responses = responses or {}
