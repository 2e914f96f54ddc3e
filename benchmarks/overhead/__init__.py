"""What the gateway adds to a chat completion: latency, time to first token, throughput, memory.

The same load goes straight to a fake upstream, through Tandem and through LiteLLM's proxy, in
one run; see README.md in this folder for the method and the figures.
"""
