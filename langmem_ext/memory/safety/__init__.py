"""Safety facts: what a text states about the profile's safety fields, and their links."""
