"""Tools: `@tool` turns a typed, documented function into something a model can call.

The JSON schema comes from the type hints; each parameter's description from the docstring's
``Args:`` section (Google style). Arguments are validated against the hints before the call,
so a model's malformed call becomes a failed result it can read and correct, never a crash.
Sync functions run in a worker thread so they do not block the event loop.
"""

from __future__ import annotations

import asyncio
import enum
import inspect
import json
import re
import types
import typing
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from .errors import ToolDefinitionError
from .messages import ToolInfo
from .model import ToolSpec

__all__ = ["Tool", "ToolArgumentError", "tool"]


class ToolArgumentError(ValueError):
    """The model's arguments do not fit the tool's parameters (shown to the model)."""


@dataclass(frozen=True, slots=True)
class _Param:
    name: str
    annotation: Any
    required: bool
    default: Any


class Tool:
    """A callable tool: ``spec`` for the model, ``invoke(arguments)`` to run it."""

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
    ) -> None:
        self.func = func
        self.name = name or func.__name__
        doc = inspect.getdoc(func) or ""
        summary, arg_docs = _parse_docstring(doc)
        self.description = description or summary or self.name
        try:
            hints = get_type_hints(func)
        except Exception as exc:  # a forward reference that does not resolve
            raise ToolDefinitionError(f"Tool {self.name!r}: cannot read type hints: {exc}") from exc
        self._params: list[_Param] = []
        properties: dict[str, Any] = {}
        required: list[str] = []
        for param in inspect.signature(func).parameters.values():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise ToolDefinitionError(f"Tool {self.name!r}: *args/**kwargs are not supported")
            annotation = hints.get(param.name, str)
            schema = _schema(annotation, f"{self.name}.{param.name}")
            if param.name in arg_docs:
                schema["description"] = arg_docs[param.name]
            is_required = param.default is inspect.Parameter.empty
            if not is_required and param.default is not None:
                schema["default"] = _jsonable(param.default)
            properties[param.name] = schema
            if is_required:
                required.append(param.name)
            self._params.append(_Param(param.name, annotation, is_required, param.default))
        self.parameters: dict[str, Any] = {
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": False,
        }
        self.is_async = inspect.iscoroutinefunction(func)

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.parameters)

    @property
    def info(self) -> ToolInfo | None:
        """Who offers the tool and what it says of itself, kept with each of its calls
        (`engine.messages.ToolInfo`); None for a plain function, which needs no label."""
        return None

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Check and convert the model's arguments; raise `ToolArgumentError` with a reason."""
        if not isinstance(arguments, Mapping):
            raise ToolArgumentError("arguments must be a JSON object")
        known = {p.name for p in self._params}
        extra = sorted(set(arguments) - known)
        if extra:
            noun = "argument" if len(extra) == 1 else "arguments"
            raise ToolArgumentError(f"unexpected {noun}: {', '.join(extra)}")
        values: dict[str, Any] = {}
        for param in self._params:
            if param.name not in arguments:
                if param.required:
                    raise ToolArgumentError(f"missing required argument {param.name!r}")
                continue
            values[param.name] = _convert(arguments[param.name], param.annotation, param.name)
        return values

    async def invoke(self, arguments: Mapping[str, Any]) -> Any:
        """Validate, then call the function (sync functions in a worker thread)."""
        values = self.validate(arguments)
        if self.is_async:
            return await self.func(**values)
        result = await asyncio.to_thread(self.func, **values)
        if inspect.isawaitable(result):
            result = await result
        return result

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.func(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Tool({self.name!r})"


def tool(
    func: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
) -> Any:
    """Decorate a function as a tool: ``@tool`` or ``@tool(name=..., description=...)``."""

    def wrap(f: Callable[..., Any]) -> Tool:
        return Tool(f, name=name, description=description)

    return wrap(func) if func is not None else wrap


def as_tool(obj: Tool | Callable[..., Any] | Callable[..., Awaitable[Any]]) -> Tool:
    """Accept a `Tool` or a plain function."""
    return obj if isinstance(obj, Tool) else Tool(obj)


def result_text(value: Any) -> str:
    """Turn a tool's return value into the text the model reads."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


# ---------------------------------------------------------------------------- schemas

_SIMPLE: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _schema(annotation: Any, where: str) -> dict[str, Any]:
    if annotation in _SIMPLE:
        return {"type": _SIMPLE[annotation]}
    if annotation is Any:
        return {}
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return {"enum": [m.value for m in annotation]}
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is Literal:
        return {"enum": list(args)}
    if origin in (Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        if len(options) == 1:
            inner = _schema(options[0], where)
            return {"anyOf": [inner, {"type": "null"}]} if len(args) > 1 else inner
        return {"anyOf": [_schema(a, where) for a in args]}
    if origin in (list, tuple, set, frozenset, typing.Sequence) or annotation in (list, tuple):
        item = args[0] if args else Any
        return {"type": "array", "items": _schema(item, where)}
    if origin in (dict, typing.Mapping) or annotation is dict:
        value = args[1] if len(args) == 2 else Any
        return {"type": "object", "additionalProperties": _schema(value, where)}
    raise ToolDefinitionError(f"Tool parameter {where}: type {annotation!r} is not supported")


def _convert(value: Any, annotation: Any, name: str) -> Any:
    """Check ``value`` against ``annotation``; convert where JSON cannot say it (enums)."""
    if annotation is Any:
        return value
    if annotation is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        raise ToolArgumentError(f"argument {name!r} must be a number, got {value!r}")
    if annotation is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise ToolArgumentError(f"argument {name!r} must be an integer, got {value!r}")
    if annotation in (str, bool):
        if type(value) is annotation:
            return value
        raise ToolArgumentError(f"argument {name!r} must be a {_SIMPLE[annotation]}, got {value!r}")
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        try:
            return annotation(value)
        except ValueError:
            allowed = ", ".join(repr(m.value) for m in annotation)
            raise ToolArgumentError(f"argument {name!r} must be one of {allowed}") from None
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is Literal:
        if value in args:
            return value
        raise ToolArgumentError(f"argument {name!r} must be one of {list(args)!r}")
    if origin in (Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        for option in args:
            if option is type(None):
                continue
            try:
                return _convert(value, option, name)
            except ToolArgumentError:
                continue
        raise ToolArgumentError(f"argument {name!r} has the wrong type: {value!r}")
    if origin in (list, tuple, set, frozenset, typing.Sequence) or annotation in (list, tuple):
        if not isinstance(value, list):
            raise ToolArgumentError(f"argument {name!r} must be an array")
        item = args[0] if args else Any
        items = [_convert(v, item, f"{name}[{i}]") for i, v in enumerate(value)]
        return tuple(items) if origin is tuple else items
    if origin in (dict, typing.Mapping) or annotation is dict:
        if not isinstance(value, dict):
            raise ToolArgumentError(f"argument {name!r} must be an object")
        inner = args[1] if len(args) == 2 else Any
        return {k: _convert(v, inner, f"{name}.{k}") for k, v in value.items()}
    return value


def _jsonable(value: Any) -> Any:
    return value.value if isinstance(value, enum.Enum) else value


_SECTION = re.compile(r"^(Args|Arguments|Parameters|Returns|Raises|Yields|Examples?|Notes?):\s*$")


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Return (summary, {arg: description}) from a Google-style docstring."""
    lines = doc.splitlines()
    summary_lines: list[str] = []
    args: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    arg_indent: int | None = None
    for raw in lines:
        line = raw.rstrip()
        match = _SECTION.match(line.strip())
        if match and not raw.startswith((" ", "\t")):
            section, current = match.group(1), None
            continue
        if section is None:
            if line.strip() or summary_lines:
                summary_lines.append(line.strip())
            continue
        if section in ("Args", "Arguments", "Parameters") and line.strip():
            indent = len(raw) - len(raw.lstrip())
            m = re.match(r"^\s*(\w+)\s*(\([^)]*\))?\s*:\s*(.*)$", line)
            if m and (arg_indent is None or indent <= arg_indent):
                arg_indent = indent
                current = m.group(1)
                args[current] = m.group(3).strip()
            elif current is not None:
                args[current] = (args[current] + " " + line.strip()).strip()
    summary = " ".join(s for s in summary_lines if s).strip()
    return summary, args
