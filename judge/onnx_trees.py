"""A tree-ensemble judge read from its ONNX file, for scoring one step without onnxruntime's run.

The shipped judges are gradient-boosted trees exported as one `TreeEnsembleClassifier` (60
trees of depth 3). onnxruntime scores one of them in ~9 µs on a warm CPU but ~47 µs in the
gateway, where the request's parse has just flushed the caches and each step's run walks the
session's executor again; the same trees walked over a few flat lists (`judge/trees.py`) take
a few µs either way. onnxruntime stays the reference: `judge.model` loads every model with it,
uses these trees only when the graph is exactly that one classifier and they give onnxruntime's
probability on rows that take every branch, and scores batches (training, evaluation) with it.

The ONNX file is a protocol buffer; the few fields read here are read with a small wire-format
reader, so that serving needs neither the `onnx` package nor protobuf.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from judge.trees import Trees

# Field numbers of onnx.proto3 (ModelProto.graph, GraphProto.node, NodeProto.*, AttributeProto.*).
_MODEL_GRAPH = 7
_GRAPH_NODE = 1
_NODE_INPUT, _NODE_OUTPUT, _NODE_OP_TYPE, _NODE_ATTRIBUTE, _NODE_DOMAIN = 1, 2, 4, 5, 7
_ATTR_NAME, _ATTR_F, _ATTR_I, _ATTR_S, _ATTR_FLOATS, _ATTR_INTS, _ATTR_STRINGS = 1, 2, 3, 4, 7, 8, 9

_VARINT, _FIXED64, _LENGTH, _FIXED32 = 0, 1, 2, 5

Value = float | int | bytes | list[float] | list[int] | list[bytes]


class _Malformed(ValueError):
    pass


def _varint(data: bytes, position: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if position >= len(data) or shift > 63:
            raise _Malformed("truncated varint")
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, position
        shift += 7


def _fields(data: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """(field number, wire type, value) of each field of one message: an int for varints and
    fixed widths (their raw bits), the bytes of a length-delimited field."""
    position = 0
    while position < len(data):
        key, position = _varint(data, position)
        number, wire = key >> 3, key & 7
        value: int | bytes
        if wire == _VARINT:
            value, position = _varint(data, position)
        elif wire == _FIXED64:
            value, position = int.from_bytes(data[position : position + 8], "little"), position + 8
        elif wire == _FIXED32:
            value, position = int.from_bytes(data[position : position + 4], "little"), position + 4
        elif wire == _LENGTH:
            size, position = _varint(data, position)
            value, position = data[position : position + size], position + size
        else:
            raise _Malformed(f"wire type {wire}")
        if position > len(data):
            raise _Malformed("truncated field")
        yield number, wire, value


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _float32(bits: int) -> float:
    found: float = struct.unpack("<f", bits.to_bytes(4, "little"))[0]
    return found


def _attribute(data: bytes) -> tuple[str, Value]:
    name = ""
    floats: list[float] = []
    ints: list[int] = []
    strings: list[bytes] = []
    single: Value | None = None
    for number, wire, value in _fields(data):
        if number == _ATTR_NAME and isinstance(value, bytes):
            name = value.decode("utf-8", "replace")
        elif number == _ATTR_F and wire == _FIXED32 and isinstance(value, int):
            single = _float32(value)
        elif number == _ATTR_I and isinstance(value, int):
            single = _signed(value)
        elif number == _ATTR_S and isinstance(value, bytes):
            single = value
        elif number == _ATTR_FLOATS:
            if isinstance(value, bytes):  # packed
                floats += [item[0] for item in struct.iter_unpack("<f", value)]
            else:
                floats.append(_float32(value))
        elif number == _ATTR_INTS:
            if isinstance(value, bytes):  # packed
                position = 0
                while position < len(value):
                    item, position = _varint(value, position)
                    ints.append(_signed(item))
            else:
                ints.append(_signed(value))
        elif number == _ATTR_STRINGS and isinstance(value, bytes):
            strings.append(value)
    if single is not None:
        return name, single
    return name, floats or ints or strings


def _nodes(model: bytes) -> list[tuple[str, str, list[str], list[str], dict[str, Value]]]:
    """(op type, domain, inputs, outputs, attributes) of each node of the model's graph."""
    graph = next((v for n, _w, v in _fields(model) if n == _MODEL_GRAPH and isinstance(v, bytes)), None)
    if graph is None:
        raise _Malformed("no graph")
    nodes = []
    for number, _wire, value in _fields(graph):
        if number != _GRAPH_NODE or not isinstance(value, bytes):
            continue
        op, domain, inputs, outputs, attributes = "", "", [], [], {}
        for field_number, _w, item in _fields(value):
            if not isinstance(item, bytes):
                continue
            if field_number == _NODE_OP_TYPE:
                op = item.decode()
            elif field_number == _NODE_DOMAIN:
                domain = item.decode()
            elif field_number == _NODE_INPUT:
                inputs.append(item.decode())
            elif field_number == _NODE_OUTPUT:
                outputs.append(item.decode())
            elif field_number == _NODE_ATTRIBUTE:
                name, attribute = _attribute(item)
                attributes[name] = attribute
        nodes.append((op, domain, inputs, outputs, attributes))
    return nodes


def _ints(attributes: dict[str, Value], name: str) -> list[int]:
    value = attributes.get(name, [])
    return [item for item in value if isinstance(item, int)] if isinstance(value, list) else []


def _floats(attributes: dict[str, Value], name: str) -> list[float]:
    value = attributes.get(name, [])
    return [float(item) for item in value if isinstance(item, (int, float))] if isinstance(value, list) else []


def read_trees(model: bytes, output: str) -> Trees | None:
    """The model's trees, where its graph is one binary `TreeEnsembleClassifier` whose
    probabilities reach `output` (directly or through an `Identity`) with the logistic
    post-transform and `<=` splits only; else None (scored by onnxruntime)."""
    try:
        nodes = _nodes(model)
    except (_Malformed, UnicodeDecodeError, struct.error):
        return None
    ensembles = [node for node in nodes if node[0] == "TreeEnsembleClassifier" and node[1] == "ai.onnx.ml"]
    if len(ensembles) != 1 or any(node[0] not in ("TreeEnsembleClassifier", "Identity") for node in nodes):
        return None
    _op, _domain, _inputs, outputs, attributes = ensembles[0]
    reaches = set(outputs[1:2])
    for op, _d, inputs, node_outputs, _a in nodes:
        if op == "Identity" and inputs and inputs[0] in reaches:
            reaches.update(node_outputs)
    if output not in reaches or attributes.get("post_transform") != b"LOGISTIC":
        return None
    labels = attributes.get("classlabels_int64s") or attributes.get("classlabels_strings") or []
    class_ids = _ints(attributes, "class_ids")
    base_values = _floats(attributes, "base_values")
    # One column of weights for two classes: the score of the second (the step fails).
    if not isinstance(labels, list) or len(labels) != 2 or len(set(class_ids)) != 1 or len(base_values) > 1:
        return None
    return _flatten(attributes, base_values[0] if base_values else 0.0)


def _flatten(attributes: dict[str, Value], base: float) -> Trees | None:
    tree_ids, node_ids = _ints(attributes, "nodes_treeids"), _ints(attributes, "nodes_nodeids")
    features, values = _ints(attributes, "nodes_featureids"), _floats(attributes, "nodes_values")
    yes_ids, no_ids = _ints(attributes, "nodes_truenodeids"), _ints(attributes, "nodes_falsenodeids")
    modes = attributes.get("nodes_modes", [])
    missing = _ints(attributes, "nodes_missing_value_tracks_true")
    count = len(tree_ids)
    if not isinstance(modes, list) or any(
        len(column) != count for column in (node_ids, features, values, yes_ids, no_ids, modes)
    ):
        return None
    if any(missing) or any(mode not in (b"BRANCH_LEQ", b"LEAF") for mode in modes):
        return None
    index = {(tree, node): position for position, (tree, node) in enumerate(zip(tree_ids, node_ids, strict=True))}
    if len(index) != count:
        return None
    leaves = [0.0] * count
    weight_trees, weight_nodes = _ints(attributes, "class_treeids"), _ints(attributes, "class_nodeids")
    weights = _floats(attributes, "class_weights")
    if not len(weight_trees) == len(weight_nodes) == len(weights):
        return None
    for tree, node, weight in zip(weight_trees, weight_nodes, weights, strict=True):
        position = index.get((tree, node))
        if position is None or modes[position] != b"LEAF":
            return None
        leaves[position] += weight
    split: list[int] = []
    yes: list[int] = []
    no: list[int] = []
    for position in range(count):
        leaf = modes[position] == b"LEAF"
        tree = tree_ids[position]
        to_yes, to_no = index.get((tree, yes_ids[position])), index.get((tree, no_ids[position]))
        if not leaf and (to_yes is None or to_no is None or features[position] < 0):
            return None
        split.append(-1 if leaf else features[position])
        yes.append(0 if to_yes is None or leaf else to_yes)
        no.append(0 if to_no is None or leaf else to_no)
    roots = [index[key] for key in sorted({(tree, 0) for tree in tree_ids}) if key in index]
    if len(roots) != len(set(tree_ids)) or not _acyclic(roots, split, yes, no):
        return None
    return Trees(split, values, yes, no, leaves, roots, base)


def _acyclic(roots: list[int], split: list[int], yes: list[int], no: list[int]) -> bool:
    """Whether every tree is a tree: a node reached twice (a cycle, shared children) would
    make a walk loop or differ from onnxruntime's."""
    seen: set[int] = set()
    for root in roots:
        stack = [root]
        while stack:
            node = stack.pop()
            if node in seen:
                return False
            seen.add(node)
            if split[node] >= 0:
                stack += (yes[node], no[node])
    return True
