"""The `kbert` command line: fine-tune, evaluate and predict."""
