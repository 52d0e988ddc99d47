"""The evidence layer: a static scan of the code a student wrote, for reaches into the machinery.

The judge already decides every grade outside the student's process, so tampering inside the
kernel cannot turn a wrong answer into a right one. What tampering CAN still fake is data that the
kernel measures about itself (how many calls a function made, say). Code that could do that has
to reach into the interpreter, IPython or the libraries the probe uses, and that is visible in its
source. `scan` reads source with `ast` (it never runs it) and returns the reasons it found; the
judge then marks the exercise for manual grading, with the reasons, and does not change the score.
What the counters cannot see and the scan looks for instead is listed in docs/GRADING.md.
"""
import ast

# Modules whose import is a reach into the interpreter, the kernel or the process.
MACHINERY_MODULES = {
    "sys", "builtins", "ctypes", "gc", "inspect", "IPython", "ipykernel", "jupyter_client", "signal",
    "importlib", "types", "dis", "code", "codeop", "threading", "_thread", "atexit", "faulthandler",
    "traceback", "tracemalloc", "marshal", "pickle", "zmq", "asyncio", "multiprocessing", "subprocess",
    "grader", "nbgrader", "nbclient", "unittest",
    # threads and processes (work the probe's counters could miss), running code by module name,
    # reading source (a probe's hidden lines) while it runs
    "concurrent", "runpy", "pkgutil", "zipimport", "linecache", "tokenize", "pty", "sched",
}
CALLS = {"exec", "eval", "compile", "vars", "globals", "locals", "setattr", "delattr", "__import__",
         "get_ipython", "breakpoint", "getattr"}
# Names that are a reach wherever they appear, called or not (`f = setattr; f(torch, ...)`).
REACHING_NAMES = CALLS - {"vars", "locals", "getattr"}
ATTRIBUTES = {"__dict__", "__globals__", "__code__", "__builtins__", "__subclasses__", "__bases__",
              "__mro__", "__closure__", "__defaults__", "__kwdefaults__", "_getframe", "f_back",
              "f_globals", "f_locals", "f_builtins", "gi_frame", "tb_frame", "settrace", "setprofile",
              "kernel", "shell", "events", "input_transformers_post", "ast_transformers",
              "set_custom_exc", "run_cell", "do_execute", "register_magic_function", "excepthook",
              "__setattr__", "__delattr__", "__traceback__", "tb_next", "f_code", "co_filename", "co_code",
              # torch below its Python layer, and the modes that answer for every torch call
              "_C", "_python_dispatch", "overrides", "TorchFunctionMode", "TorchDispatchMode",
              "DisableTorchFunction", "DisableTorchFunctionSubclass", "_disable_profiler",
              # processes and threads
              "fork", "forkpty", "register_at_fork", "spawnv", "spawnl", "execv", "execl", "execve", "execvp",
              "Thread", "start_new_thread"}
# torch below its Python layer, and the modes that answer for every torch call
TORCH_INTERNALS = {"_C", "_python_dispatch", "overrides", "TorchFunctionMode", "TorchDispatchMode",
                   "DisableTorchFunction", "DisableTorchFunctionSubclass"}
# Attributes that are a reach on these modules only (`platform.system()` is not `os.system()`).
MODULE_ATTRIBUTES = {"os": {"system", "popen", "kill", "killpg", "_exit"}, "sys": {"modules"},
                     "torch": {"library", "overrides", "multiprocessing", "profiler"}}
NAMES = {"__builtins__", "get_ipython", "__loader__", "__spec__", "In", "Out", "_ih", "_oh", "_dh",
         "exit", "quit"}
DUNDER_HOOKS = {"__torch_function__", "__torch_dispatch__", "__instancecheck__", "__subclasscheck__",
                "__class_getitem__", "__init_subclass__", "__set_name__", "__getattribute__", "__del__"}
# Well-known module names: rebinding one, or setting an attribute on it, patches the library.
KNOWN_MODULES = {"torch", "nn", "F", "np", "numpy", "time", "math", "random", "os", "sys", "plt",
                 "matplotlib", "torchvision", "optim", "functional", "testing", "torchcourse", "builtins",
                 "IPython", "json", "io", "re", "functools", "itertools", "collections", "warnings"}


def _root_name(node):
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


class _Scanner(ast.NodeVisitor):
    def __init__(self, modules: set):
        self.modules = modules          # names bound to modules anywhere in the notebook
        self.reasons = []

    def visit(self, node):
        for child in ast.iter_child_nodes(node):   # remember who calls what, for _called
            child._course_parent = node
        return super().visit(node)

    @staticmethod
    def _called(node) -> bool:
        parent = getattr(node, "_course_parent", None)
        return isinstance(parent, ast.Call) and parent.func is node

    def flag(self, node, why):
        self.reasons.append(f"line {getattr(node, 'lineno', '?')}: {why}")

    def visit_Import(self, node):
        for alias in node.names:
            top = alias.name.split(".")[0]
            if top in MACHINERY_MODULES:
                self.flag(node, f"imports {alias.name}")
            bound = alias.asname or top
            if alias.asname and alias.asname in KNOWN_MODULES and alias.name.split(".")[-1] != alias.asname \
                    and not (alias.name, alias.asname) in {("numpy", "np"), ("torch.nn", "nn"),
                                                         ("torch.nn.functional", "F"), ("torch.optim", "optim"),
                                                         ("matplotlib.pyplot", "plt")}:
                self.flag(node, f"imports {alias.name} under the name {alias.asname}")
            self.modules.add(bound)

    def visit_ImportFrom(self, node):
        top = (node.module or "").split(".")[0]
        if top in MACHINERY_MODULES or node.level:
            self.flag(node, f"imports from {node.module or '.'}")
        if set((node.module or "").split(".")) & TORCH_INTERNALS:
            self.flag(node, f"imports from {node.module}")
        for alias in node.names:
            if alias.name in TORCH_INTERNALS:
                self.flag(node, f"imports {alias.name} from {node.module}")
            if alias.name == "*":
                self.flag(node, f"imports * from {node.module}")
            elif (alias.asname or alias.name) in KNOWN_MODULES and alias.name != (alias.asname or alias.name):
                self.flag(node, f"imports {alias.name} under the name {alias.asname}")
        self.generic_visit(node)

    def visit_Call(self, node):
        if isinstance(node.func, ast.Name) and node.func.id in CALLS:
            self.flag(node, f"calls {node.func.id}()")
        if isinstance(node.func, ast.Name) and node.func.id == "type" and len(node.args) == 3:
            self.flag(node, "builds a class with type() (three arguments)")
        self.generic_visit(node)

    def visit_Attribute(self, node):
        if node.attr in ATTRIBUTES:
            self.flag(node, f"uses .{node.attr}")
        elif node.attr in MODULE_ATTRIBUTES.get(_root_name(node), ()):
            self.flag(node, f"uses {_root_name(node)}.{node.attr}")
        self.generic_visit(node)

    def visit_Name(self, node):
        if node.id in NAMES:
            self.flag(node, f"uses {node.id}")
        if node.id in REACHING_NAMES and not self._called(node):
            self.flag(node, f"uses {node.id} without calling it")
        if isinstance(node.ctx, (ast.Store, ast.Del)) and node.id in KNOWN_MODULES | self.modules:
            self.flag(node, f"rebinds the module name {node.id}")

    def _targets(self, targets, node):
        for target in targets:
            for sub in ast.walk(target):
                if isinstance(sub, ast.Attribute) and isinstance(sub.ctx, (ast.Store, ast.Del)):
                    root = _root_name(sub)
                    if root in KNOWN_MODULES | self.modules:
                        self.flag(node, f"changes {ast.unparse(sub)}, an attribute of a module")

    def visit_Assign(self, node):
        self._targets(node.targets, node)
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        self._targets([node.target], node)
        self.generic_visit(node)

    def visit_AnnAssign(self, node):
        self._targets([node.target], node)
        self.generic_visit(node)

    def visit_Delete(self, node):
        self._targets(node.targets, node)
        self.generic_visit(node)

    def _define(self, node):
        if node.name in KNOWN_MODULES | self.modules:
            self.flag(node, f"defines {node.name}, the name of a module")
        if node.name in DUNDER_HOOKS:
            self.flag(node, f"defines {node.name}")
        self.generic_visit(node)

    visit_FunctionDef = visit_AsyncFunctionDef = _define

    def visit_ClassDef(self, node):
        for base in node.bases:
            if isinstance(base, ast.Attribute) and base.attr == "Tensor" or \
                    isinstance(base, ast.Name) and base.id == "Tensor":
                self.flag(node, f"subclasses {ast.unparse(base)}")
        for keyword in node.keywords:
            if keyword.arg == "metaclass":
                self.flag(node, "sets a metaclass")
        self._define(node)

    def visit_Global(self, node):
        for name in node.names:
            if name in KNOWN_MODULES | self.modules:
                self.flag(node, f"declares the module name {name} global")


def module_names(sources: list) -> set:
    """Names bound by `import` statements anywhere in these sources (the notebook's own modules)."""
    names = set()
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names |= {a.asname or a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                names |= {a.asname or a.name for a in node.names if a.name != "*"
                          and (node.module or "").split(".")[0] in ("torch", "numpy", "matplotlib")
                          and a.name[:1].islower() and a.name in KNOWN_MODULES}
    return names


def scan(source: str, modules: set = frozenset()) -> list:
    """Reasons to grade this code by hand (empty when none). IPython magics and shell escapes
    (lines starting with % or !) count as reaches too."""
    reasons = [f"line {i}: IPython magic or shell command" for i, line in enumerate(source.splitlines(), 1)
               if line.lstrip().startswith(("%", "!"))]
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return reasons   # it will not run either; nothing to flag
    scanner = _Scanner(set(modules))
    scanner.visit(tree)
    return reasons + scanner.reasons
