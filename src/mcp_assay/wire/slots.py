"""Setting the fields of a frozen dataclass through its slots, for the classes made once per record or message.

A frozen class's generated ``__init__`` sets each field through ``object.__setattr__``, which costs half as much
again as setting it through the field's slot. The classes a long capture makes one of per record or message (a
message, a request, a response, an exchange, a finding...) write out the ``__init__`` the dataclass would make
and set each field with the setters :func:`slot_setters` gives, once per class.
"""

from __future__ import annotations

from typing import Any

__all__ = ["slot_setters"]


def slot_setters(cls: type, *names: str) -> Any:
    """The slot setters of the fields ``names`` of a slotted class, in order (each called as ``setter(obj, value)``)."""
    return tuple(cls.__dict__[name].__set__ for name in names)
