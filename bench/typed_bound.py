"""The least any decoder or encoder producing our typed objects must pay, measured.

A decoder that returns frozen, slotted attrs objects has to create each object and store
each of its slots; an encoder has to read each slot and build each JSON object. This module
writes, for one decoded message, straight-line code that does only that (no lookups in the
parsed dict, no checks, no defaults, no dispatch: the values are bound in advance), so its
time is a lower bound for `acp_sdk.decode` / `acp_sdk.encode` on that message with this
object model, on this interpreter. `bench/codec.py` reports it beside the orjson floor.

The objects are built the cheapest way known: as an instance of a mutable twin of the
class (a subclass adding nothing, with `object`'s `__setattr__`), filled by plain
attribute stores, then given the frozen class (`obj.__class__ = cls`). On CPython 3.11
that costs about half of storing through each slot descriptor's `__set__`, which is what
this bound used before (`construct="descriptors"` still measures that way, for
comparison with earlier runs).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import orjson


def _slots(cls: type) -> list[str]:
    """Every slot an object of `cls` holds: its attrs fields, and a model's `_explicit`
    (a plain slot beneath the attrs fields, see acp_sdk/protocol/_model_support.py)."""
    names = [a.name for a in attrs.fields(cls)]
    return [*names, "_explicit"] if hasattr(cls, "_explicit") else names


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.env: dict[str, Any] = {"new": object.__new__}
        self.count = 0

    def name(self, prefix: str, value: Any) -> str:
        self.count += 1
        key = f"{prefix}{self.count}"
        self.env[key] = value
        return key


def _twin(cls: type) -> type:
    namespace = {
        "__slots__": (),
        "__setattr__": object.__setattr__,
        "__delattr__": object.__delattr__,  # shares the type slot: both must be object's
    }
    return type(f"twin_{cls.__name__}", (cls,), namespace)


def decode_bound(
    wire: bytes, model: Any, construct: str = "twin", *, reads: bool = False
) -> Callable[[], Any]:
    """orjson.loads(wire), then create every object of `model` and store every slot.

    `construct` is "twin" (the cheapest known way, see the module docstring) or
    "descriptors" (`object.__new__(cls)`, then each slot descriptor's `__set__`).
    With `reads`, every value the wire carried is read out of the parsed JSON by
    subscript (`p["update"]["content"]`, once per key), as any decoder of orjson's dicts
    must; still no checks, no tag dispatch and no test for absent keys."""
    if construct not in ("twin", "descriptors"):
        raise ValueError(construct)
    out = _Writer()

    def read(src: str | None, node: Any, key: str | int) -> tuple[str | None, Any]:
        """The expression (bound to a new local) reading `key` of the parsed `node`."""
        if src is None or not reads:
            return None, None
        if isinstance(key, str) and (type(node) is not dict or key not in node):
            return None, None
        out.count += 1
        local = f"j{out.count}"
        out.lines.append(f"    {local} = {src}[{key!r}]")
        return local, node[key]

    def build(value: Any, src: str | None = None, node: Any = None) -> str:
        if attrs.has(type(value)):
            cls = type(value)
            children = {}
            wires = {a.name: a.metadata.get("wire") for a in attrs.fields(cls)}
            for slot in _slots(cls):
                wire_name = wires.get(slot)
                child_src, child_node = read(src, node, wire_name) if wire_name else (None, None)
                children[slot] = build(getattr(value, slot), child_src, child_node)
            obj = f"o{out.count + 1}"
            out.count += 1
            if construct == "twin":
                out.lines.append(f"    {obj} = new({out.name('T', _twin(cls))})")
                for slot, child in children.items():
                    out.lines.append(f"    {obj}.{slot} = {child}")
                out.lines.append(f"    {obj}.__class__ = {out.name('C', cls)}")
                return obj
            out.lines.append(f"    {obj} = new({out.name('C', cls)})")
            for slot, child in children.items():
                setter = out.name("S", _descriptor(cls, slot).__set__)
                out.lines.append(f"    {setter}({obj}, {child})")
            return obj
        if isinstance(value, (tuple, list)) and value and attrs.has(type(value[0])):
            built = []
            for index, item in enumerate(value):
                item_src, item_node = read(src, node, index)
                built.append(build(item, item_src, item_node))
            items = ", ".join(built)
            return f"[{items}]" if isinstance(value, list) else f"({items},)"
        if src is not None and not isinstance(value, (list, tuple)):
            return src  # the parsed value itself (a string, number, bool or dict)
        return out.name("V", value)

    root = build(model, "p", orjson.loads(wire))
    source = "def run(wire):\n    p = loads(wire)\n" + "\n".join(out.lines)
    source += f"\n    return {root}\n"
    out.env["loads"] = orjson.loads
    exec(source, out.env)  # the code written above, from a model we decoded
    run = out.env["run"]
    return lambda: run(wire)


def _descriptor(cls: type, slot: str) -> Any:
    for klass in cls.__mro__:
        if slot in klass.__dict__:
            return klass.__dict__[slot]
    raise AttributeError(slot)


def encode_bound(model: Any) -> Callable[[], Any]:
    """Read every slot of `model`, build one dict per object, then orjson.dumps it."""
    out = _Writer()

    reads: list[str] = []  # slots every encoder must read but that stay out of the JSON

    def build(path: str, value: Any) -> str:
        if attrs.has(type(value)):
            items = []
            for slot in _slots(type(value)):
                if slot in ("extra", "_explicit"):
                    reads.append(f"{path}.{slot}")
                    continue
                items.append(f"'{slot}': {build(f'{path}.{slot}', getattr(value, slot))}")
            return "{" + ", ".join(items) + "}"
        if isinstance(value, (tuple, list)) and value and attrs.has(type(value[0])):
            return "[" + ", ".join(build(f"{path}[{i}]", v) for i, v in enumerate(value)) + "]"
        return path

    body = build("m", model)
    source = f"def run(m):\n    ({', '.join(reads)},)\n    return dumps({body})\n"
    out.env["dumps"] = orjson.dumps
    exec(source, out.env)  # the code written above, from a model we decoded
    run = out.env["run"]
    return lambda: run(model)
