"""Load: read policy files into plain data that remembers where every value came from."""

from compiler.load.document import SourceDocument
from compiler.load.loader import load_policies

__all__ = ["SourceDocument", "load_policies"]
