"""A proto3 schema text -> message classes, through protobuf's default descriptor pool.

Understands the subset TensorFlow's format protos use: `message` (nested), `enum`, scalar,
message and enum fields, `repeated`, `map<K, V>`, `oneof`; `option`/`reserved` lines and field
options (`[packed = true]`) are accepted and ignored (proto3 packs repeated scalars anyway).
"""

from __future__ import annotations

import re

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_F = descriptor_pb2.FieldDescriptorProto
_SCALARS = {
    "double": _F.TYPE_DOUBLE, "float": _F.TYPE_FLOAT, "int64": _F.TYPE_INT64,
    "uint64": _F.TYPE_UINT64, "int32": _F.TYPE_INT32, "fixed64": _F.TYPE_FIXED64,
    "fixed32": _F.TYPE_FIXED32, "bool": _F.TYPE_BOOL, "string": _F.TYPE_STRING,
    "bytes": _F.TYPE_BYTES, "uint32": _F.TYPE_UINT32, "sfixed32": _F.TYPE_SFIXED32,
    "sfixed64": _F.TYPE_SFIXED64, "sint32": _F.TYPE_SINT32, "sint64": _F.TYPE_SINT64,
}
_TOKEN = re.compile(r"//[^\n]*|/\*.*?\*/|\"[^\"]*\"|\.?[A-Za-z_][\w.]*|-?\d+|[{}<>=;,\[\]()]|\S",
                    re.S)


def _tokens(text: str) -> list[str]:
    return [t for t in _TOKEN.findall(text) if not t.startswith(("//", "/*"))]


class _Parser:
    def __init__(self, text: str):
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, expected: str | None = None) -> str:
        tok = self.peek()
        if tok is None or (expected is not None and tok != expected):
            raise SyntaxError(f"proto schema: expected {expected!r}, got {tok!r} "
                              f"(token {self.i})")
        self.i += 1
        return tok

    def skip_statement(self) -> None:
        while self.take() != ";":
            pass

    def message(self, msg: descriptor_pb2.DescriptorProto) -> None:
        msg.name = self.take()
        self.take("{")
        oneof_index = None
        depth_oneof = False
        while True:
            tok = self.peek()
            if tok == "}":
                self.take()
                if depth_oneof:
                    depth_oneof, oneof_index = False, None
                    continue
                return
            if tok == "message":
                self.take()
                self.message(msg.nested_type.add())
            elif tok == "enum":
                self.take()
                self.enum(msg.enum_type.add())
            elif tok in ("option", "reserved", "extensions"):
                self.skip_statement()
            elif tok == "oneof":
                self.take()
                msg.oneof_decl.add().name = self.take()
                self.take("{")
                oneof_index, depth_oneof = len(msg.oneof_decl) - 1, True
            elif tok == "map":
                self.map_field(msg)
            else:
                self.field(msg, oneof_index)

    def field(self, msg, oneof_index) -> None:
        label = _F.LABEL_OPTIONAL
        if self.peek() in ("repeated", "optional"):
            label = _F.LABEL_REPEATED if self.take() == "repeated" else _F.LABEL_OPTIONAL
        type_name = self.take()
        f = msg.field.add(name=self.take(), label=label)
        self.take("=")
        f.number = int(self.take())
        self._set_type(f, type_name)
        if oneof_index is not None:
            f.oneof_index = oneof_index
        self.skip_statement()

    def map_field(self, msg) -> None:
        self.take("map")
        self.take("<")
        key_type = self.take()
        self.take(",")
        value_type = self.take()
        self.take(">")
        name = self.take()
        self.take("=")
        number = int(self.take())
        self.skip_statement()
        entry = msg.nested_type.add(name="".join(p.capitalize() for p in name.split("_"))
                                    + "Entry")
        entry.options.map_entry = True
        self._set_type(entry.field.add(name="key", number=1, label=_F.LABEL_OPTIONAL), key_type)
        self._set_type(entry.field.add(name="value", number=2, label=_F.LABEL_OPTIONAL),
                       value_type)
        f = msg.field.add(name=name, number=number, label=_F.LABEL_REPEATED)
        f.type = _F.TYPE_MESSAGE
        f.type_name = entry.name  # resolved relative to `msg` by the pool

    def enum(self, enum: descriptor_pb2.EnumDescriptorProto) -> None:
        enum.name = self.take()
        self.take("{")
        while self.peek() != "}":
            if self.peek() in ("option", "reserved"):
                self.skip_statement()
                continue
            name = self.take()
            self.take("=")
            enum.value.add(name=name, number=int(self.take()))
            self.skip_statement()
        self.take("}")

    @staticmethod
    def _set_type(f, type_name: str) -> None:
        if type_name in _SCALARS:
            f.type = _SCALARS[type_name]
        else:
            # Message or enum: the pool resolves the name (relative, or `.pkg.Full`); the kind
            # is left for it to fill in.
            f.type_name = type_name


def compile_schema(file_name: str, text: str, dependencies: tuple = ()) -> dict[str, type]:
    """Add the proto3 `text` as file `file_name` to the default pool; return its messages.

    `dependencies` are generated modules (e.g. tensorboard's `tensor_shape_pb2`) whose types
    the schema names by their full name. The result maps each top-level message name (and
    nested ones as `Outer.Inner`) to its class; enums stay reachable through the classes.
    """
    pool = descriptor_pool.Default()
    try:
        fd = pool.FindFileByName(file_name)
    except KeyError:
        fd = None
    if fd is None:
        proto = descriptor_pb2.FileDescriptorProto(name=file_name, syntax="proto3")
        proto.dependency.extend(dep.DESCRIPTOR.name for dep in dependencies)
        p = _Parser(text)
        while p.peek() is not None:
            tok = p.take()
            if tok == "package":
                proto.package = p.take()
                p.take(";")
            elif tok == "message":
                p.message(proto.message_type.add())
            elif tok == "enum":
                p.enum(proto.enum_type.add())
            elif tok in ("syntax", "option", "import"):
                p.skip_statement()
            else:
                raise SyntaxError(f"proto schema {file_name}: unexpected {tok!r}")
        fd = pool.Add(proto) or pool.FindFileByName(file_name)
    classes: dict[str, type] = {}

    def collect(desc, prefix=""):
        classes[prefix + desc.name] = message_factory.GetMessageClass(desc)
        for nested in desc.nested_types:
            if not nested.GetOptions().map_entry:
                collect(nested, prefix + desc.name + ".")

    for desc in fd.message_types_by_name.values():
        collect(desc)
    return classes
