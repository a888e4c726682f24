"""The app's widgets, one per module: the session tree, the chat, the "what the model sees" panel, the composer."""
