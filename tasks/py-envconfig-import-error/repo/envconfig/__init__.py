"""Typed settings from environment variables."""
