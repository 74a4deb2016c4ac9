"""Sessions: the conversation manager, the session log, checkpointer threads and the flush."""
