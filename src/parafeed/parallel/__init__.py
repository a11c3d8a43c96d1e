"""Parallel execution: the ordered map runner and the executors behind one contract (threads, worker processes with
shared memory, Ray actors), AUTOTUNE, and the Ray input workers that ``offload`` runs pipelines on."""
