"""The base layer: settings, the typed errors, token counting and process helpers."""
