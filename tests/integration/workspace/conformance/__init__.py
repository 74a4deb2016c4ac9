"""Conformance suite of the storage engines (see ``conftest.py``)."""
