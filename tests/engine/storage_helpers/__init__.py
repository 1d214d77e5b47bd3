"""Scripts the storage tests run as real child processes."""
