"""Where a Python test file's tests are, for placing canaries among them (canary-sites.ts).

Run by the runner on the host, before the sandbox starts, on the service's own test files:
`python3 -I -S test-sites.py < file.py`. Prints JSON: each test function or method pytest
would collect (module-level `test*` functions, `test*` methods of `Test*` classes and of
unittest.TestCase subclasses), with its first line (decorators included), last line,
column, class and whether that class marks its methods, and the unittest assertion methods
the file calls; every test function's name, nested ones too; the test classes' lines;
and how the file names unittest's TestCase, if it imports it. And the calls of module-level
code the tests' equality assertions (`assert call == expected`, `self.assertEqual(call,
expected)`) compare with an expected value, for canaries that make them again.
"""
import ast
import json
import sys


def is_unittest_class(node):
    for base in node.bases:
        name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
        if name in ("TestCase", "IsolatedAsyncioTestCase"):
            return True
    return False


def marks_its_methods(node):
    """Whether the class does something to every method that a canary method would not stand:
    a decorator (a mark, `mock.patch` adding an argument, `skipIf`, a parametrization the
    methods must take), a `pytestmark` or `__test__` of its own, or an `__init__` (pytest does
    not collect the class)."""
    if node.decorator_list:
        return True
    for item in node.body:
        if isinstance(item, ast.FunctionDef) and item.name == "__init__":
            return True
        targets = item.targets if isinstance(item, ast.Assign) else [item.target] if isinstance(item, (ast.AnnAssign, ast.AugAssign)) else []
        if any(isinstance(t, ast.Name) and t.id in ("pytestmark", "__test__") for t in targets):
            return True
    return False


def site(fn, cls, unittest_class, marked):
    first = min([fn.lineno] + [d.lineno for d in fn.decorator_list])
    return {
        "name": fn.name,
        "line": first,
        "end_line": fn.end_lineno,
        "col": fn.col_offset,
        "cls": cls,
        "unittest": unittest_class,
        "marked": marked,
        "params": [a.arg for a in fn.args.args],
    }


MAX_CALLS = 6
# What a call a canary makes again may be built of: names, attributes, calls and literals, never
# a lambda, a comprehension, an assignment expression, an await or a yield.
PLAIN = (ast.Call, ast.Attribute, ast.Name, ast.Constant, ast.List, ast.Tuple, ast.Dict, ast.Set, ast.Subscript, ast.Slice,
         ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.keyword, ast.Starred, ast.JoinedStr, ast.FormattedValue,
         ast.Load, ast.operator, ast.unaryop, ast.boolop, ast.cmpop, ast.expr_context)


def module_level_names(tree):
    """Names the module binds at its top level (imports, functions, classes, assignments) and
    nothing rebinds: `global` anywhere makes a name a function's to change."""
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names if a.name != "*")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            names.add(node.target.id)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            names.difference_update(node.names)
    return names


def local_names(fn):
    """Every name the test function binds anywhere in it (its parameters included)."""
    args = fn.args
    names = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    names.update(a.arg for a in (args.vararg, args.kwarg) if a is not None)
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not fn:
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return names


def expected_kind(node):
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return "string"
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return "number"
    return "other"


def calls_of(source, tree, functions):
    """The calls the tests compare with an expected value, naming only module-level names."""
    module = module_level_names(tree)
    found = {}
    for fn in functions:
        allowed = module - local_names(fn)
        self_name = fn.args.args[0].arg if fn.args.args else None
        for node in ast.walk(fn):
            pair = None
            if isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare) and len(node.test.ops) == 1 and isinstance(node.test.ops[0], ast.Eq):
                pair = (node.test.left, node.test.comparators[0])
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("assertEqual", "assertEquals")
                  and isinstance(node.func.value, ast.Name) and node.func.value.id == self_name and len(node.args) >= 2):
                pair = (node.args[0], node.args[1])
            if pair is None or not isinstance(pair[0], ast.Call):
                continue
            parts = list(ast.walk(pair[0]))
            if not all(isinstance(p, PLAIN) for p in parts) or any(isinstance(p, ast.Name) and p.id not in allowed for p in parts):
                continue
            text = ast.get_source_segment(source, pair[0])
            if text and "\n" not in text and len(text) <= 200 and len(found) < MAX_CALLS:
                found.setdefault(text, {"text": text, "expected": expected_kind(pair[1])})
    return list(found.values())


def main():
    source = sys.stdin.read()
    try:
        tree = ast.parse(source)
    except SyntaxError as err:
        print(json.dumps({"sites": [], "classes": [], "names": [], "test_case": None, "assert_methods": [], "calls": [], "class_lines": [], "module_marked": False, "error": str(err)}))
        return
    sites = []
    classes = []
    functions = []
    test_case = None
    for node in tree.body:
        if isinstance(node, ast.Import) and any(a.name == "unittest" and a.asname is None for a in node.names):
            test_case = test_case or "unittest.TestCase"
        elif isinstance(node, ast.ImportFrom) and node.module == "unittest" and node.level == 0:
            for alias in node.names:
                if alias.name == "TestCase":
                    test_case = alias.asname or "TestCase"
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            sites.append(site(node, None, False, False))
            functions.append(node)
        elif isinstance(node, ast.ClassDef):
            unittest_class = is_unittest_class(node)
            if not (unittest_class or node.name.startswith("Test")):
                continue
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            classes.append({"name": node.name, "line": first, "end_line": node.end_lineno, "col": node.col_offset, "unittest": unittest_class})
            marked = marks_its_methods(node)
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith("test"):
                    sites.append(site(item, node.name, unittest_class, marked))
                    functions.append(item)
    methods = set()
    # Every test function's name, nested ones too: a canary is never named like one of them.
    names = sorted({n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test")})
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if isinstance(owner, ast.Name) and owner.id == "self" and node.func.attr.startswith("assert"):
                methods.add(node.func.attr)
    # Where any class starts: a class after the last test may hold tests of its own (a TestCase of a base class of the file's).
    class_lines = [min([n.lineno] + [d.lineno for d in n.decorator_list]) for n in tree.body if isinstance(n, ast.ClassDef)]
    # A module that marks every test or sets them up (`pytestmark`, `setUpModule`): a canary in a class of its own would not share their fate.
    module_marked = any(
        (isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in n.targets))
        or (isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name) and n.target.id == "pytestmark")
        or (isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name in ("setUpModule", "tearDownModule"))
        for n in tree.body
    )
    print(json.dumps({"sites": sites, "classes": classes, "names": names, "test_case": test_case, "assert_methods": sorted(methods),
                      "calls": calls_of(source, tree, functions), "class_lines": class_lines, "module_marked": module_marked, "error": None}))


main()
