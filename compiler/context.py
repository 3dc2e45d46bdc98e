"""What every lowering step carries: the compile options and where in the schema it is."""

from __future__ import annotations

from dataclasses import dataclass

from .errors import SchemaTooComplex, describe_pointer
from .refs import child

WHITESPACE = ((0x09, 0x0A), (0x0D, 0x0D), (0x20, 0x20))  # JSON's whitespace bytes, as ranges
REGEX_DIALECT = {"portable": "portable", "spec": "ecma"}  # Options.dialect -> compiler.regex's dialect


@dataclass(frozen=True)
class Options:
    whitespace: str = "bounded"  # "compact" | "bounded" | "flexible"
    max_whitespace: int = 4  # consecutive whitespace characters in "bounded" mode
    strict: bool = False  # additionalProperties absent means false
    property_order: str = "schema"  # "schema" | "any" (objects of at most LAZY_ORDER_MAX named properties)
    max_depth: int = 16  # recursive frames ($ref cycles, nested free JSON)
    max_states: int = 500_000
    max_seconds: float = 20.0
    dialect: str = "portable"  # "portable": what python-jsonschema, jsonschema-rs and Ajv all accept | "spec"
    lazy: bool = True  # subschemas that cannot fail lowered when a generation first reaches them (``deferral.py``)

    def __post_init__(self):
        if self.whitespace not in ("compact", "bounded", "flexible"):
            raise ValueError(f"whitespace must be 'compact', 'bounded' or 'flexible', not {self.whitespace!r}")
        if self.dialect not in ("portable", "spec"):
            raise ValueError(f"dialect must be 'portable' or 'spec', not {self.dialect!r}")
        if self.property_order not in ("schema", "any"):
            raise ValueError(f"property_order must be 'schema' or 'any', not {self.property_order!r}")
        for name in ("max_whitespace", "max_depth", "max_states"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer, not {value!r}")


@dataclass
class Slot:
    """Where a subschema sits: its JSON pointer and the ``$ref`` chain that led there."""

    pointer: str
    via: tuple[str, ...] = ()

    def at(self, *segments) -> "Slot":
        return Slot(child(self.pointer, *segments), self.via)




def where(slot: Slot) -> str:
    return describe_pointer(slot.pointer, slot.via)


def count_of(value, name: str, slot: Slot) -> int | None:
    """Count keyword ``name``'s ``value`` (None where absent) as an int, within the limit."""
    if value is None:
        return 0 if name.startswith("min") else None
    value = int(value)  # a non-negative integer, maybe written 2.0 (``build`` saw to it)
    if value > 100_000:
        raise SchemaTooComplex(child(slot.pointer, name), f"{name} of {value} is above the limit of 100000", slot.via)
    return value
