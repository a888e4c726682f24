"""What many test modules share: the fake model server, session builders, harnesses, Pilot helpers."""
