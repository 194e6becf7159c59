"""Interlock: a protocol gateway for agent traffic."""

__version__ = "0.1.0"
