from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Side(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SIDE_UNSPECIFIED: _ClassVar[Side]
    SIDE_LIGHT: _ClassVar[Side]
    SIDE_DARK: _ClassVar[Side]

class Color(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    COLOR_UNSPECIFIED: _ClassVar[Color]
    COLOR_RED: _ClassVar[Color]
    COLOR_YELLOW: _ClassVar[Color]
    COLOR_GREEN: _ClassVar[Color]
    COLOR_BLUE: _ClassVar[Color]
    COLOR_PINK: _ClassVar[Color]
    COLOR_TEAL: _ClassVar[Color]
    COLOR_ORANGE: _ClassVar[Color]
    COLOR_PURPLE: _ClassVar[Color]

class Kind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    KIND_UNSPECIFIED: _ClassVar[Kind]
    KIND_NUMBER: _ClassVar[Kind]
    KIND_DRAW_ONE: _ClassVar[Kind]
    KIND_DRAW_TWO: _ClassVar[Kind]
    KIND_DRAW_FIVE: _ClassVar[Kind]
    KIND_REVERSE: _ClassVar[Kind]
    KIND_SKIP: _ClassVar[Kind]
    KIND_SKIP_EVERYONE: _ClassVar[Kind]
    KIND_FLIP: _ClassVar[Kind]
    KIND_WILD: _ClassVar[Kind]
    KIND_WILD_DRAW_TWO: _ClassVar[Kind]
    KIND_WILD_DRAW_FOUR: _ClassVar[Kind]
    KIND_WILD_DRAW_COLOR: _ClassVar[Kind]
SIDE_UNSPECIFIED: Side
SIDE_LIGHT: Side
SIDE_DARK: Side
COLOR_UNSPECIFIED: Color
COLOR_RED: Color
COLOR_YELLOW: Color
COLOR_GREEN: Color
COLOR_BLUE: Color
COLOR_PINK: Color
COLOR_TEAL: Color
COLOR_ORANGE: Color
COLOR_PURPLE: Color
KIND_UNSPECIFIED: Kind
KIND_NUMBER: Kind
KIND_DRAW_ONE: Kind
KIND_DRAW_TWO: Kind
KIND_DRAW_FIVE: Kind
KIND_REVERSE: Kind
KIND_SKIP: Kind
KIND_SKIP_EVERYONE: Kind
KIND_FLIP: Kind
KIND_WILD: Kind
KIND_WILD_DRAW_TWO: Kind
KIND_WILD_DRAW_FOUR: Kind
KIND_WILD_DRAW_COLOR: Kind

class Face(_message.Message):
    __slots__ = ("color", "kind", "number")
    COLOR_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    color: Color
    kind: Kind
    number: int
    def __init__(self, color: _Optional[_Union[Color, str]] = ..., kind: _Optional[_Union[Kind, str]] = ..., number: _Optional[int] = ...) -> None: ...

class Card(_message.Message):
    __slots__ = ("id", "light", "dark")
    ID_FIELD_NUMBER: _ClassVar[int]
    LIGHT_FIELD_NUMBER: _ClassVar[int]
    DARK_FIELD_NUMBER: _ClassVar[int]
    id: int
    light: Face
    dark: Face
    def __init__(self, id: _Optional[int] = ..., light: _Optional[_Union[Face, _Mapping]] = ..., dark: _Optional[_Union[Face, _Mapping]] = ...) -> None: ...
