"""Constructor calls in pasted code that the class's own ``__init__`` cannot take.

A Serve replica and a Ray actor are instances of the application's class: they exist only once
its ``__init__`` has run with the arguments the code passed. When those arguments cannot bind to
the ``__init__`` (a required parameter left without a value, a keyword it does not name, more
positional values than it takes), the instance never comes up, and what the person sees looks
like a wait for resources:

- Serve passes the arguments of ``X.bind(...)`` (2.x), or of ``X.deploy(...)`` and the
  ``init_args``/``init_kwargs`` of the decorator or ``.options(...)`` (1.x: ``deploy()`` without
  arguments passes the stored ones), to every replica, unchecked. Each replica raises ``TypeError``
  in its constructor; the controller starts another (``Adding 1 replica to deployment ...`` again
  and again) and, after its retries, marks the deployment ``DEPLOY_FAILED`` ("failed to start N
  times in a row ... constructor"): ``serve status`` and the replica's log say so.
- Ray binds the arguments of ``A.remote(...)`` (through ``.options(...)`` or not) to the
  ``__init__`` signature on the driver, before it submits the creation (``inspect.Signature.bind``
  in ``ray/_common/signature.py``): the call itself raises ``TypeError`` with the same words, and no
  actor is ever created; code that waits for the actor's handle never gets one.

So the reading is a join of two things the paste must both show: the class with its own
``__init__`` and the call that constructs it; they may sit in different fences, so this module
records both as it reads (:class:`~bot.read.code_facts.Constructor`,
:class:`~bot.read.code_facts.Creation`) and :func:`mismatches` binds them once the paste is read.
The binding is Python's own (``inspect.Signature.bind`` over the parameters ``ast`` read), so its
verdict is what Python and Ray would give. Nothing is claimed where it is not certain: a class
whose ``__init__`` is not its own or may be wrapped (a base class without an own ``__init__``, a
``__new__``, a metaclass, a decorator other than Ray's and Serve's), a call with ``*args`` or
``**kwargs``, a name defined twice differently, a Serve 1.x value that is no literal.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Sequence

from bot.read.code_facts import CodeFacts, Constructor, Creation
from bot.snapshot.ray import ConstructorMismatch

MAX_CREATIONS = 200
MAX_MISMATCHES = 10
_QUOTE_CHARS = 200
# A name may stand for another through at most this many assignments.
_MAX_ALIAS_DEPTH = 8
_APIS = {"remote": "actor", "bind": "deployment", "deploy": "deployment"}
# Class decorators that keep what the class's ``__init__`` accepts: Ray's and Serve's own
# (``serve.ingress`` wraps the class in a subclass that passes every argument on).
_RAY = ("ray.remote", "remote")
_SERVE = ("serve.deployment", "deployment")
_TRANSPARENT = ("serve.ingress", "ingress")


def _dotted(node: ast.AST) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def _line(lines: Sequence[str], node: ast.AST) -> str:
    index = getattr(node, "lineno", 1) - 1
    return lines[index].strip()[:_QUOTE_CHARS] if 0 <= index < len(lines) else ""


def _pasted(node: ast.AST, lines: Sequence[str], closing: bytes = b"") -> bool:
    """Whether ``node`` ends inside the pasted lines (ending with ``closing``), not in what the
    parser's recovery added to a cut snippet (the brackets it closed, the body it gave a header)."""
    index = (getattr(node, "end_lineno", None) or 0) - 1
    end = getattr(node, "end_col_offset", None)
    if not 0 <= index < len(lines) or end is None:
        return False
    line = lines[index].encode("utf-8")
    return 0 < end <= len(line) and (not closing or line[end - len(closing) : end] == closing)


def _parameters(init: ast.FunctionDef) -> tuple[tuple[str, str, bool], ...] | None:
    """``__init__``'s parameters without ``self``, as (name, kind, has_default)."""
    args = init.args
    positional = [*args.posonlyargs, *args.args]
    if not positional:
        return None  # no ``self``: not an ordinary method
    defaults_from = len(positional) - len(args.defaults)
    params: list[tuple[str, str, bool]] = []
    for index, arg in enumerate(positional):
        if index == 0:
            continue
        kind = "POSITIONAL_ONLY" if index < len(args.posonlyargs) else "POSITIONAL_OR_KEYWORD"
        params.append((arg.arg, kind, index >= defaults_from))
    if args.vararg is not None:
        params.append((args.vararg.arg, "VAR_POSITIONAL", False))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=False):
        params.append((arg.arg, "KEYWORD_ONLY", default is not None))
    if args.kwarg is not None:
        params.append((args.kwarg.arg, "VAR_KEYWORD", False))
    return tuple(params)


def _stored(call: ast.Call | None) -> tuple[bool, int | None, tuple[str, ...] | None, bool]:
    """Serve 1.x's ``init_args``/``init_kwargs`` among a call's keywords: (named, count, names,
    unknown)."""
    if call is None:
        return False, None, None, False
    keywords = {k.arg: k.value for k in call.keywords if k.arg}
    named = "init_args" in keywords or "init_kwargs" in keywords
    count: int | None = None
    names: tuple[str, ...] | None = None
    unknown = False
    if "init_args" in keywords:
        value = keywords["init_args"]
        if isinstance(value, ast.Tuple | ast.List) and not any(
            isinstance(e, ast.Starred) for e in value.elts
        ):
            count = len(value.elts)
        elif not (isinstance(value, ast.Constant) and value.value is None):
            unknown = True
    if "init_kwargs" in keywords:
        value = keywords["init_kwargs"]
        if isinstance(value, ast.Dict) and all(
            isinstance(k, ast.Constant) and isinstance(k.value, str) for k in value.keys
        ):
            names = tuple(str(k.value) for k in value.keys if isinstance(k, ast.Constant))
        elif isinstance(value, ast.Call) and _dotted(value.func) == "dict" and not value.args:
            if any(k.arg is None for k in value.keywords):
                unknown = True
            else:
                names = tuple(k.arg for k in value.keywords if k.arg)
        elif not (isinstance(value, ast.Constant) and value.value is None):
            unknown = True
    return named, count, names, unknown


def _class(node: ast.ClassDef, lines: Sequence[str]) -> Constructor:
    kind = "class"
    quote = _line(lines, node)
    certain = not node.keywords  # a metaclass may build instances its own way
    stored: tuple[bool, int | None, tuple[str, ...] | None, bool] = (False, None, None, False)
    for decorator in node.decorator_list:
        call = decorator if isinstance(decorator, ast.Call) else None
        name = _dotted(call.func if call else decorator)
        if name in _RAY:
            kind, quote = "actor", _line(lines, decorator)
        elif name in _SERVE:
            kind, quote = "deployment", _line(lines, decorator)
            stored = _stored(call)
        elif name not in _TRANSPARENT:
            certain = False
    body = [s for s in node.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)]
    inits = [s for s in body if s.name == "__init__"]
    if any(s.name == "__new__" for s in body) or len(inits) != 1:
        certain = False
    init = inits[0] if len(inits) == 1 else None
    parameters = None
    if (
        certain
        and isinstance(init, ast.FunctionDef)
        and not init.decorator_list
        and _pasted(init.body[-1], lines)
    ):
        parameters = _parameters(init)
    return Constructor(
        name=node.name,
        kind=kind,
        parameters=parameters,
        init_quote=_line(lines, init) if init is not None else "",
        quote=quote,
        stored_args=stored[1],
        stored_kwargs=stored[2],
        stored_unknown=stored[3],
    )


def _alias(target: str, value: ast.expr, facts: CodeFacts) -> None:
    """``A = ray.remote(B)``, ``A = ray.remote(num_gpus=1)(B)``, ``D = serve.deployment(B)``,
    ``A2 = A.options(...)``: the name that stands for a class."""
    if not isinstance(value, ast.Call):
        return
    func = value.func
    decorator = _dotted(func.func) if isinstance(func, ast.Call) else _dotted(func)
    wrapped = value.args[0] if len(value.args) == 1 and isinstance(value.args[0], ast.Name) else None
    if decorator in _RAY and wrapped is not None:
        facts.aliases[target] = (wrapped.id, "actor")
    elif decorator in _SERVE and wrapped is not None:
        named = _stored(value)[0] or (isinstance(func, ast.Call) and _stored(func)[0])
        if not named:  # stored arguments of a class decorated by a call are not followed
            facts.aliases[target] = (wrapped.id, "deployment")
    elif (
        isinstance(func, ast.Attribute)
        and func.attr == "options"
        and isinstance(func.value, ast.Name)
        and not _stored(value)[0]  # Serve 1.x options storing arguments: not followed
    ):
        facts.aliases[target] = (func.value.id, "")


def _creation(call: ast.Call, lines: Sequence[str], facts: CodeFacts) -> None:
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in _APIS:
        return
    base = func.value
    options: ast.Call | None = None
    if isinstance(base, ast.Call) and isinstance(base.func, ast.Attribute) and base.func.attr == "options":
        options, base = base, base.func.value
    if not isinstance(base, ast.Name) or not _pasted(call, lines, b")"):
        return  # a call the paste cut, whose arguments are not all shown
    positional: int | None = len(call.args)
    if any(isinstance(a, ast.Starred) for a in call.args):
        positional = None
    keywords: tuple[str, ...] | None = tuple(k.arg for k in call.keywords if k.arg)
    if any(k.arg is None for k in call.keywords):
        keywords = None
    if keywords is not None and func.attr == "deploy":
        keywords = tuple(k for k in keywords if k != "_blocking")  # deploy()'s own argument
    named, count, names, unknown = _stored(options)
    if len(facts.creations) < MAX_CREATIONS:
        facts.creations.append(
            Creation(
                target=base.id,
                api=func.attr,
                positional=positional,
                keywords=keywords,
                quote=_line(lines, call),
                stores=named,
                stored_args=count,
                stored_kwargs=names,
                stored_unknown=unknown,
            )
        )


def read_tree(tree: ast.Module, lines: Sequence[str], facts: CodeFacts) -> None:
    """Record the classes, the names standing for them and the constructing calls of one parsed
    segment; ``lines`` are the segment's lines, for quotes."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            constructor = _class(node, lines)
            if node.name in facts.constructors and facts.constructors[node.name] != constructor:
                facts.constructors[node.name] = None  # two classes of one name: which one runs is unknown
            else:
                facts.constructors[node.name] = constructor
        elif (
            isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
        ):
            _alias(node.targets[0].id, node.value, facts)
        elif isinstance(node, ast.Call):
            _creation(node, lines, facts)


def _resolve(name: str, facts: CodeFacts) -> tuple[Constructor, str] | None:
    """The class a name stands for, and the kind the name makes of it."""
    kind = ""
    for _ in range(_MAX_ALIAS_DEPTH):
        if name in facts.aliases:
            name, made = facts.aliases[name]
            kind = kind or made
            continue
        constructor = facts.constructors.get(name)
        if constructor is None:
            return None
        if kind and constructor.kind not in ("class", kind):
            return None  # made remote twice, or a deployment made an actor: not followed
        return constructor, kind or constructor.kind
    return None


def _signature(parameters: tuple[tuple[str, str, bool], ...]) -> inspect.Signature | None:
    try:
        return inspect.Signature(
            [
                inspect.Parameter(
                    name,
                    getattr(inspect.Parameter, kind),
                    default=None if has_default else inspect.Parameter.empty,
                )
                for name, kind, has_default in parameters
            ]
        )
    except (ValueError, TypeError):  # a recovered tree with parameters Python would refuse
        return None


def _arguments(creation: Creation, constructor: Constructor) -> tuple[int, tuple[str, ...]] | None:
    """(positional count, keyword names) the constructor receives; None when not certain."""
    positional, keywords = creation.positional, creation.keywords
    if creation.api == "bind":
        # Serve 2.x's bind() passes exactly its own arguments; 1.x-style stored ones beside it
        # depend on the version: not judged.
        if creation.stores or constructor.stored_args is not None or constructor.stored_kwargs is not None:
            return None
        if constructor.stored_unknown:
            return None
    elif creation.api == "deploy":
        # Serve 1.x ``deploy(*init_args, **init_kwargs)``: an empty side takes the stored one,
        # from ``.options(...)`` when it names them, else from the decorator.
        source = creation if creation.stores else constructor
        if source.stored_unknown:
            return None
        if positional == 0 and source.stored_args is not None:
            positional = source.stored_args
        if keywords == () and source.stored_kwargs is not None:
            keywords = source.stored_kwargs
    if positional is None or keywords is None:
        return None
    return positional, keywords


def _error(constructor: Constructor, positional: int, keywords: tuple[str, ...]) -> str | None:
    """What binding the arguments to the ``__init__`` raises; None when they bind."""
    if constructor.parameters is None:
        return None
    signature = _signature(constructor.parameters)
    if signature is None:
        return None
    try:
        signature.bind(*([None] * positional), **dict.fromkeys(keywords))
    except TypeError as error:
        return str(error)
    return None


def mismatches(facts: CodeFacts) -> list[ConstructorMismatch]:
    """The paste's constructions of its own classes that cannot bind to their ``__init__``."""
    found: list[ConstructorMismatch] = []
    seen: set[tuple[str, str]] = set()
    for creation in facts.creations:
        resolved = _resolve(creation.target, facts)
        if resolved is None:
            continue
        constructor, kind = resolved
        if kind != _APIS[creation.api]:
            continue
        arguments = _arguments(creation, constructor)
        if arguments is None:
            continue
        error = _error(constructor, *arguments)
        key = (constructor.name, creation.quote)
        if error is None or key in seen:
            continue
        seen.add(key)
        found.append(
            ConstructorMismatch(
                kind=kind,
                class_name=constructor.name,
                init=constructor.init_quote,
                call=creation.quote,
                error=error,
            )
        )
        if len(found) >= MAX_MISMATCHES:
            break
    return found
