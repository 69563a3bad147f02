"""Property-based (hypothesis) fuzzing: hostile servers and mutated recordings must always end in a report."""
