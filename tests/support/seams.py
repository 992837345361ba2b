"""A check that the project's code meets other packages only at their public seams.

``check(paths)`` reads the given Python files (with the stdlib ``ast`` and ``tokenize``
only) and reports every place that reaches into another package's private names or into
the interpreter's internals, as ``Violation(path, line, message)``. Each message starts
with the rule's name (``private-attribute:``, ``private-import:``, ``introspection:``,
``frame-access:``, ``set-protocol:``, ``seam-comment:``) so that a reader and a test can
tell which rule fired.

The rules:

* ``private-attribute``: ``x._name`` (one leading underscore, or a mangled ``__name``,
  but never a dunder) where the project never defines ``_name``; the same for
  ``getattr``/``setattr``/``hasattr``/``delattr`` (and ``monkeypatch.setattr``) with a
  constant string. A name is defined by the project when the scanned files define a
  function, method or class of that name, assign it as an attribute (``self._x = ...``,
  ``obj._x = ...``, ``setattr(obj, "_x", ...)``, but not ``monkeypatch.setattr``), name
  it in a class body (assignments, annotations, ``__slots__`` entries) or bind it at
  module level. So a test may look at ``core.log._blocks`` but not at uvicorn's
  ``server._captured_signals``. That holds for ``self``, ``cls`` and ``super()`` too: our
  own classes define the private names they read, so a ``self._name`` that the project
  never defines is inherited from another package's class (a subclass of
  ``uvicorn.Server`` reading ``self._captured_signals``). A few documented underscore
  names of the standard library are public API and allowed: the namedtuple methods
  (``_replace``, ``_asdict``, ``_fields``, ``_make``, ``_field_defaults``), ``os._exit``
  and the enum sunder names.
* ``private-import``: ``from pkg import _x``, ``from pkg._mod import y`` and
  ``import pkg._mod`` where ``pkg`` is not one of the project's packages; and the same
  for the modules of ``UNDOCUMENTED_MODULES``, which their package keeps out of its
  documentation though no underscore says so (``websockets.speedups``), spelled
  ``import``, ``from mod import``, ``from pkg import mod`` or as a ``monkeypatch``
  target.
* ``introspection``: any attribute access (or ``getattr`` string) naming a generator's,
  coroutine's, async generator's or code object's fields (``gi_*``, ``cr_*``, ``ag_*``,
  ``co_*``), a frame's ``f_back``/``f_locals``/``f_globals``, a traceback's
  ``tb_frame``, or one of ``__self__``, ``__closure__``, ``__code__``, ``__globals__``,
  ``__defaults__``, ``__kwdefaults__``, on any object.
* ``frame-access``: ``sys._getframe`` (called, referenced or imported).
* ``set-protocol``: calling ``.set_protocol(...)`` on anything, which swaps another
  library's asyncio protocol out from under it.
* ``seam-comment``: a trailing ``# seam: <reason>`` comment silences its line (or, for a
  construct spanning several lines, any of them); the reason must not be empty, and a
  seam comment that silences nothing is reported too so that none outlive their cause.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

PROJECT_PACKAGES = frozenset({"dicehall", "tests", "bench"})

# Receivers whose private attributes are the current class's own, unless the project never
# defines them (then they are a base class's from another package).
OWN_RECEIVERS = frozenset({"self", "cls"})

# Underscore names that the standard library documents as public API.
DOCUMENTED_NAMES = frozenset(
    {
        # collections.namedtuple / typing.NamedTuple
        "_replace",
        "_asdict",
        "_fields",
        "_make",
        "_field_defaults",
        # enum's documented sunder names
        "_name_",
        "_value_",
        "_missing_",
        "_ignore_",
        "_order_",
        "_generate_next_value_",
        "_numeric_repr_",
        "_add_alias_",
        "_add_value_alias_",
    }
)
# Underscore names that are public only on one module.
DOCUMENTED_MODULE_NAMES = frozenset({("os", "_exit")})

# Modules without an underscore that their package does not document: private all the same.
# websockets' API reference lists its public modules, and "anything that isn't listed in
# the API reference is a private API" (docs/reference/index.rst); these are the modules of
# websockets 16 it does not list. (websockets.legacy is listed: deprecated, not private.)
UNDOCUMENTED_MODULES = frozenset(
    {
        "websockets.asyncio.messages",
        "websockets.auth",
        "websockets.cli",
        "websockets.connection",
        "websockets.headers",
        "websockets.imports",
        "websockets.legacy.exceptions",
        "websockets.legacy.framing",
        "websockets.legacy.handshake",
        "websockets.legacy.http",
        "websockets.proxy",
        "websockets.speedups",
        "websockets.streams",
        "websockets.sync.messages",
        "websockets.sync.utils",
        "websockets.trio.messages",
        "websockets.trio.utils",
        "websockets.utils",
        "websockets.version",
    }
)

FRAME_ACCESS = frozenset({("sys", "_getframe")})

INTROSPECTION_PREFIXES = ("gi_", "cr_", "ag_", "co_")
INTROSPECTION_NAMES = frozenset(
    {
        "f_back",
        "f_locals",
        "f_globals",
        "tb_frame",
        "__self__",
        "__closure__",
        "__code__",
        "__globals__",
        "__defaults__",
        "__kwdefaults__",
    }
)
# The interpreter's own names under those prefixes: never excused by a project name.
INTERPRETER_NAMES = frozenset(
    {
        "gi_code",
        "gi_frame",
        "gi_running",
        "gi_suspended",
        "gi_yieldfrom",
        "cr_await",
        "cr_code",
        "cr_frame",
        "cr_origin",
        "cr_running",
        "cr_suspended",
        "ag_await",
        "ag_code",
        "ag_frame",
        "ag_running",
        "ag_suspended",
        "co_argcount",
        "co_cellvars",
        "co_code",
        "co_consts",
        "co_exceptiontable",
        "co_filename",
        "co_firstlineno",
        "co_flags",
        "co_freevars",
        "co_kwonlyargcount",
        "co_lines",
        "co_linetable",
        "co_lnotab",
        "co_name",
        "co_names",
        "co_nlocals",
        "co_positions",
        "co_posonlyargcount",
        "co_qualname",
        "co_stacksize",
        "co_varnames",
    }
)

ATTRIBUTE_FUNCTIONS = frozenset({"getattr", "setattr", "hasattr", "delattr"})
# Methods taking (obj, "name", ...) the way setattr does: object.__setattr__ in frozen
# dataclasses, pytest's monkeypatch.setattr / delattr.
ATTRIBUTE_METHODS = frozenset({"setattr", "delattr", "__setattr__", "__delattr__"})

UNDOCUMENTED = "a module its package does not document (UNDOCUMENTED_MODULES)"

SEAM_COMMENT = re.compile(r"#\s*seam:(?P<reason>[^#]*)")


class Violation(NamedTuple):
    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


def is_private(name: str) -> bool:
    """One leading underscore, or a mangled ``__name``: anything but a dunder."""
    if not name.startswith("_") or name == "_":
        return False
    return not (name.startswith("__") and name.endswith("__"))


def is_introspection(name: str) -> bool:
    return name in INTROSPECTION_NAMES or name.startswith(INTROSPECTION_PREFIXES)


def private_component(module: str) -> str | None:
    """The first private part of a dotted module path, if any."""
    for part in module.split("."):
        if is_private(part):
            return part
    return None


def undocumented(module: str) -> str | None:
    """The entry of ``UNDOCUMENTED_MODULES`` that ``module`` is or lies in, if any."""
    parts = module.split(".")
    for end in range(len(parts), 1, -1):
        prefix = ".".join(parts[:end])
        if prefix in UNDOCUMENTED_MODULES:
            return prefix
    return None


def constant_str(node: ast.expr | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def attribute_call(node: ast.Call) -> tuple[ast.expr, str, bool] | None:
    """For ``getattr(obj, "name")`` and its kin: (obj, name, sets_it)."""
    func = node.func
    if isinstance(func, ast.Name) and func.id in ATTRIBUTE_FUNCTIONS:
        defines = func.id == "setattr"
    elif isinstance(func, ast.Attribute) and func.attr in ATTRIBUTE_METHODS:
        # object.__setattr__(self, "_x", ...) defines _x; monkeypatch.setattr patches it.
        defines = func.attr == "__setattr__"
    else:
        return None
    if len(node.args) < 2:
        return None
    name = constant_str(node.args[1])
    if name is None:
        return None
    return node.args[0], name, defines


def dotted(node: ast.expr) -> str | None:
    """``a.b.c`` for a chain of names, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


@dataclass
class Source:
    path: str
    text: str
    tree: ast.Module


def module_bindings(body: Sequence[ast.stmt]) -> Iterator[str]:
    """Names bound at module level (not inside functions or classes)."""
    for stmt in body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield stmt.name
            continue
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            # An imported name is borrowed, not defined: only a name of our choosing counts.
            for alias in stmt.names:
                if alias.asname:
                    yield alias.asname
            continue
        for child in ast.iter_child_nodes(stmt):
            if isinstance(child, ast.stmt):
                yield from module_bindings([child])
            elif isinstance(child, ast.ExceptHandler):
                if child.name:
                    yield child.name
                yield from module_bindings(child.body)
            else:
                for node in ast.walk(child):
                    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                        yield node.id


def slot_names(value: ast.expr) -> Iterator[str]:
    single = constant_str(value)
    if single is not None:
        yield single
    elif isinstance(value, ast.Tuple | ast.List | ast.Set):
        for element in value.elts:
            name = constant_str(element)
            if name is not None:
                yield name
    elif isinstance(value, ast.Dict):
        for key in value.keys:
            name = constant_str(key)
            if name is not None:
                yield name


def class_bindings(node: ast.ClassDef) -> Iterator[str]:
    for stmt in node.body:
        targets: list[ast.expr] = []
        if isinstance(stmt, ast.Assign):
            targets = stmt.targets
            if any(isinstance(t, ast.Name) and t.id == "__slots__" for t in targets):
                yield from slot_names(stmt.value)
        elif isinstance(stmt, ast.AnnAssign | ast.AugAssign):
            targets = [stmt.target]
            if (
                isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and stmt.target.id == "__slots__"
                and stmt.value is not None
            ):
                yield from slot_names(stmt.value)
        for target in targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    yield name.id


def project_names(sources: Iterable[Source]) -> frozenset[str]:
    """Every name the scanned files define (see the module's docstring)."""
    names: set[str] = set()
    for source in sources:
        names.update(module_bindings(source.tree.body))
        for node in ast.walk(source.tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                names.add(node.name)
            elif isinstance(node, ast.ClassDef):
                names.add(node.name)
                names.update(class_bindings(node))
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Call):
                call = attribute_call(node)
                if call is not None and call[2]:
                    names.add(call[1])
    return frozenset(names)


def seam_comments(text: str) -> dict[int, str]:
    """Line number -> the stripped reason of that line's ``# seam:`` comment."""
    found: dict[int, str] = {}
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    for token in tokens:
        if token.type != tokenize.COMMENT:
            continue
        match = SEAM_COMMENT.search(token.string)
        if match is not None:
            found[token.start[0]] = match.group("reason").strip()
    return found


@dataclass
class Finding:
    line: int
    end_line: int
    message: str


@dataclass
class FileChecker(ast.NodeVisitor):
    defined: frozenset[str]
    findings: list[Finding] = field(default_factory=list)

    def report(self, node: ast.AST, message: str) -> None:
        line = getattr(node, "lineno", 1)
        end_line = getattr(node, "end_lineno", None) or line
        self.findings.append(Finding(line, end_line, message))

    def attribute_message(self, receiver: ast.expr, name: str, spelled: str) -> str | None:
        """The violation of reading ``name`` on ``receiver``, or None."""
        chain = dotted(receiver)
        if chain is not None and (chain, name) in FRAME_ACCESS:
            return f"frame-access: {spelled} reaches into the interpreter's frames"
        if is_introspection(name) and (
            name in INTERPRETER_NAMES or name in INTROSPECTION_NAMES or name not in self.defined
        ):
            return f"introspection: {spelled} reads the interpreter's internals"
        if not is_private(name) or name in DOCUMENTED_NAMES:
            return None
        if chain is not None and (chain, name) in DOCUMENTED_MODULE_NAMES:
            return None
        if name in self.defined:
            return None
        if isinstance(receiver, ast.Name) and receiver.id in OWN_RECEIVERS:
            # Our own class never sets it: a private name inherited from another package's
            # class (a subclass of uvicorn.Server reading self._captured_signals).
            return (
                f"private-attribute: {spelled} is not the project's: a private name of "
                "another package's base class"
            )
        return f"private-attribute: {spelled} uses a private name that the project does not define"

    def visit_Attribute(self, node: ast.Attribute) -> None:
        message = self.attribute_message(
            node.value, node.attr, f"{describe(node.value)}.{node.attr}"
        )
        if message is not None:
            self.report(node, message)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "set_protocol":
            self.report(
                node,
                f"set-protocol: {describe(func.value)}.set_protocol(...) swaps another "
                "library's protocol out from under it",
            )
        call = attribute_call(node)
        if call is not None:
            receiver, name, _ = call
            spelled = f'{describe(node.func)}({describe(receiver)}, "{name}")'
            message = self.attribute_message(receiver, name, spelled)
            if message is None and name == "set_protocol":
                message = f"set-protocol: {spelled} reaches for set_protocol"
            if message is not None:
                self.report(node, message)
        elif isinstance(func, ast.Attribute) and func.attr in ATTRIBUTE_METHODS and node.args:
            # monkeypatch.setattr("package.module.name", value)
            target = constant_str(node.args[0])
            if target is not None and "." in target:
                self.check_dotted_target(node, target)
        self.generic_visit(node)

    def check_dotted_target(self, node: ast.Call, target: str) -> None:
        module, _, name = target.rpartition(".")
        if module.split(".")[0] in PROJECT_PACKAGES:
            return
        if (module, name) in FRAME_ACCESS:
            self.report(node, f'frame-access: "{target}" reaches into the interpreter\'s frames')
        elif private_component(module) is not None or (
            is_private(name) and name not in DOCUMENTED_NAMES
        ):
            self.report(node, f'private-attribute: "{target}" is a private name of {module}')
        elif undocumented(target) is not None:
            self.report(
                node, f'private-attribute: "{target}" is in {undocumented(target)}, undocumented'
            )

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name.split(".")[0] in PROJECT_PACKAGES:
                continue
            part = private_component(alias.name)
            if part is not None:
                self.report(node, f"private-import: import {alias.name} reaches a private module")
            elif undocumented(alias.name) is not None:
                self.report(node, f"private-import: import {alias.name}: {UNDOCUMENTED}")
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level > 0 or module == "__future__" or module.split(".")[0] in PROJECT_PACKAGES:
            return
        if private_component(module) is not None:
            self.report(node, f"private-import: from {module} import ... reaches a private module")
            return
        if undocumented(module) is not None:
            self.report(node, f"private-import: from {module} import ...: {UNDOCUMENTED}")
            return
        for alias in node.names:
            if undocumented(f"{module}.{alias.name}") is not None:
                self.report(
                    node, f"private-import: from {module} import {alias.name}: {UNDOCUMENTED}"
                )
            elif (module, alias.name) in FRAME_ACCESS:
                self.report(node, f"frame-access: from {module} import {alias.name}")
            elif is_private(alias.name) and (module, alias.name) not in DOCUMENTED_MODULE_NAMES:
                self.report(
                    node, f"private-import: from {module} import {alias.name} is a private name"
                )


def describe(node: ast.expr) -> str:
    """A short spelling of an expression for messages."""
    chain = dotted(node)
    if chain is not None:
        return chain
    if isinstance(node, ast.Call):
        return f"{describe(node.func)}({'...' if node.args or node.keywords else ''})"
    if isinstance(node, ast.Attribute):
        return f"{describe(node.value)}.{node.attr}"
    return "(...)"


def load(path: Path, display: str) -> Source | Violation:
    text = path.read_text(encoding="utf-8")
    try:
        tree = ast.parse(text, filename=display)
    except SyntaxError as error:
        return Violation(display, error.lineno or 1, f"syntax-error: cannot check: {error.msg}")
    return Source(display, text, tree)


def check_sources(sources: Sequence[Source]) -> list[Violation]:
    defined = project_names(sources)
    violations: list[Violation] = []
    for source in sources:
        checker = FileChecker(defined)
        checker.visit(source.tree)
        seams = seam_comments(source.text)
        used: set[int] = set()
        for finding in checker.findings:
            lines = range(finding.line, finding.end_line + 1)
            excused = [line for line in lines if seams.get(line)]
            if excused:
                used.update(excused)
            else:
                violations.append(Violation(source.path, finding.line, finding.message))
        for line, reason in seams.items():
            if not reason:
                violations.append(
                    Violation(source.path, line, "seam-comment: # seam: needs a reason")
                )
            elif line not in used:
                violations.append(
                    Violation(source.path, line, "seam-comment: # seam: excuses nothing here")
                )
    return sorted(violations)


def check(paths: Iterable[Path | str], root: Path | None = None) -> list[Violation]:
    """Check the files together (the project's names are those they define).

    Paths are reported relative to ``root`` when given. Files missing from the disk (being
    moved or deleted) are skipped."""
    sources: list[Source] = []
    violations: list[Violation] = []
    for entry in paths:
        path = Path(entry)
        full = root / path if root is not None and not path.is_absolute() else path
        display = path.as_posix()
        if root is not None and full.is_absolute():
            try:
                display = full.relative_to(root).as_posix()
            except ValueError:
                display = full.as_posix()
        try:
            loaded = load(full, display)
        except FileNotFoundError:
            continue
        if isinstance(loaded, Violation):
            violations.append(loaded)
        else:
            sources.append(loaded)
    return sorted(violations + check_sources(sources))
