"""Privacy: detect, control and measure what leaves for the cloud."""
