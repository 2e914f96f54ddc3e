"""What each strategy adds to a step: inner calls, latency and tokens, with simulated upstreams."""
