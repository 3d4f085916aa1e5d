"""The type stubs (.pyi) and the py.typed marker ship with the installed package and name what it has."""

import ast
import inspect
import pathlib

import spmv
from spmv import _core, _tools, generate

PACKAGE = pathlib.Path(spmv.__file__).parent


def _stub(name):
    path = PACKAGE / f"{name}.pyi"
    assert path.is_file(), f"{path} is not installed"
    return ast.parse(path.read_text())


def _top_level(tree):
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.ImportFrom) and node.level == 1:
            names.update(a.asname for a in node.names if a.asname)
    return names


def _functions(tree, cls=None):
    body = tree.body
    if cls is not None:
        body = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls).body
    return {n.name: n for n in body if isinstance(n, ast.FunctionDef)}


def _public(obj):
    return {n for n in vars(obj) if not n.startswith("_")}


def test_py_typed_marker_is_installed():
    assert (PACKAGE / "py.typed").is_file()


def test_extension_stub_names_every_function_and_class_of_the_extension():
    names = {n for n in dir(_core) if not n.startswith("_")}
    assert _top_level(_stub("_core")) == names


def test_extension_stub_methods_of_matrix_core():
    stub = _functions(_stub("_core"), "MatrixCore")
    assert {n for n in stub if not n.startswith("_")} == {n for n in dir(_core.MatrixCore) if not n.startswith("_")}


def test_package_stub_names_the_public_api():
    assert _top_level(_stub("__init__")) >= set(spmv.__all__) | {"__version__"}


def test_matrix_and_tools_stubs_name_every_public_member():
    tree = _stub("_matrix")
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Matrix")
    stub = _top_level(ast.Module(body=cls.body, type_ignores=[]))
    assert {n for n in stub if not n.startswith("_")} == _public(spmv.Matrix)
    assert {"__init__", "__matmul__", "__rmatmul__"} <= stub
    assert set(_functions(_stub("_tools"))) == {n for n, f in vars(_tools).items()
                                                if inspect.isfunction(f) and not n.startswith("_")
                                                and f.__module__ == _tools.__name__}


def test_generate_stub_matches_the_generator_registry():
    stub = _functions(_stub("generate"))
    for g in generate.generators():
        assert g["name"] in stub, g["name"]
        args = stub[g["name"]].args
        declared = {a.arg for a in args.args + args.kwonlyargs}
        assert declared == set(g["defaults"]) | {"dtype", "device", "algorithm", "options"}, g["name"]
        positional = [a.arg for a in args.args]
        assert positional == (list(g["defaults"]) if len(g["defaults"]) == 1 else []), g["name"]
    assert set(stub) == set(generate.__all__)
