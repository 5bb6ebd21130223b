"""What a notebook may use: the modules and names the rules allow, the few special names and
attributes of everyday code, and the ready-made pieces the page forbids. Data only; how a chain is
resolved against these is :mod:`course.rules.resolve`."""
from __future__ import annotations

import functools

FORBIDDEN_NAMES = {
    "scaled_dot_product_attention": "F.scaled_dot_product_attention",
    "multi_head_attention_forward": "F.multi_head_attention_forward",
    "MultiheadAttention": "nn.MultiheadAttention",
    "Transformer": "nn.Transformer",
    "TransformerEncoder": "nn.TransformerEncoder",
    "TransformerEncoderLayer": "nn.TransformerEncoderLayer",
    "TransformerDecoder": "nn.TransformerDecoder",
    "TransformerDecoderLayer": "nn.TransformerDecoderLayer",
}
# torch's own kernels behind those pieces, by the words in their names (for the runtime watch)
KERNEL_WORDS = ("scaled_dot_product", "multi_head_attention", "transformer_encoder", "transformer_decoder",
                "flash_attention", "efficient_attention", "cudnn_attention", "triton_scaled_dot",
                "flex_attention")


@functools.lru_cache(maxsize=4096)
def forbidden_word(word: str) -> str | None:
    """The forbidden piece ``word`` names (also torch's private kernels behind them). Remembered: the
    runtime watch asks it of every torch call the notebook makes while a check runs."""
    if word in FORBIDDEN_NAMES:
        return FORBIDDEN_NAMES[word]
    if any(k in word for k in KERNEL_WORDS):
        return word
    return None


ALLOWED_MODULES = frozenset({
    # PyTorch: tensors, layers, initialisation, optimisers, autograd, data, devices
    "torch", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.nn.utils", "torch.nn.parameter",
    "torch.optim", "torch.optim.lr_scheduler", "torch.linalg", "torch.special", "torch.fft",
    "torch.autograd", "torch.autograd.functional", "torch.func", "torch.random", "torch.distributions",
    "torch.utils", "torch.utils.data", "torch.testing", "torch.cuda", "torch.mps", "torch.amp",
    "torch.backends", "torch.backends.mps", "torch.backends.cuda", "torch.backends.cudnn",
    # Python's and the notebook's usual companions
    "math", "cmath", "random", "time", "datetime", "statistics", "itertools", "functools", "operator",
    "collections", "collections.abc", "dataclasses", "typing", "enum", "abc", "copy", "types",
    "re", "json", "textwrap", "pprint", "warnings", "heapq", "bisect", "contextlib", "__future__",
    "numpy", "numpy.random", "numpy.linalg", "numpy.fft",
    "matplotlib", "matplotlib.pyplot", "matplotlib.ticker", "matplotlib.colors", "matplotlib.cm",
    "tqdm", "tqdm.auto", "tqdm.notebook", "IPython.display",
    "google.colab", "google.colab.drive", "google.colab.files",     # on Colab (not there when grading)
    # the course's own public modules (not the grading machinery: handles, serve, wire, rules, ...)
    "course", "course.stories", "course.training", "course.data", "course.plots", "course.nets",
    "course.two_sentences", "course.tinydenoiser", "course.tinydenoiser_curve",
})
# modules of which only these names are allowed, or all public names but these
ONLY_NAMES = {"types": {"SimpleNamespace"}}
DENIED_NAMES = {"operator": {"attrgetter", "methodcaller"},            # attribute access by computed names
                "functools": {"update_wrapper"},                        # copies attributes named in strings
                "typing": {"get_type_hints", "ForwardRef"}}             # evaluate code in strings
# Loaders: what they read may run code (a pickle holds any object, a function of torch's included)
# that no rule has read. Not a way around the rules: their modules are machinery, and the loaders of
# allowed modules are not allowed either (torch.load, even with weights_only=True, and numpy.load).
LOADER_MODULES = ("pickle", "_pickle", "pickletools", "marshal", "shelve", "dill", "joblib", "cloudpickle",
                  "copyreg", "torch.serialization", "torch.utils.model_zoo")
LOADERS = ("torch.load", "numpy.load")
# modules whose use can change the graded code from anywhere (not only where it is reached)
MACHINERY = {"sys", "builtins", "importlib", "gc", "ctypes", "inspect", "types", "autograder",
             "course.rules", "course.serve", "course.handles", "course.wire", *LOADER_MODULES,
             *(f"{m}.{n}" for m, names in DENIED_NAMES.items() for n in names)}
# where torch's machinery lives: objects from these modules are not allowed wherever they are reached
DENIED_ORIGINS = ("torch.overrides", "torch.jit", "torch.library", "torch.fx", "torch._dynamo",
                  "torch.compiler", "torch.export", "torch.hub", "torch.package", "torch._ops",
                  "torch._higher_order_ops", "torch._utils_internal", "torch.utils.cpp_extension",
                  "torch.utils._python_dispatch", "torch._C._functorch", "torch.ops", "torch.classes")
# torch.nn.attention holds ready-made attention (flex_attention, sdpa_kernel): a forbidden piece
PIECE_ORIGINS = ("torch.nn.attention", "torch.nn.modules.transformer")
# the names torch._C's classes may have in a notebook's code (the rest: DisableTorchFunction, ...)
C_CLASSES_OK = {"Generator", "LinAlgError", "Size", "dtype", "device", "finfo", "iinfo", "layout",
                "memory_format"}

DUNDER_ATTRIBUTES = {"__init__", "__name__", "__qualname__", "__doc__", "__module__", "__version__",
                     "__file__"}
DUNDER_NAMES = {"__name__", "__doc__", "__debug__", "__file__"}
SPECIAL_METHODS = {
    "__init__", "__post_init__", "__call__", "__repr__", "__str__", "__format__", "__len__", "__iter__",
    "__next__", "__reversed__", "__getitem__", "__setitem__", "__delitem__", "__contains__", "__enter__",
    "__exit__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__bool__",
    "__add__", "__radd__", "__iadd__", "__sub__", "__rsub__", "__isub__", "__mul__", "__rmul__",
    "__imul__", "__truediv__", "__rtruediv__", "__floordiv__", "__mod__", "__pow__", "__matmul__",
    "__rmatmul__", "__neg__", "__pos__", "__abs__", "__int__", "__float__", "__index__", "__slots__",
}
# public-looking attributes of the interpreter's own objects (frames, generators, tracebacks, code)
INTERNALS = {"gi_frame", "gi_code", "gi_yieldfrom", "cr_frame", "cr_code", "cr_await", "ag_frame",
             "ag_code", "ag_await", "f_back", "f_globals", "f_locals", "f_builtins", "f_code", "f_trace",
             "tb_frame", "tb_next", "co_code", "co_consts", "co_names"}
NAMEDTUPLE = {"_replace", "_asdict", "_fields", "_make"}      # public API with an underscore
CODE_FROM_STRINGS = {"exec", "eval", "compile"}
NAMESPACES = {"globals", "locals", "vars"}
ATTRIBUTE_BUILTINS = {"getattr", "setattr", "hasattr", "delattr"}
MAY_SHOW_MODULES = {"help", "dir", "print"}                  # a module as their argument is fine
IPYTHON_NAMES = {"get_ipython", "display", "In", "Out"}
MAGIC_METHODS = {"run_line_magic", "run_cell_magic", "system", "getoutput"}
# names a notebook uses without importing them (when nothing in it binds them)
CONVENTIONAL = {"torch": "torch", "nn": "torch.nn", "F": "torch.nn.functional", "np": "numpy",
                "math": "math", "plt": "matplotlib.pyplot"}
