"""What a dataclass field means: the attribute docstring under it in the class body.

A parameter field is documented by the string that follows it, the form Sphinx autodoc,
mkdocstrings and editors (hover) read for attributes::

    lookahead_time_s: float = spec(1.0, unit="s", gt=0, le=DRIVER_TIME_MAX_S)
    \"\"\"t_s of 004 eq. 6 (smaller: aggressive)\"\"\"

Python keeps no such string at run time, so :func:`field_docs` reads it from the class's source.
A class without source (built by ``make_dataclass``, or installed without its ``.py``) has none;
its fields carry ``spec(doc=...)`` instead.
"""
from __future__ import annotations

import ast
import functools
import inspect
import textwrap


@functools.lru_cache(maxsize=None)
def field_docs(cls: type) -> dict[str, str]:
    """{field name: its attribute docstring, white space folded} for ``cls`` and its bases."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__[:-1]):  # a subclass's docstring wins over its base's
        docs.update(_own_docs(klass))
    return docs


def _own_docs(klass: type) -> dict[str, str]:
    try:
        source = textwrap.dedent(inspect.getsource(klass))
    except (OSError, TypeError):  # no source file: built at run time, or only bytecode
        return {}
    body = ast.parse(source).body
    if not body or not isinstance(body[0], ast.ClassDef):
        return {}
    statements = body[0].body
    docs = {}
    for field, after in zip(statements, statements[1:]):
        if (isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name)
                and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)):
            docs[field.target.id] = " ".join(after.value.value.split())
    return docs
