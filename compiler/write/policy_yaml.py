"""ruamel.yaml set up as gpufleet edits policy files (`gpufleet migrate`, `gpufleet inventory
import`): a round trip that keeps comments, quotes and the files' layout."""

from __future__ import annotations

from ruamel.yaml import YAML


def policy_yaml() -> YAML:
    """A round-trip YAML reader and writer with the policy files' indentation and width."""
    yaml = YAML(typ="rt")
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 100
    yaml.preserve_quotes = True
    return yaml
