"""Where a Python test file's tests are, for placing canaries among them (canary-sites.ts).

Run by the runner on the host, before the sandbox starts, on the service's own test files:
`python3 -I -S test-sites.py < file.py`. Prints JSON: each test function or method pytest
would collect (module-level `test*` functions, `test*` methods of `Test*` classes and of
unittest.TestCase subclasses), with its first line (decorators included), last line,
column, class and whether that class marks its methods, and the unittest assertion methods
the file calls; every test function's name, nested ones too; the test classes' lines;
and how the file names unittest's TestCase, if it imports it.
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


def main():
    source = sys.stdin.read()
    try:
        tree = ast.parse(source)
    except SyntaxError as err:
        print(json.dumps({"sites": [], "classes": [], "names": [], "test_case": None, "assert_methods": [], "error": str(err)}))
        return
    sites = []
    classes = []
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
    methods = set()
    # Every test function's name, nested ones too: a canary is never named like one of them.
    names = sorted({n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test")})
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if isinstance(owner, ast.Name) and owner.id == "self" and node.func.attr.startswith("assert"):
                methods.add(node.func.attr)
    print(json.dumps({"sites": sites, "classes": classes, "names": names, "test_case": test_case, "assert_methods": sorted(methods), "error": None}))


main()
