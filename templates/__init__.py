"""Jinja2 templates, installed as the package `digest.templates`."""
