"""``torchlower.compile(module)``: an ``nn.Module`` instance as its project wrote it.

The analyzer stays pure: it sees only annotated Python functions. For a module instance the
host writes one: ``forward`` rewritten as a top-level function whose extra parameters are the
tensors the instance holds (parameters and buffers, read again at every call, never baked),
with

- ``self.<attr>`` of an ``int``/``float``/``bool``/``str``/``None`` attribute as its value,
  ``self.training`` as ``False`` (only eval mode runs native);
- calls of known leaf submodules as their functional form with the hyper-parameters read from
  the instance (``nn.Linear`` → ``F.linear(x, w, b)``, ``nn.LayerNorm``, ``nn.RMSNorm``,
  ``nn.Embedding``, ``nn.BatchNorm1d/2d`` in eval, the convolutions and pools, ``nn.Flatten``,
  the activations, ``nn.Dropout``/``nn.Identity`` as the identity), ``nn.Sequential`` as the
  chain of its children;
- calls of custom submodules as calls of their own rewritten ``forward`` (one generated
  function per submodule instance), and ``for block in self.blocks:`` over an
  ``nn.ModuleList``/``nn.Sequential`` unrolled, one copy of the body per child.

The generated functions are appended to the module's own source file text (so its imports,
constants and helpers resolve) and specialised on each call's argument types like any
unannotated function (:mod:`torchlower._specialise`). Anything else in ``forward`` (another
method of ``self``, a module used as a value, an unknown leaf) leaves a form the analyzer does
not claim, and the module runs eagerly.

Guards, checked at every call: eval mode, no hooks on any submodule, no enabled autocast
region, and either autograd off
(``torch.no_grad()``/``inference_mode``) or no parameter requiring grad — otherwise the call
runs the module itself, so training, hooks and autograd graphs behave exactly as eager.
"""

from __future__ import annotations

import ast
import copy
import inspect
import operator
import textwrap
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from . import _specialise

#: The generated top-level function's name; its helpers are `_tl_module_<path>`.
ENTRY = "_tl_module_forward"


class Unsupported(Exception):
    """A form of ``forward`` the rewriting does not handle."""


def _leaf_call(module: Any, arg: ast.expr, param: Callable[[str], ast.expr]) -> ast.expr | None:
    """The functional form of a known leaf submodule applied to ``arg`` (None: not a known
    leaf). ``param(name)`` is the expression of the submodule's tensor ``name``."""
    import torch.nn as nn

    def node(value: Any) -> ast.expr:
        return value if isinstance(value, ast.AST) else ast.Constant(value)

    def call(function: str, *args: Any, **keywords: Any) -> ast.expr:
        kw = [ast.keyword(arg=k, value=node(v)) for k, v in keywords.items()]
        return ast.Call(func=ast.parse(function, mode="eval").body, args=[node(a) for a in args], keywords=kw)

    def tensor_or_none(name: str) -> ast.expr:
        return param(name) if getattr(module, name, None) is not None else ast.Constant(None)

    def shape(values: Any) -> ast.expr:
        return ast.Tuple(elts=[ast.Constant(int(v)) for v in values], ctx=ast.Load())

    kind = type(module)
    if kind is nn.Linear:
        return call("torch.nn.functional.linear", arg, param("weight"), tensor_or_none("bias"))
    if kind is nn.LayerNorm:
        return call("torch.nn.functional.layer_norm", arg, shape(module.normalized_shape), tensor_or_none("weight"),
                    tensor_or_none("bias"), float(module.eps))
    if kind.__name__ == "RMSNorm" and kind.__module__.startswith("torch.nn"):
        eps = module.eps
        return call("torch.nn.functional.rms_norm", arg, shape(module.normalized_shape), tensor_or_none("weight"),
                    ast.Constant(None if eps is None else float(eps)))
    if kind is nn.Embedding:
        if module.padding_idx is not None or module.max_norm is not None:
            return None
        return call("torch.nn.functional.embedding", arg, param("weight"))
    if kind in (nn.BatchNorm1d, nn.BatchNorm2d):
        if not module.track_running_stats or module.running_mean is None:
            return None
        return call("torch.nn.functional.batch_norm", arg, param("running_mean"), param("running_var"),
                    tensor_or_none("weight"), tensor_or_none("bias"), False, float(module.momentum or 0.0), float(module.eps))
    if kind in (nn.Conv1d, nn.Conv2d) and module.padding_mode == "zeros":
        function = "torch.nn.functional.conv1d" if kind is nn.Conv1d else "torch.nn.functional.conv2d"
        padding = module.padding if isinstance(module.padding, str) else shape(module.padding)
        return call(function, arg, param("weight"), tensor_or_none("bias"), shape(module.stride), padding,
                    shape(module.dilation), int(module.groups))
    if kind is nn.AdaptiveAvgPool2d and module.output_size is not None:
        size = module.output_size
        return call("torch.nn.functional.adaptive_avg_pool2d", arg, int(size) if isinstance(size, int) else shape(size))
    if kind is nn.MaxPool2d and not module.return_indices:
        return call("torch.nn.functional.max_pool2d", arg, shape(_pair(module.kernel_size)), shape(_pair(module.stride)),
                    shape(_pair(module.padding)), shape(_pair(module.dilation)), bool(module.ceil_mode))
    if kind in (nn.Dropout, nn.Identity):
        return arg
    if kind is nn.Flatten:
        return call("torch.flatten", arg, int(module.start_dim), int(module.end_dim))
    # `inplace=True` writes into the input, as eager's module does: the analyzer lowers the
    # write on a fresh local and leaves a write into a forward argument to eager
    if kind is nn.ReLU:
        return call("torch.nn.functional.relu", arg, inplace=True) if module.inplace else call("torch.relu", arg)
    if kind is nn.GELU:
        return call("torch.nn.functional.gelu", arg, approximate=module.approximate)
    if kind is nn.SiLU:
        return call("torch.nn.functional.silu", arg, inplace=bool(module.inplace))
    if kind is nn.Tanh:
        return call("torch.tanh", arg)
    if kind is nn.Sigmoid:
        return call("torch.sigmoid", arg)
    if kind is nn.Softmax and module.dim is not None:
        return call("torch.softmax", arg, dim=module.dim)
    return None


def _pair(value: Any) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value, value)


@dataclass
class Origin:
    """Where a generated function came from: ``cls.method`` of the submodule at ``path`` (""
    for the instance itself), written at ``line`` of ``file``. ``statements`` maps each line of
    the generated function (1 for its ``def``) to the span of the source statement it was
    rewritten from, as (line, col, end_line, end_col), 1-based columns in characters; empty
    when the function has no source of its own (an ``nn.Sequential``'s chain)."""

    cls: str
    method: str
    path: str
    file: str | None
    line: int | None
    statements: dict[int, tuple[int, int, int, int]]


class _Rewriter:
    """Rewrites the ``forward`` of every custom module of one instance's tree."""

    def __init__(self) -> None:
        #: argument name -> attribute path from the root, of every tensor read at call time
        self.paths: dict[str, str] = {}
        self.functions: list[str] = []
        #: generated function name -> where it came from
        self.origins: dict[str, Origin] = {}
        #: per module instance: its generated function and the tensors it takes
        self._made: dict[tuple, tuple[str, list[str]]] = {}

    def register(self, path: str) -> str:
        name = "p_" + path.replace(".", "__")
        self.paths[name] = path
        return name

    def function_of(self, module: Any, path: str, method: str = "forward", modules: dict | None = None) -> tuple[str, list[str]]:
        """The generated function of a custom module's ``method`` (made once per instance,
        method and module arguments) and the names of the tensors it takes after the method's
        own arguments. ``modules`` binds parameters of the method to submodules passed to it
        (DLRM's `self.apply_mlp(x, self.bot_l)`): those parameters leave the signature."""
        modules = modules or {}
        key = (id(module), method, tuple(sorted((n, id(m)) for n, (m, _) in modules.items())))
        if key not in self._made:
            stem = "_tl_module_" + path.replace(".", "__") if path else "_tl_module"
            name = ENTRY if (not path and method == "forward") else f"{stem}{'' if method == 'forward' else '__' + method}"
            if not path and method != "forward":
                name = f"_tl_module__{method}"
            if modules:
                name += "__" + "__".join(p.replace(".", "_") for _, p in sorted(modules.values(), key=lambda v: v[1]))
            self._made[key] = (name, [])  # a method calling itself stops here
            text, tensors = self._rewrite(module, path, name, method, modules)
            self.functions.append(text)
            self._made[key] = (name, tensors)
        return self._made[key]

    def _rewrite(self, module: Any, path: str, name: str, method: str, modules: dict) -> tuple[str, list[str]]:
        import torch.nn as nn

        if method == "forward" and isinstance(module, nn.Sequential) and type(module).forward is nn.Sequential.forward:
            return self._sequential(module, path, name)
        function = getattr(type(module), method)
        try:
            raw_lines, first_line = inspect.getsourcelines(function)
            file = inspect.getsourcefile(function)
        except (OSError, TypeError) as error:
            raise Unsupported(f"the source of {type(module).__name__}.{method} is not available") from error
        raw = "".join(raw_lines)
        source = textwrap.dedent(raw)
        forward = ast.parse(source).body[0]
        if not isinstance(forward, ast.FunctionDef) or not forward.args.args:
            raise Unsupported(f"{type(module).__name__}.forward is not a plain method")
        if forward.args.vararg or forward.args.kwarg or forward.args.kwonlyargs or forward.args.posonlyargs:
            raise Unsupported(f"{type(module).__name__}.forward takes *args, **kwargs, keyword-only or positional-only parameters")
        body = _Body(self, module, path, forward.args.args[0].arg)
        body.bound.update(modules)
        statements: list[ast.stmt] = []
        for statement in forward.body:
            result = body.visit(statement)
            statements.extend(result if isinstance(result, list) else [result])
        # no annotations (each function is specialised on its call's types) and no defaults
        # (the host applies the entry's; calls between generated functions pass every argument)
        arguments = [a for a in forward.args.args[1:] if a.arg not in modules] + [ast.arg(arg=t) for t in body.used]
        for a in arguments:
            a.annotation = None
        forward.args = ast.arguments(posonlyargs=[], args=arguments, kwonlyargs=[], kw_defaults=[], defaults=[])
        forward.name = name
        forward.decorator_list = []
        forward.returns = None
        forward.body = statements
        text = ast.unparse(ast.fix_missing_locations(forward))
        indent = len(raw) - len(raw.lstrip(" \t"))
        spans = _statement_spans(forward, text, raw.splitlines(), first_line, indent)
        self.origins[name] = Origin(type(module).__name__, method, path, file, first_line, spans)
        return text, body.used

    def _sequential(self, module: Any, path: str, name: str) -> tuple[str, list[str]]:
        """An ``nn.Sequential`` (or a subclass keeping its ``forward``) as the chain of its
        children."""
        body = _Body(self, module, path, "self")
        value = body._apply(module, path, [ast.Name(id="input", ctx=ast.Load())])
        arguments = [ast.arg(arg="input")] + [ast.arg(arg=t) for t in body.used]
        function = ast.FunctionDef(
            name=name, args=ast.arguments(posonlyargs=[], args=arguments, kwonlyargs=[], kw_defaults=[], defaults=[]),
            body=[ast.Return(value=value)], decorator_list=[], returns=None,
        )
        if "type_params" in ast.FunctionDef._fields:
            function.type_params = []
        self.origins[name] = Origin(type(module).__name__, "forward", path, None, None, {})
        return ast.unparse(ast.fix_missing_locations(function)), body.used


def _statement_spans(rewritten: ast.FunctionDef, text: str, raw: list[str],
                     first_line: int, indent: int) -> dict[int, tuple[int, int, int, int]]:
    """Each line of the generated function ``text`` -> the span, in the file, of the source
    statement it was rewritten from (the innermost one). ``rewritten`` is the transformed tree
    that ``text`` unparses; its statements keep the line numbers of the method's dedented
    source ``raw`` (starting at ``first_line`` of the file, indented by ``indent``), except the
    ones the rewriting made, which take their parent's. Unparsing keeps statements as they are
    (expressions may change shape), so the statements of ``text`` parsed again pair with
    ``rewritten``'s in walk order."""
    made_statements, source_statements = _statements(ast.parse(text).body[0]), _statements(rewritten)
    pairs = list(zip(made_statements, source_statements))
    if len(made_statements) != len(source_statements) or any(type(a) is not type(b) for a, b in pairs):
        return {}
    spans: dict[int, tuple[int, int, int, int]] = {}
    for made, source in pairs:  # outer statements first: inner ones overwrite their lines
        line = getattr(source, "lineno", None)
        if line is None or not 1 <= line <= len(raw):
            continue
        end_line = getattr(source, "end_lineno", None) or line
        text_line = raw[line - 1]
        col = _chars(text_line, indent + source.col_offset)
        if end_line == line and source.end_col_offset is not None:
            end_col = _chars(text_line, indent + source.end_col_offset)
        else:
            end_col = len(text_line.rstrip())
        span = (first_line + line - 1, col + 1, first_line + line - 1, end_col + 1)
        for generated_line in range(made.lineno, (made.end_lineno or made.lineno) + 1):
            spans[generated_line] = span
    return spans


def _statements(node: ast.AST) -> list[ast.stmt]:
    return [n for n in ast.walk(node) if isinstance(n, ast.stmt)]


def _chars(line: str, byte_offset: int) -> int:
    """A UTF-8 byte offset into ``line`` as a character offset."""
    return len(line.encode()[:byte_offset].decode(errors="ignore"))


class _Body(ast.NodeTransformer):
    """One ``forward`` body: ``self.…`` resolved against the live instance."""

    def __init__(self, rewriter: _Rewriter, module: Any, path: str, self_name: str) -> None:
        self.rewriter = rewriter
        self.module = module
        self.path = path
        self.self_name = self_name
        #: loop variables bound to a child module while a `for` over a module list is unrolled
        self.bound: dict[str, tuple[Any, str]] = {}
        #: the tensors this function takes, in first-use order
        self.used: list[str] = []

    def tensor(self, path: str) -> ast.expr:
        name = self.rewriter.register(path)
        if name not in self.used:
            self.used.append(name)
        return ast.Name(id=name, ctx=ast.Load())

    def _method(self, node: ast.expr) -> str | None:
        """`self.name` naming a plain method of the instance's class (not `forward`)."""
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == self.self_name:
            import torch.nn as nn

            attribute = inspect.getattr_static(self.module, node.attr, None)
            if inspect.isfunction(attribute) and node.attr != "forward" and node.attr not in vars(nn.Module):
                return node.attr
        return None

    def _child_path(self, attr: str) -> str:
        return _join(self.path, attr)

    def _resolve(self, node: ast.expr) -> tuple[Any, str] | None:
        """The module (and its path) a callee expression names: `self.x`, `self.x[i]`, a bound
        loop variable."""
        import torch.nn as nn

        if isinstance(node, ast.Name) and node.id in self.bound:
            return self.bound[node.id]
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == self.self_name:
            value = getattr(self.module, node.attr, None)
            if isinstance(value, nn.Module):
                return value, self._child_path(node.attr)
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int):
            container = self._resolve(node.value)
            if container is not None and isinstance(container[0], (nn.ModuleList, nn.Sequential)):
                index = node.slice.value
                return container[0][index], _join(container[1], str(index % len(container[0])))
        return None

    def _chain(self, node: ast.expr) -> list[str] | None:
        """`self.a.b.c` as ["a", "b", "c"] (None: not an attribute chain on `self`)."""
        names: list[str] = []
        while isinstance(node, ast.Attribute):
            names.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id == self.self_name and names:
            return names[::-1]
        return None

    def visit_Attribute(self, node: ast.Attribute) -> ast.expr:
        import torch
        import torch.nn as nn

        chain = self._chain(node) if isinstance(node.ctx, ast.Load) else None
        if chain is None:
            return self.generic_visit(node)
        if chain == ["training"]:
            return ast.Constant(False)
        value: Any = self.module
        tensor_at = None  # where the chain first reaches a parameter or buffer
        for index, name in enumerate(chain):
            if isinstance(value, nn.Module) and name == "training":
                return ast.Constant(False)
            if tensor_at is None and isinstance(value, torch.Tensor):
                tensor_at = index
            value = getattr(value, name, _MISSING)
            if value is _MISSING:
                raise Unsupported(f"self.{'.'.join(chain[: index + 1])} does not exist on the instance")
        path = ".".join([self.path, *chain] if self.path else chain)
        if isinstance(value, torch.Tensor):
            return self.tensor(path)
        if value is None or isinstance(value, (bool, int, float, str)):
            return ast.Constant(value)
        if isinstance(value, (tuple, list)) and all(isinstance(v, (bool, int, float)) for v in value):
            return ast.Tuple(elts=[ast.Constant(v) for v in value], ctx=ast.Load())
        function = _torch_function_path(value)
        if function is not None:
            return ast.parse(function, mode="eval").body
        if isinstance(value, nn.Module):
            raise Unsupported(f"the submodule self.{'.'.join(chain)} is used as a value, not called")
        if tensor_at is not None:
            # a method of a parameter or buffer (`self.weight.float()`: Gemma's RMSNorm): called
            # on the tensor the entry takes, where the analyzer claims it or says why not
            tensor_path = ".".join([self.path, *chain[:tensor_at]] if self.path else chain[:tensor_at])
            expr: ast.expr = self.tensor(tensor_path)
            for attr in chain[tensor_at:]:
                expr = ast.Attribute(value=expr, attr=attr, ctx=ast.Load())
            return expr
        raise Unsupported(f"self.{'.'.join(chain)} ({type(value).__name__}) has no native form")

    def visit_Call(self, node: ast.Call) -> ast.expr:
        method = self._method(node.func)
        if method is not None:
            if node.keywords:
                raise Unsupported(f"a keyword argument to self.{method}()")
            # a submodule passed as an argument is bound into a copy of the method
            names = list(inspect.signature(getattr(self.module, method)).parameters)
            modules, args = {}, []
            for index, a in enumerate(node.args):
                target = self._resolve(a)
                if target is not None and index < len(names):
                    modules[names[index]] = target
                else:
                    args.append(self.visit(a))
            return self._generated_call(self.module, self.path, method, args, modules)
        target = self._resolve(node.func)
        if target is None:
            return self.generic_visit(node)
        module, path = target
        args = [self.visit(a) for a in node.args]
        if node.keywords:
            raise Unsupported(f"a keyword argument to the submodule {path}")
        return self._apply(module, path, args)

    def _apply(self, module: Any, path: str, args: list[ast.expr]) -> ast.expr:
        import torch.nn as nn

        if isinstance(module, nn.Sequential) and type(module).forward is nn.Sequential.forward:
            if len(args) != 1:
                raise Unsupported(f"{path} (nn.Sequential) called with {len(args)} arguments")
            value = args[0]
            for index, child in enumerate(module):
                value = self._apply(child, _join(path, str(index)), [value])
            return value
        if len(args) == 1:
            leaf = _leaf_call(module, args[0], lambda name: self.tensor(_join(path, name)))
            if leaf is not None:
                return leaf
        if type(module).forward is nn.Module.forward or type(module).__module__.startswith("torch.nn"):
            raise Unsupported(f"{path} ({type(module).__name__}) has no native form")
        # omitted arguments with literal defaults, as Python fills them
        parameters = list(inspect.signature(module.forward).parameters.values())
        if len(args) > len(parameters):
            raise Unsupported(f"{path} called with {len(args)} arguments")
        for p in parameters[len(args):]:
            if p.default is inspect.Parameter.empty or not (p.default is None or isinstance(p.default, (bool, int, float, str))):
                raise Unsupported(f"{path}: no literal value for its argument `{p.name}`")
            args.append(ast.Constant(p.default))
        return self._generated_call(module, path, "forward", args)

    def _generated_call(self, module: Any, path: str, method: str, args: list[ast.expr], modules: dict | None = None) -> ast.expr:
        """A call of the generated function of ``module.method``: its arguments, then the
        tensors it takes (which this function takes too, to pass them on)."""
        name, tensors = self.rewriter.function_of(module, path, method, modules)
        for tensor_name in tensors:
            if tensor_name not in self.used:
                self.used.append(tensor_name)
        return ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=args + [ast.Name(id=t, ctx=ast.Load()) for t in tensors], keywords=[])

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        """A comparison of values read from the instance (`self.downsample is not None`) is
        known now: its result, so the analyzer keeps only the branch Python takes."""
        node = self.generic_visit(node)
        operands = [node.left, *node.comparators]
        if not all(isinstance(o, ast.Constant) for o in operands):
            return node
        import operator

        table = {ast.Is: operator.is_, ast.IsNot: operator.is_not, ast.Eq: operator.eq, ast.NotEq: operator.ne}
        result = True
        for op, (left, right) in zip(node.ops, zip(operands, operands[1:])):
            if type(op) not in table:
                return node
            result = result and bool(table[type(op)](left.value, right.value))
        return ast.Constant(result)

    def visit_For(self, node: ast.For) -> Any:
        import torch.nn as nn

        container = self._resolve(node.iter)
        if container is None or not isinstance(node.target, ast.Name):
            return self.generic_visit(node)
        modules, path = container
        if not isinstance(modules, (nn.ModuleList, nn.Sequential)) or node.orelse:
            raise Unsupported(f"a `for` over {path} ({type(modules).__name__})")
        unrolled: list[ast.stmt] = []
        for index, child in enumerate(modules):
            self.bound[node.target.id] = (child, _join(path, str(index)))
            for statement in node.body:
                unrolled.append(self.visit(copy.deepcopy(statement)))
        self.bound.pop(node.target.id, None)
        return unrolled or [ast.Pass()]


_MISSING = object()


def _join(path: str, part: str) -> str:
    """The attribute path of ``part`` under ``path`` (the root's path is empty)."""
    return f"{path}.{part}" if path else part


def _torch_function_path(value: Any) -> str | None:
    """The dotted path of a function of ``torch`` / ``torch.nn.functional`` held as an
    attribute (transformers' ``self.act = nn.functional.gelu``), or None."""
    import torch
    import torch.nn.functional as F

    if not callable(value) or isinstance(value, type):
        return None
    for prefix, namespace in (("torch.nn.functional", F), ("torch", torch)):
        name = getattr(value, "__name__", None)
        if name and getattr(namespace, name, None) is value:
            return f"{prefix}.{name}"
    return None


@dataclass
class Rewritten:
    """The generated functions of one instance's tree."""

    #: their source, helpers first, the entry :data:`ENTRY` last
    generated: str
    #: the tensors the entry takes after ``forward``'s own arguments, as (name, attribute path)
    tensors: list[tuple[str, str]]
    #: generated function name -> where it came from
    origins: dict[str, Origin]

    def appended_to(self, source: str) -> tuple[str, int]:
        """The class's file ``source`` with the generated functions appended (so its imports,
        constants and helpers resolve), and the line of the entry's ``def`` there (0: none).
        The functional forms are spelled ``torch.…``: a file that never binds ``torch`` itself
        (only ``import torch.nn as nn``) gets ``import torch`` before them."""
        text = source + ("" if source.endswith("\n") else "\n") + "\n\n"
        if self.generated and not _binds_torch(source):
            text += "import torch\n\n\n"
        text += self.generated + "\n"
        return text, (text[: text.index(f"def {ENTRY}(")].count("\n") + 1 if self.generated else 0)


def _binds_torch(source: str) -> bool:
    """Whether the module binds the name ``torch`` at its top level by an import."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return True  # the analyzer reports the file's own error
    for statement in body:
        if isinstance(statement, ast.Import):
            if any(a.asname == "torch" or (a.asname is None and a.name.split(".")[0] == "torch") for a in statement.names):
                return True
        elif isinstance(statement, ast.ImportFrom) and any((a.asname or a.name) == "torch" for a in statement.names):
            return True
    return False


def rewrite(module: Any) -> Rewritten:
    """The generated functions of ``module``'s tree; raises :class:`Unsupported`."""
    rewriter = _Rewriter()
    _, tensors = rewriter.function_of(module, "")
    return Rewritten("\n\n\n".join(rewriter.functions), [(n, rewriter.paths[n]) for n in tensors], rewriter.origins)


def _attribute(root: Any, path: str) -> Any:
    value = root
    for part in path.split("."):
        value = value[int(part)] if part.isdigit() else getattr(value, part)
    return value


def _owner(root: Any, path: str) -> tuple[Any, str]:
    """The module holding the tensor at ``path`` and its name there."""
    parent, _, name = path.rpartition(".")
    return (_attribute(root, parent) if parent else root), name


def _hook_dicts(module: Any) -> list[dict]:
    """A module's hook dicts (PyTorch mutates them in place when hooks are added)."""
    names = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")
    return [d for d in (getattr(module, n, None) for n in names) if isinstance(d, dict)]


def _global_hook_dicts() -> list[dict]:
    """PyTorch's global module hooks (registered for every module), if this version has them."""
    from torch.nn.modules import module as torch_module

    names = ("_global_forward_hooks", "_global_forward_pre_hooks", "_global_backward_hooks", "_global_backward_pre_hooks")
    return [getattr(torch_module, n) for n in names if isinstance(getattr(torch_module, n, None), dict)]


def compile_module(module: Any, build: Callable[[str, str], tuple[Callable | None, str | None, list[dict]]], filename: str,
                   source: str, rerun: tuple, mode: Callable[[], str]) -> Callable:
    """The callable of a module instance. ``build(source, name)`` analyzes and builds a source
    and returns the native function ``name`` (or None and why not) and the report entries of
    the generated functions; ``rerun`` are the native errors after which ``auto`` mode runs the
    module itself; ``mode()`` the current mode."""
    import torch

    try:
        rewritten, reason = rewrite(module), None
    except Unsupported as error:
        rewritten, reason = Rewritten("", [], {}), str(error)
    generated, tensors = rewritten.generated, rewritten.tensors
    signature = inspect.signature(module.forward)
    text, line = rewritten.appended_to(source)
    names = list(signature.parameters) + [n for n, _ in tensors]
    specialised: dict[tuple, Callable | None] = {}
    reasons: dict[tuple, str] = {}
    #: per combination, the analyzer's entries of the generated functions (every forward)
    reports: dict[tuple, list[dict]] = {}
    lock = threading.Lock()

    def native_for(values: tuple) -> Callable | None:
        key = _specialise_key(values)
        if key in specialised:
            return specialised[key]
        with lock:
            if key not in specialised:
                found, why = None, None
                if None in key:
                    why = "an argument or tensor of the module no annotation of the vocabulary describes"
                elif len(specialised) >= _specialise.MAX_SPECIALISATIONS:
                    why = f"more than {_specialise.MAX_SPECIALISATIONS} argument-type combinations"
                else:
                    annotated = _specialise.annotate(text, ENTRY, line, dict(zip(names, key)))
                    if annotated is None:
                        why = "the generated forward was not found"
                    else:
                        found, why, reports[key] = build(annotated, ENTRY)
                specialised[key] = found
                if why:
                    reasons[key] = why
            return specialised[key]

    calls = {"native": 0, "eager": 0}
    parameters = list(signature.parameters.values())
    plain = all(p.kind == p.POSITIONAL_OR_KEYWORD for p in parameters)
    # Per-call guards, made of C-level checks over lists built once: every hook dict of the
    # tree (and the global ones), every module's `training`, every module's children (a rebound
    # submodule changes them), and where each tensor is read (its owner's `_parameters` or
    # `_buffers` dict: a new Parameter assigned to the same name is read, never a stale one).
    modules = [m for _, m in module.named_modules()]
    hook_dicts = [d for m in modules for d in _hook_dicts(m)] + _global_hook_dicts()
    children = [(m._modules, tuple(m._modules.values())) for m in modules if m._modules]
    training = operator.attrgetter("training")
    where = []
    for owner, name in (_owner(module, path) for _, path in tensors):
        where.append((owner._parameters if name in owner._parameters else owner._buffers, name))
    # per-call key -> native function: (dtype, device, rank) of tensors, the type of others
    fast: dict[tuple, Callable | None] = {}

    def eager(*args, **kwargs):
        calls["eager"] += 1
        return module(*args, **kwargs)

    Tensor = torch.Tensor

    autocast_enabled = _autocast_query()

    def must_run_eagerly() -> bool:
        # autocast on: eager computes in a lower precision (see `_autocast_query`)
        return (
            autocast_enabled()
            or any(hook_dicts)
            or any(map(training, modules))
            or any(tuple(d.values()) != snapshot for d, snapshot in children)
        )

    def call(*args, **kwargs):
        current = mode()
        if current == "fallback" or reason is not None or must_run_eagerly():
            if current == "native" and reason is not None:
                raise _build_error(f"torchlower: {type(module).__name__} is not native: {reason}")
            return eager(*args, **kwargs)
        if plain and not kwargs and len(args) == len(parameters):
            given = args
        else:
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError:
                return eager(*args, **kwargs)
            bound.apply_defaults()
            given = tuple(bound.arguments.values())
        try:
            held = [d[name] for d, name in where]
        except KeyError:  # a tensor was deleted from the instance
            return eager(*args, **kwargs)
        if torch.is_grad_enabled() and any(t.requires_grad for t in held):
            return eager(*args, **kwargs)  # autograd records eager's graph
        values = (*given, *held)
        # Keyed by the call's arguments only: the instance's tensors are checked by the native
        # boundary (dtype, device, rank), and a refusal there specialises again for what they
        # are now (after `.to()`), so their types cost nothing per call.
        key = tuple((v.dtype, v.device, v.dim()) if isinstance(v, Tensor) else type(v) for v in given)
        entry = fast.get(key)
        if entry is None:
            entry = fast[key] = (_specialise_key(values), native_for(values))
        native = entry[1]
        if native is None:
            # eager for these types; unless the instance's tensors changed type since (the
            # eager path is slow anyway, so look again)
            now = _specialise_key(values)
            if now != entry[0]:
                fast[key] = (now, native_for(values))
                return call(*args, **kwargs)
            if current == "native":
                raise _build_error(f"torchlower: {type(module).__name__} is not native: {reasons.get(entry[0])}")
            return eager(*args, **kwargs)
        router.use_native(native)  # the C fast path tries it first from now on
        if current == "native":
            calls["native"] += 1
            return native(*values)
        try:
            result = native(*values)
        except rerun as error:
            if getattr(error, "torchlower_after_writes", False) is True:
                raise  # the arguments changed: Python must not run again (TL212)
            # the instance's tensors changed type since this key was specialised?
            now = _specialise_key(values)
            if now == entry[0]:
                return eager(*args, **kwargs)
            fast[key] = (now, native_for(values))
            return call(*args, **kwargs)
        calls["native"] += 1
        return result

    # The returned callable: the guards above checked in C, then the native function the
    # Python router used last; every other call goes to `call` (host-py/src/specialising.rs).
    from . import _compile, _native

    router = _native.Specialising(
        call,
        len(parameters) if plain else None,
        _compile._environ_data,
        _compile._environ_key,
        autocast_enabled,
        _grad_query(),
        hook_dicts,
        [m.__dict__ for m in modules],
        [(d, list(snapshot)) for d, snapshot in children],
        where,
        calls,
        _torch_lib(),
    )
    router.route = "module" if reason is None else "fallback"
    router.reason = reason
    router.reasons = reasons
    router.reports = reports
    router.specialisations = specialised
    router.generated = generated
    router.module = module
    #: the instance's tensors as the native function takes them after the arguments (for
    #: benchmarks/modules.py, which times the native function alone)
    router.instance_tensors = lambda: tuple(d[name] for d, name in where)
    router.__torchlower__ = True
    return router


def _grad_query() -> Callable[[], bool]:
    """``torch.is_grad_enabled`` (imported when asked: the analyzer works without torch)."""
    import torch

    return torch.is_grad_enabled


def _torch_lib() -> str:
    """torch's `lib` folder: the C router reads libtorch's autocast and grad-mode flags there."""
    import torch

    return str(Path(torch.__file__).parent / "lib")


def _specialise_key(values: tuple) -> tuple:
    """The annotation of every value (None where no marker describes one)."""
    return tuple(_specialise.type_name(v) for v in values)


def _build_error(message: str) -> Exception:
    from ._build import BuildError

    return BuildError(message)


def _autocast_query() -> Callable[[], bool]:
    """A function returning whether an autocast region is enabled now (on any device): eager
    then computes matmuls and convolutions in a lower precision, native code in the annotated
    dtypes. The private query is the cheap one (~0.1 µs from Python); the public one its
    fallback."""
    import torch

    return getattr(torch._C, "_is_any_autocast_enabled", None) or (
        lambda: torch.is_autocast_enabled("cpu") or torch.is_autocast_enabled("cuda")
    )
