"""Constrained value types shared by the policy models: names and quantities."""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Annotated

from pydantic import AfterValidator, BeforeValidator, Field, PlainSerializer, WithJsonSchema

from compiler.names import DNS_SUBDOMAIN_MAX, DNS_SUBDOMAIN_PATTERN, is_dns_subdomain
from compiler.quantity import QuantityError, parse_quantity

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def normalise_name(raw: str) -> str:
    """The canonical form of a name: lower case, `_` and spaces become `-`."""
    return raw.strip().lower().replace("_", "-").replace(" ", "-")


def _dns_label(value: str) -> str:
    name = normalise_name(value)
    if len(name) > 63 or not _DNS_LABEL.match(name):
        raise ValueError(
            f"{value!r} is not a DNS-1123 label (lower-case letters, digits and '-', "
            "starting and ending with a letter or digit, at most 63 characters)"
        )
    return name


def _quantity(value: object) -> Fraction:
    if isinstance(value, bool):
        raise ValueError("expected a quantity such as 200Gi or 24, not a boolean")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        raise ValueError(f'write {value} as a quoted quantity string, e.g. "{value}"')
    if not isinstance(value, str):
        raise ValueError("expected a quantity such as 200Gi or 24")
    try:
        return parse_quantity(value)
    except QuantityError as error:
        raise ValueError(str(error)) from None


def _non_negative(value: Fraction) -> Fraction:
    if value < 0:
        raise ValueError("must not be negative")
    return value


MigProfileName = Annotated[str, Field(pattern=r"^[1-7]g\.[0-9]+gb(\+me)?$")]
"""A MIG profile as the DRA driver publishes and mig-parted names it (`3g.40gb`, `1g.10gb+me`)."""

Name = Annotated[str, Field(min_length=1, max_length=253), AfterValidator(_dns_label)]
"""A DNS-1123 label, normalised (ML_Research -> ml-research)."""


def _node_name(value: str) -> str:
    if not is_dns_subdomain(value):
        raise ValueError(
            f"{value!r} is not a node name: a DNS-1123 subdomain (lower-case letters, digits, "
            "'-' and '.', each dot-separated part starting and ending with a letter or digit)"
        )
    return value


NodeName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=DNS_SUBDOMAIN_MAX,
        json_schema_extra={"pattern": DNS_SUBDOMAIN_PATTERN},
        examples=["gke-prod-a100-pool-1-x7kq"],
    ),
    AfterValidator(_node_name),
]
"""A Kubernetes node's name as the cluster reports it (a DNS-1123 subdomain of up to 253
characters), never normalised: it names a node that exists."""

Quantity = Annotated[
    Fraction,
    BeforeValidator(_quantity),
    AfterValidator(_non_negative),
    PlainSerializer(lambda q: str(q), return_type=str),
    WithJsonSchema(
        {
            # one schema of two types, not an anyOf: `minimum` holds for numbers and `pattern`
            # for strings, so an editor reports the broken rule, not "matches no alternative"
            "type": ["integer", "string"],
            "minimum": 0,
            "pattern": r"^[0-9.]+([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)?$",
            "description": "a Kubernetes quantity, e.g. 200Gi, 2Ti, 24, 500m",
            # yaml-language-server and VS Code show this instead of the regular expression
            "patternErrorMessage": "not a Kubernetes quantity: write e.g. 200Gi, 2Ti, 24 or 500m",
        }
    ),
]
"""A non-negative Kubernetes quantity ("2Ti", "200Gi", "24", "500m"), exact."""
