"""Fuzzing the whole pipeline with mutated policy trees (see test_fuzz_pipeline)."""
