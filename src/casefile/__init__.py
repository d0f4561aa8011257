"""Casefile: a legal case-management service."""

__version__ = "0.2.0"
