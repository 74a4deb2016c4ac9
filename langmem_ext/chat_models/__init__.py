"""Chat models: which model a command or the server uses, and the scripted offline model."""
