"""Interlock."""
