"""Parallel execution: the ordered runner shared by the executors, thread and process executors, AUTOTUNE."""
