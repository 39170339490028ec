"""Unannotated functions, specialised on their calls' argument types.

A function whose parameters lack annotations (or say only ``torch.Tensor`` or
``Optional[torch.Tensor]``) cannot be typed ahead of its calls. Its first call does it: each
such parameter takes the type of its argument (a tensor's dtype, device and rank as the
marker naming them, ``TensorF32Cpu2D``; a Python ``int``/``float``/``bool``; ``None``), the
module's source is analyzed again with those annotations written in (and the marker names
imported at its end, so no line moves), and the result is built and cached like
any module (:func:`torchlower._compile.build_module`). Later calls with the same types reuse
that specialisation; another combination gets its own, up to :data:`MAX_SPECIALISATIONS`, after
which further new combinations run the Python function (with one warning). The analyzer
stays pure: it sees an annotated source, as if the user had written the annotations.

The return type needs no annotation: the analyzer infers it from the ``return`` statements
(and checks it against an open one such as ``-> torch.Tensor``).
"""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import collections.abc
import threading
import types
import typing
import warnings
from typing import Any, Callable

#: How many argument-type combinations one function is specialised for.
MAX_SPECIALISATIONS = 8

#: The longest list or tuple of ints a parameter is specialised for (the analyzer's limit).
_MAX_INT_SEQUENCE = 8

# dtype name -> marker part, and the ranks each (dtype, device) has a marker for
_DTYPES = {"torch.float32": "F32", "torch.int64": "I64", "torch.int32": "I32", "torch.bool": "Bool"}
_RANKS = {
    ("F32", "Cpu"): range(0, 7),
    ("I64", "Cpu"): range(0, 5),
    ("I32", "Cpu"): range(1, 5),
    ("Bool", "Cpu"): range(0, 5),
    ("F32", "Cuda0_"): range(1, 5),
}


class SpecialisationWarning(UserWarning):
    """A function met more argument-type combinations than it is specialised for."""


def type_name(value: Any) -> str | None:
    """The annotation that describes ``value`` (a marker, ``int``/``float``/``bool``, or ``None``
    for None: `mask=None` is analyzed with the branches it decides), or None when no
    annotation of the vocabulary does (the call then runs the Python function)."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, (list, tuple)):
        return _int_sequence_name(value)
    import torch

    if not isinstance(value, torch.Tensor):
        return None
    dtype = _DTYPES.get(str(value.dtype))
    device = value.device
    place = "Cpu" if device.type == "cpu" else "Cuda0_" if device.type == "cuda" and device.index in (0, None) else None
    if dtype is None or place is None or value.dim() not in _RANKS.get((dtype, place), ()):
        return None
    return f"Tensor{dtype}{place}{value.dim()}D"


def _int_sequence_name(value: list | tuple) -> str | None:
    """``list[int, int]`` / ``tuple[int, int]`` for a list or tuple (a ``torch.Size`` too) of
    Python ints (not bools): the parameter type the analyzer reads as that many ints. A list
    needs two items or more (``list[int]`` means a list of any length), a tuple one or more."""
    kind = "list" if isinstance(value, list) else "tuple"
    shortest = 2 if kind == "list" else 1
    if not shortest <= len(value) <= _MAX_INT_SEQUENCE or not all(type(v) is int for v in value):
        return None
    return f"{kind}[{', '.join(['int'] * len(value))}]"


def unannotated(fn: Callable) -> list[str]:
    """The names of ``fn``'s parameters without an annotation that says their type: none,
    ``torch.Tensor`` (which leaves the dtype, device and rank open), ``Optional[torch.Tensor]``,
    ``Optional[<marker>]`` or ``Optional[int]`` / ``float`` / ``bool`` (None or a value: which
    one, only the call says), and a list or
    tuple of ints of open length (``List[int]``, ``Sequence[int]``, ``Tuple[int, ...]``)."""
    # a decorated function's annotations name its own module's globals (`functools.wraps`
    # copied them onto a wrapper that lives elsewhere: `@torch.no_grad()`)
    try:
        written = inspect.unwrap(fn)
    except ValueError:  # a cycle of __wrapped__
        written = fn
    namespace = getattr(written, "__globals__", {})
    return [
        p.name
        for p in inspect.signature(fn).parameters.values()
        if p.annotation is inspect.Parameter.empty or _open_tensor(p.annotation, namespace) or _open_int_sequence(p.annotation, namespace)
    ]


def _open_int_sequence(annotation: Any, namespace: dict) -> bool:
    """Whether ``annotation`` is a list or tuple of ints that does not say how many: the
    objects (``List[int]``, ``list[int]``, ``Sequence[int]``, ``Tuple[int, ...]``) or the text
    of a postponed annotation naming them in ``namespace``."""
    if isinstance(annotation, str):
        try:
            node = ast.parse(annotation.strip(), mode="eval").body
        except SyntaxError:
            return False
        if not isinstance(node, ast.Subscript):
            return False
        origin = _named(node.value, namespace)
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        args = tuple(... if isinstance(i, ast.Constant) and i.value is ... else _named(i, namespace) for i in items)
    else:
        origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    origin = typing.get_origin(origin) or origin  # `typing.List` names `list`
    if origin in (list, collections.abc.Sequence):
        return args == (int,)
    return origin is tuple and args == (int, ...)


def _open_tensor(annotation: Any, namespace: dict) -> bool:
    """Whether ``annotation`` is ``torch.Tensor``, ``Optional[torch.Tensor]``
    (``torch.Tensor | None``) or ``Optional[<marker>]``: the objects, or the text of a
    postponed annotation naming them in ``namespace`` (``"th.Tensor"``, ``"Optional[Tensor]"``;
    read name by name, never evaluated)."""
    import torch

    if isinstance(annotation, str):
        try:
            tree = ast.parse(annotation.strip(), mode="eval").body
        except SyntaxError:
            return False
        return _open_tensor_text(tree, namespace, depth=0, optional=False)
    if annotation is torch.Tensor:
        return True
    arms = typing.get_args(annotation) if typing.get_origin(annotation) in (typing.Union, types.UnionType) else ()
    others = [a for a in arms if a is not type(None)]
    return len(arms) == 2 and len(others) == 1 and (others[0] is torch.Tensor or _is_marker(others[0]) or others[0] in _NUMBERS)


# the Python number types an `Optional[…]` parameter may hold
_NUMBERS = (int, float, bool)


def _is_marker(value: Any) -> bool:
    """Whether ``value`` is one of the tensor markers of :mod:`torchlower.types`."""
    from .types import _TensorMarker

    return isinstance(value, type) and issubclass(value, _TensorMarker) and value is not _TensorMarker


def _open_tensor_text(node: ast.expr, namespace: dict, depth: int, optional: bool) -> bool:
    """:func:`_open_tensor` of a parsed annotation text (``optional``: inside ``Optional[…]``
    or ``… | None``, where a marker is open too)."""
    import torch

    if depth > 3:
        return False
    if isinstance(node, ast.Constant) and isinstance(node.value, str):  # a string in the string
        try:
            return _open_tensor_text(ast.parse(node.value.strip(), mode="eval").body, namespace, depth + 1, optional)
        except SyntaxError:
            return False
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):  # `Tensor | None`
        arms = [node.left, node.right]
        nones = [a for a in arms if isinstance(a, ast.Constant) and a.value is None]
        return len(nones) == 1 and _open_tensor_text(next(a for a in arms if a not in nones), namespace, depth + 1, True)
    if isinstance(node, ast.Subscript):  # `Optional[Tensor]`
        return _named(node.value, namespace) is typing.Optional and _open_tensor_text(node.slice, namespace, depth + 1, True)
    named = _named(node, namespace)
    return named is torch.Tensor or (optional and (_is_marker(named) or named in _NUMBERS))


def _named(node: ast.expr, namespace: dict) -> Any:
    """The object a dotted name (``th.Tensor``) denotes in ``namespace``, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    value = namespace.get(node.id, getattr(builtins, node.id, None))
    for part in reversed(parts):
        value = getattr(value, part, None)
    return value


def annotate(source: str, name: str, line: int, types: dict[str, str]) -> str | None:
    """``source`` with the parameters of the function ``name`` defined at ``line`` annotated
    with ``types``, and the markers imported at the end of the module; None when the function
    is not found there."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    # the report's line is the definition's first (a decorator's, if any)
    node = next(
        (
            n
            for n in tree.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and n.name == name
            and min([n.lineno, *(d.lineno for d in n.decorator_list)]) <= line <= n.lineno
        ),
        None,
    )
    if node is None:
        return None
    lines = source.splitlines(keepends=True)
    arguments = [a for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs) if a.arg in types]
    # (line, start, end, text): a new annotation after the name, or the marker in place of
    # `torch.Tensor` (on one line, as every real one is)
    edits = []
    for a in arguments:
        if a.annotation is None:
            edits.append((a.end_lineno, a.end_col_offset, a.end_col_offset, f": {types[a.arg]}"))
        elif a.annotation.lineno == a.annotation.end_lineno:
            edits.append((a.annotation.lineno, a.annotation.col_offset, a.annotation.end_col_offset, types[a.arg]))
        else:
            return None
    # from the last position back, so earlier offsets (UTF-8 bytes) stay valid
    for line, start, end, text in sorted(edits, reverse=True):
        raw = lines[line - 1].encode()
        lines[line - 1] = (raw[:start] + text.encode() + raw[end:]).decode()
    markers = sorted({t for t in types.values() if t.startswith("Tensor")})
    text = "".join(lines)
    if markers:
        text += ("" if text.endswith("\n") else "\n") + f"from torchlower.types import {', '.join(markers)}\n"
    return text


def specialising_callable(
    fn: Callable, source: str, line: int, compile_source: Callable[[str], Callable], fallback: Callable[[str], Callable]
) -> Callable:
    """The callable of an unannotated ``fn``: per argument-type combination of its unannotated
    parameters, the routed callable ``compile_source(annotated source)`` returns (native or
    fallback), made on the first call with that combination. ``fallback(reason)`` makes the
    Python callable used where no specialisation applies."""
    signature = inspect.signature(fn)
    names = unannotated(fn)
    specialised: dict[tuple, Callable] = {}
    lock = threading.Lock()
    warned = False

    def for_call(args: tuple, kwargs: dict) -> Callable:
        nonlocal warned
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            return fn  # Python raises its own TypeError
        bound.apply_defaults()
        key = tuple(type_name(bound.arguments.get(n)) for n in names)
        routed = specialised.get(key)
        if routed is not None:
            return routed
        with lock:
            routed = specialised.get(key)
            if routed is not None:
                return routed
            if None in key:
                described = ", ".join(f"{n}={_describe(bound.arguments.get(n))}" for n, t in zip(names, key) if t is None)
                routed = fallback(f"no annotation of the vocabulary describes the argument(s) {described}")
            elif len(specialised) >= MAX_SPECIALISATIONS:
                if not warned:
                    warned = True
                    warnings.warn(
                        f"torchlower: {fn.__name__} met more than {MAX_SPECIALISATIONS} argument-type combinations; "
                        "new ones run as Python",
                        SpecialisationWarning,
                        stacklevel=4,
                    )
                return fallback(f"more than {MAX_SPECIALISATIONS} argument-type combinations")
            else:
                annotated = annotate(source, fn.__name__, line, dict(zip(names, key)))
                routed = compile_source(annotated) if annotated is not None else fallback("its definition was not found in its source")
            specialised[key] = routed
            return routed

    def call(*args, **kwargs):
        routed = for_call(args, kwargs)
        native = getattr(routed, "native_entry", None)
        if native is not None:
            router.use_native(native)  # the C fast path tries it first from now on
        return routed(*args, **kwargs)

    # The returned callable (host-py/src/specialising.rs): a positional call goes in C to the
    # native function used last, whose boundary checks the argument types (the key); any other
    # call, or a refusal there, comes to `call`.
    from . import _compile, _modules, _native

    parameters = signature.parameters.values()
    plain = all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in parameters)
    router = _native.Specialising(
        call,
        len(signature.parameters) if plain else None,
        _compile._environ_data,
        _compile._environ_key,
        _modules._autocast_query(),
        _modules._grad_query(),
        [],
        [],
        [],
        [],
        None,
        _modules._torch_lib(),
    )
    functools.update_wrapper(router, fn)
    router.specialisations = specialised
    return router


def _describe(value: Any) -> str:
    """A value's type as a diagnostic names it: a tensor's dtype, device and rank."""
    if type(value).__name__ == "Tensor" and hasattr(value, "dtype"):
        return f"Tensor({value.dtype}, {value.device}, rank {value.dim()})"
    return type(value).__name__
