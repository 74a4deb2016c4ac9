"""The server's web layer: what it accepts from browsers and other sites."""
