"""What a method row is, and the `MethodTable` that indexes rows.

The rows themselves are generated from the schema (`acp_sdk.protocol._generated.methods`) and
collected in `acp_sdk.methods`. A `MethodTable` enforces these invariants when built:

1. keys `(handled_by, wire, kind)` are unique (unstable `mcp/message` is both a request
   and a notification, handled by both sides);
2. a notification has no result type, a request has one;
3. a handler name is used once per handling side;
4. a capability gate resolves, field by field, through the receiver's capability classes;
   so do the table's other gates: `update_gates` (a `session/update` variant, by its
   `sessionUpdate` tag, through the client's) and `sender_gates` (a method only a sender
   that advertised a capability of its own may send, through the sender's);
5. core method names never start with `_`, extension names always do;
6. `$/` names appear only on protocol rows.
"""

from __future__ import annotations

import enum
import typing
from collections.abc import Iterable, Iterator, Mapping
from types import MappingProxyType, NoneType, UnionType
from typing import TYPE_CHECKING, Any, ClassVar, Final, Generic, TypeVar, Union

import attrs

if TYPE_CHECKING:
    from typing_extensions import TypeForm

__all__ = [
    "GATE_UNKNOWN_METHOD",
    "Kind",
    "Layer",
    "Method",
    "MethodTable",
    "MethodTableError",
    "Notification",
    "Row",
    "Side",
    "Stability",
    "UnknownMethodGate",
]

P = TypeVar("P")
R = TypeVar("R")
# A classmethod's own type variables: the class's P and R would stay unsolved (Unknown
# under pyright) when `Method.extension(...)` is called on the bare class.
ExtP = TypeVar("ExtP")
ExtR = TypeVar("ExtR")


class Side(enum.Enum):
    """Which peer handles (receives) a method: `AGENT`, `CLIENT` or `BOTH`; `PROXY` for
    the unstable proxy-chain methods a conductor and its proxies exchange (`proxy/*`),
    which neither a client nor an agent sends or handles."""

    AGENT = "agent"
    CLIENT = "client"
    BOTH = "both"
    PROXY = "proxy"

    # Members are singletons and compare by identity: hash them by identity too, in C.
    # (Enum's own `__hash__` is a Python call; every row lookup hashes two of these.)
    __hash__ = object.__hash__

    @property
    def peer(self) -> Side:
        """The other side (`BOTH` and `PROXY` stay themselves)."""
        return _PEERS[self]


_PEERS: Final = {
    Side.AGENT: Side.CLIENT,
    Side.CLIENT: Side.AGENT,
    Side.BOTH: Side.BOTH,
    Side.PROXY: Side.PROXY,
}


class Kind(enum.Enum):
    """Whether a row is a request (answered) or a notification (not answered)."""

    REQUEST = "request"
    NOTIFICATION = "notification"

    __hash__ = object.__hash__  # as `Side.__hash__`


class Layer(enum.Enum):
    """`app` methods carry the conversation; the other two steer the connection itself."""

    APP = "app"
    PROTOCOL = "protocol"  # $/cancel_request
    SESSION_CONTROL = "session-control"  # session/cancel


class Stability(enum.Enum):
    """Where a row comes from: schema.json, schema.unstable.json, or a user extension."""

    STABLE = "stable"
    UNSTABLE = "unstable"
    EXTENSION = "extension"


@attrs.frozen(kw_only=True, order=False)
class Method(Generic[P, R]):
    """A request: `params_type` in, `result_type` out.

    Attributes:
        wire: The JSON-RPC method name, e.g. `session/new`.
        handled_by: The side that receives and answers it.
        params_type: The model class (or union alias) of `params`.
        result_type: The model class of the result.
        handler_name: The Python name of the facade method and handler (`new_session`).
        gate: Dotted wire path in the receiver's advertised capabilities that must be
            present (or literally `true`) before the method may be sent, or None.
        layer: Application, protocol (`$/...`) or session control (`session/cancel`).
        stability: Stable, unstable (schema.unstable.json) or a user extension.
    """

    kind: ClassVar[Kind] = Kind.REQUEST
    wire: str
    handled_by: Side
    params_type: TypeForm[P]
    result_type: TypeForm[R]
    handler_name: str
    gate: str | None = None
    layer: Layer = Layer.APP
    stability: Stability = Stability.STABLE

    @classmethod
    def extension(
        cls,
        wire: str,
        *,
        handled_by: Side,
        params_type: TypeForm[ExtP],
        result_type: TypeForm[ExtR],
        handler_name: str | None = None,
    ) -> Method[ExtP, ExtR]:
        """A typed row for a vendor method (`_vendor/...`), usable like any core row.

        Args:
            wire: The method name; extension names start with `_` (`_acme/echo`).
            handled_by: The side that answers it.
            params_type: The params class (an attrs class, or any type cattrs builds).
            result_type: The result class.
            handler_name: The handler's Python name (default: `ext_` + the wire name
                in snake case, e.g. `ext_acme_echo`).
        """
        return Method(
            wire=wire,
            handled_by=handled_by,
            params_type=params_type,
            result_type=result_type,
            handler_name=handler_name or _extension_handler_name(wire),
            stability=Stability.EXTENSION,
        )


@attrs.frozen(kw_only=True, order=False)
class Notification(Generic[P]):
    """A notification: `params_type` in, no answer. Attributes as for `Method`."""

    kind: ClassVar[Kind] = Kind.NOTIFICATION
    wire: str
    handled_by: Side
    params_type: TypeForm[P]
    handler_name: str
    gate: str | None = None
    layer: Layer = Layer.APP
    stability: Stability = Stability.STABLE
    result_type: ClassVar[None] = None

    @classmethod
    def extension(
        cls,
        wire: str,
        *,
        handled_by: Side,
        params_type: TypeForm[ExtP],
        handler_name: str | None = None,
    ) -> Notification[ExtP]:
        """A typed row for a vendor notification (`_vendor/...`); arguments as for
        `Method.extension`."""
        return Notification(
            wire=wire,
            handled_by=handled_by,
            params_type=params_type,
            handler_name=handler_name or _extension_handler_name(wire),
            stability=Stability.EXTENSION,
        )


Row = Union[Method[Any, Any], Notification[Any]]  # noqa: UP007 - evaluated at runtime on 3.10


def _extension_handler_name(wire: str) -> str:
    return "ext_" + "".join(c if c.isalnum() else "_" for c in wire.lstrip("_")).lower()


class MethodTableError(ValueError):
    """A set of rows breaks one of the method table's invariants."""


class UnknownMethodGate(enum.Enum):
    """The type of `GATE_UNKNOWN_METHOD` (a one-member enum, so checkers can narrow it)."""

    UNKNOWN_METHOD = "unknown method"


GATE_UNKNOWN_METHOD: Final = UnknownMethodGate.UNKNOWN_METHOD
"""What `MethodTable.gate_for` answers for a method name the table does not hold."""


class MethodTable:
    """An immutable, validated index over method rows."""

    def __init__(
        self,
        rows: Iterable[Row],
        *,
        capability_roots: Mapping[str, type],
        update_gates: Mapping[str, str] | None = None,
        sender_gates: Mapping[str, str] | None = None,
    ) -> None:
        self._rows: tuple[Row, ...] = tuple(rows)
        self._roots = MappingProxyType(dict(capability_roots))
        self.update_gates: Mapping[str, str] = MappingProxyType(dict(update_gates or {}))
        """`sessionUpdate` tag -> the client capability an agent needs to send it."""
        self.sender_gates: Mapping[str, str] = MappingProxyType(dict(sender_gates or {}))
        """Method -> the capability its sender must have advertised itself."""
        by_key: dict[tuple[Side, str, Kind], Row] = {}
        by_wire: dict[str, list[Row]] = {}
        handlers: dict[tuple[Side, str], Row] = {}
        for row in self._rows:
            self._check_row(row)
            key = (row.handled_by, row.wire, row.kind)
            if key in by_key:
                raise MethodTableError(f"duplicate row {row.wire!r} ({row.kind.value})")
            by_key[key] = row
            by_wire.setdefault(row.wire, []).append(row)
            for side in _sides(row.handled_by):
                if (side, row.handler_name) in handlers:
                    raise MethodTableError(
                        f"handler name {row.handler_name!r} used twice on the {side.value} side"
                    )
                handlers[(side, row.handler_name)] = row
        self._by_key = MappingProxyType(by_key)
        self._by_wire = MappingProxyType({w: tuple(rs) for w, rs in by_wire.items()})
        for tag, path in self.update_gates.items():
            self._check_path(f"session update {tag!r}", path, "clientCapabilities", "the client's")
        for wire, path in self.sender_gates.items():
            senders = {r.handled_by.peer for r in by_wire.get(wire, ())}
            roots = {_ROOTS[s] for s in senders if s in _ROOTS}
            if len(roots) != 1:
                raise MethodTableError(f"{wire}: a sender gate needs one sending side")
            self._check_path(wire, path, roots.pop(), "the sender's")

    def _check_row(self, row: Row) -> None:
        wire = row.wire
        if isinstance(row, Notification) != (row.result_type is None):
            raise MethodTableError(f"{wire}: a notification has no result, a request has one")
        if row.stability is Stability.EXTENSION:
            if not wire.startswith("_"):
                raise MethodTableError(f"{wire}: extension method names start with '_'")
        elif wire.startswith("_"):
            raise MethodTableError(f"{wire}: core method names never start with '_'")
        if wire.startswith("$/") != (row.layer is Layer.PROTOCOL):
            raise MethodTableError(f"{wire}: '$/' names belong to protocol rows only")
        if row.gate is not None:
            self._check_gate(row)

    def _check_gate(self, row: Row) -> None:
        assert row.gate is not None
        root = _ROOTS.get(row.handled_by)
        if root is None:
            raise MethodTableError(f"{row.wire}: gate {row.gate} is not the receiver's")
        self._check_path(row.wire, row.gate, root, "the receiver's")

    def _check_path(self, what: str, gate: str, root_expected: str, whose: str) -> None:
        root, *rest = gate.split(".")
        if root != root_expected or root not in self._roots:
            raise MethodTableError(f"{what}: gate {gate} is not {whose} ({root_expected})")
        cls: Any = self._roots[root]
        for depth, segment in enumerate(rest):
            field_type = _field_type(cls, segment)
            if field_type is None:
                raise MethodTableError(f"{what}: gate {gate} breaks at {segment!r}")
            if depth < len(rest) - 1 and not attrs.has(field_type):
                raise MethodTableError(f"{what}: gate {gate} passes through a non-object")
            if depth == len(rest) - 1 and not (attrs.has(field_type) or field_type is bool):
                raise MethodTableError(f"{what}: gate {gate} ends at a non-capability")
            cls = field_type

    # ---------------------------------------------------------------- lookups

    def __iter__(self) -> Iterator[Row]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    @property
    def rows(self) -> tuple[Row, ...]:
        """Every row, in the order given."""
        return self._rows

    def get(self, handled_by: Side, wire: str, kind: Kind) -> Row | None:
        """The row for a key, matching rows handled by both sides too."""
        row = self._by_key.get((handled_by, wire, kind))
        if row is None and handled_by is not Side.BOTH:
            row = self._by_key.get((Side.BOTH, wire, kind))
        return row

    def by_wire(self, wire: str) -> tuple[Row, ...]:
        """The rows with this wire name (two for a name that is both a request and
        a notification)."""
        return self._by_wire.get(wire, ())

    def handled_by(self, side: Side) -> tuple[Row, ...]:
        """Rows the given side must be ready to receive."""
        return tuple(r for r in self._rows if r.handled_by in (side, Side.BOTH))

    def sent_by(self, side: Side) -> tuple[Row, ...]:
        """Rows the given side may send (the direction `side` -> peer)."""
        return tuple(r for r in self._rows if r.handled_by in (side.peer, Side.BOTH))

    def gate_for(self, wire: str, handled_by: Side) -> str | UnknownMethodGate | None:
        """The capability gate of a method, None for a baseline method, or
        `GATE_UNKNOWN_METHOD` when the table holds no such method for that side."""
        rows = [r for r in self._by_wire.get(wire, ()) if r.handled_by in (handled_by, Side.BOTH)]
        if not rows:
            return GATE_UNKNOWN_METHOD
        return rows[0].gate

    def extend(self, rows: Iterable[Row]) -> MethodTable:
        """A new table holding these rows too (for extension methods)."""
        return MethodTable(
            (*self._rows, *rows),
            capability_roots=self._roots,
            update_gates=self.update_gates,
            sender_gates=self.sender_gates,
        )


_ROOTS: Final = {Side.AGENT: "agentCapabilities", Side.CLIENT: "clientCapabilities"}
"""Where the capabilities a side advertises start, in a gate path."""


def _sides(side: Side) -> tuple[Side, ...]:
    return (Side.AGENT, Side.CLIENT) if side is Side.BOTH else (side,)


def _field_type(cls: type, wire: str) -> Any:
    """The attrs field type for a wire name, with `| None` stripped."""
    if not attrs.has(cls):
        return None
    for field in attrs.fields(cls):
        if field.metadata.get("wire") == wire:
            hint = _type_hints(cls)[field.name]
            if isinstance(hint, UnionType) or typing.get_origin(hint) is Union:
                options = [a for a in typing.get_args(hint) if a is not NoneType]
                hint = options[0] if len(options) == 1 else None
            return hint
    return None


_HINTS: dict[type, dict[str, Any]] = {}


def _type_hints(cls: type) -> dict[str, Any]:
    """A capability class's resolved annotations, evaluated once per class (every gate
    through it, and every table built, `extend` included, reads them)."""
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = typing.get_type_hints(cls)
    return hints
