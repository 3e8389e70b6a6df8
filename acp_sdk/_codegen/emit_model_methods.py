"""Emit the dunder methods of a model class into its body, as attrs would write them.

Why: attrs writes `__init__`, `__eq__`, `__ne__`, `__hash__` and `__repr__` of every class
as source text and `compile()`s it when the class is created, that is at every import.
For the ~140 stable models that was about half of `from acp_sdk import Client`. Written
into the generated module instead, they are compiled once into its `.pyc`. attrs detects
methods a class body defines (`auto_detect`, on by default for `attrs.frozen`) and keeps
them, so the classes stay attrs classes: `attrs.fields`, `attrs.evolve`, `attrs.asdict`,
slots, frozenness and the mypy plugin's view are unchanged.

The semantics are attrs' own for `@attrs.frozen(kw_only=True, order=False)`:
- `__init__`: keyword-only, every `init=True` field in attrs order (the base classes'
  fields first), a factory field defaulting to `attrs.NOTHING`, `_explicit` set to its
  default; values stored with `object.__setattr__` bound to the instance (the class is
  frozen), as attrs' own `__init__` does.
- `__eq__`: `NotImplemented` unless both have the same class, then every `eq=True` field
  compared with `==`, in order, short-circuiting (`and`); `__ne__` its negation
  (written out, not a call to `__eq__`).
- `__hash__`: a tuple of a per-class constant and every `hash=True` field.
- `__repr__`: `model_repr` from `_model_support` (attrs' format and recursion guard).
`tests/protocol/test_model_methods.py` checks every generated class against `attrs.fields`.
"""

from __future__ import annotations

from collections.abc import Sequence

from attrs import frozen


@frozen(kw_only=True, order=False)
class Slot:
    """One attrs field of a class, as the emitted methods need it."""

    name: str  # the Python name
    annotation: str  # the field's annotation, as written in the class body
    default: str | None  # Python source of the default, None when required
    factory: str | None = None  # Python source of the factory, when there is one
    init: bool = True
    eq: bool = True
    hash: bool = True


# WireModel's own fields (acp_sdk/protocol/_model_support.py), first in every model.
WIRE_MODEL_SLOTS: tuple[Slot, ...] = (
    Slot(name="extra", annotation="Mapping[str, Any]", default="EMPTY", hash=False),
    Slot(
        name="_explicit",
        annotation="frozenset[str]",
        default="NO_EXPLICIT",
        init=False,
        eq=False,
        hash=False,
    ),
)


def slot_from_args(name: str, annotation: str, args: Sequence[str]) -> Slot:
    """A `Slot` from the arguments the class body passes to `attrs.field(...)`."""
    for arg in args:
        if arg.startswith("factory="):
            return Slot(
                name=name,
                annotation=annotation,
                default="NOTHING",
                factory=arg.removeprefix("factory="),
            )
        if arg.startswith("default="):
            return Slot(name=name, annotation=annotation, default=arg.removeprefix("default="))
    return Slot(name=name, annotation=annotation, default=None)


def methods(class_name: str, slots: Sequence[Slot]) -> list[str]:
    """The lines of the methods, indented for a class body (each preceded by a blank)."""
    lines: list[str] = []
    params = []
    for slot in slots:
        if not slot.init:
            continue
        if slot.default is None:
            params.append(f"{slot.name}: {slot.annotation}")
        elif slot.factory is not None:
            params.append(f"{slot.name}: {slot.annotation} | NothingType = NOTHING")
        else:
            params.append(f"{slot.name}: {slot.annotation} = {slot.default}")
    lines += ["", f"    def __init__(self, *, {', '.join(params)}) -> None:"]
    # `object.__setattr__` bound to the instance once, as attrs does: each store is then
    # a two-argument call (an unbound three-argument one made construction ~10% slower).
    lines.append("        _setattr = _BIND_SETATTR(self)")
    for slot in slots:
        if not slot.init:
            value = slot.default
        elif slot.factory is not None:
            make = "[]" if slot.factory == "list" else f"{slot.factory}()"
            value = f"{make} if {slot.name} is NOTHING else {slot.name}"
        else:
            value = slot.name
        lines.append(f'        _setattr("{slot.name}", {value})')
    compared = [s.name for s in slots if s.eq]
    lines += [
        "",
        "    def __eq__(self, other: Any) -> bool:",
        "        if other.__class__ is not self.__class__:",
        "            return NotImplemented",
    ]
    if compared:
        chain = " and ".join(f"self.{n} == other.{n}" for n in compared)
        lines.append(f"        return {chain}")
    else:
        lines.append("        return True")
    lines += [
        "",
        "    def __ne__(self, other: Any) -> bool:",
        "        if other.__class__ is not self.__class__:",
        "            return NotImplemented",
    ]
    if compared:
        chain = " and ".join(f"self.{n} == other.{n}" for n in compared)
        lines.append(f"        return not ({chain})")
    else:
        lines.append("        return False")
    hashed = "".join(f", self.{s.name}" for s in slots if s.hash)
    lines += [
        "",
        "    def __hash__(self) -> int:",
        f'        return hash(("{class_name}",{hashed}))'
        if not hashed
        else f'        return hash(("{class_name}"{hashed}))',
        "",
        "    __repr__ = model_repr",
    ]
    return lines
