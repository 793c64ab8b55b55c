"""Catalog errors: one hierarchy, all `ValueError`s so callers may treat them as bad input."""

from __future__ import annotations


class CatalogError(ValueError):
    """A catalog lookup or configuration could not be answered."""


class UnknownVolumeType(CatalogError):
    """The EBS volume type is not one the catalog knows (gp2, gp3, io1, io2, st1, sc1)."""


class UnknownInstanceType(CatalogError):
    """The EC2 instance type is not in the built-in catalog nor in the override file."""
