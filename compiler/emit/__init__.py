"""Emit: turn the resolved fleet and its plans into rendered manifests.

The package imports none of its modules: the process that writes out/ needs only the
fleet-wide ones (compiler.emit.assemble) when the clusters are rendered elsewhere.
"""
