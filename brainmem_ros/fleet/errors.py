"""Errors of the fleet tier, all under :class:`brainmem_ros.errors.BrainMemError`."""

from __future__ import annotations

from brainmem_ros.errors import BrainMemError


class FleetError(BrainMemError):
    """Base class of the fleet tier's errors."""


class FleetUnavailableError(FleetError):
    """The fleet server cannot be reached (down, refused, timed out)."""


class FleetDeniedError(FleetError):
    """The fleet server refused a statement (row-level security, missing grant)."""


class FleetSchemaError(FleetError):
    """The fleet database has an unknown (newer) schema, or another vector dimension."""


class CredentialsError(FleetError):
    """The credentials file is missing, unreadable or readable by other users."""


class LocalServerError(FleetError):
    """The bundled PostgreSQL could not be initialised or started."""
