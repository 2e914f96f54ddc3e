"""Privacy detection quality and speed on a generated, labelled corpus."""
